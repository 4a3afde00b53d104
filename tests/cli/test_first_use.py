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
    r = invoke("posts", "create", "gap", "--to", "facebook", "--at", "2027-03-28 02:30", "--tz", "Europe/Paris",
               "--json")
    assert r.code == 2 and r.out == ""
    body = r.err_json()
    assert body["error"] == "usage_error" and "does not exist" in body["message"]
    assert set(body) == {"error", "message", "details", "status"}
    r = invoke("posts", "list", "--status", "bogus", "--json")
    assert r.code == 2 and r.err_json()["error"] == "usage_error"
    r = invoke("init", "--json")  # operator errors carry the same four fields
    assert r.code == 1 and set(r.err_json()) == {"error", "message", "details", "status"}
