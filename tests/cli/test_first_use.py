"""A first-time user's walk through the CLI: refused inputs leave nothing behind, errors say what to do,
`--json` errors are JSON, retries and DST are explicit."""

from __future__ import annotations

import json

from tests.cli.conftest import invoke


def test_init_refused_password_leaves_data_dir_uninitialised(cli_env):
    r = invoke("init", "--password", "short", "--json")
    assert r.code == 1
    assert json.loads(r.err.strip().splitlines()[-1])["error"] == "invalid_option"
    r = invoke("init", "--email", "not-an-email", "--password", "long-enough-1")
    assert r.code == 1 and "email" in r.err
    # nothing was half-made: a correct init now succeeds without --force, and admin works
    r = invoke("init", "--password", "long-enough-1", "--json")
    assert r.code == 0, r.err
    assert invoke("admin", "session").code == 0


def test_json_usage_errors_are_json_on_stderr(embedded):
    r = invoke(
        "posts",
        "create",
        "gap",
        "--to",
        "facebook",
        "--at",
        "2027-03-28 02:30",
        "--tz",
        "Europe/Paris",
        "--json",
    )
    assert r.code == 2 and r.out == ""
    body = r.err_json()
    assert body["error"] == "usage_error" and "does not exist" in body["message"]
    assert set(body) == {"error", "message", "details", "status"}
    r = invoke("posts", "list", "--status", "bogus", "--json")
    assert r.code == 2 and r.err_json()["error"] == "usage_error"
    r = invoke("init", "--json")  # operator errors carry the same four fields
    assert r.code == 1 and set(r.err_json()) == {"error", "message", "details", "status"}


def _partial_post(embedded) -> str:  # type: ignore[no-untyped-def]
    invoke("admin", "plan", "GROWTH")
    retry_acc = invoke(
        "accounts", "add-sandbox", "linkedin", "--name", "Flaky LI", "--behaviour", "fail-retriable", "--json"
    ).json()["id"]
    perm_acc = invoke(
        "accounts", "add-sandbox", "facebook", "--name", "Dead FB", "--behaviour", "fail-permanent", "--json"
    ).json()["id"]
    r = invoke(
        "posts",
        "create",
        "mix",
        "--to",
        "linkedin",
        "--to",
        f"linkedin:{retry_acc}",
        "--to",
        f"facebook:{perm_acc}",
        "--wait",
        "--json",
        "--timeout",
        "60",
    )
    assert r.code == 1
    post = r.json()
    assert post["status"] == "partial"
    return str(post["id"])


def test_retry_twice_says_it_was_already_retried_and_who_sends_it(embedded):
    pid = _partial_post(embedded)
    first = invoke("posts", "retry", pid)
    assert first.code == 0 and first.out.startswith("Created ")
    assert "posts show" in first.err and "--wait" in first.err  # embedded: who will send the new post
    again = invoke("posts", "retry", pid)
    assert again.code == 0
    assert again.out.startswith("Already retried") and "nothing new was created" in again.out
    body = invoke("posts", "retry", pid, "--json").json()
    assert body["replayed"] is True and [t["failType"] for t in body["skipped"]] == [None, "permanent"]


def test_exhausted_retriable_failure_does_not_claim_it_will_be_retried(embedded):
    pid = _partial_post(embedded)
    post = invoke("posts", "show", pid, "--json").json()
    reason = next(t["failReason"] for t in post["targets"] if t["failType"] == "retriable")
    assert "gave up after" in reason
    assert "will be retried" not in reason


def test_ambiguous_autumn_wall_time_is_flagged(embedded):
    r = invoke(
        "posts",
        "create",
        "amb",
        "--to",
        "facebook",
        "--at",
        "2027-10-31 02:30",
        "--tz",
        "Europe/Paris",
        "--json",
    )
    assert r.code == 0, r.err
    assert r.json()["scheduledAt"].startswith("2027-10-31T00:30:00")  # the first 02:30 (CEST)
    assert "happens twice" in r.err and "2027-10-31T01:30:00Z" in r.err  # how to get the second one
    r = invoke(
        "posts", "create", "plain", "--to", "facebook", "--at", "2027-10-30 02:30", "--tz", "Europe/Paris"
    )
    assert r.code == 0 and "happens twice" not in r.err


def test_show_prints_each_failure_reason_in_full(embedded):
    pid = _partial_post(embedded)
    post = invoke("posts", "show", pid, "--json").json()
    r = invoke("posts", "show", pid)
    for t in post["targets"]:
        if t["failReason"]:
            assert t["failReason"] in r.out
