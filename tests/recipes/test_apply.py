"""plan and apply through the CLI against the embedded backend: idempotency, each kind of change, prune's
ownership rules, a shrinking series, one failing file among good ones, media uploaded once."""

from __future__ import annotations

import json
from pathlib import Path

from recipes.model import LABEL_KEY, LABEL_SET
from tests.media.corpus import truncated_jpeg
from tests.recipes.helpers import all_posts, entry, invoke, jpeg, recipe, set_posts, write


def folder_with_posts(tmp_path: Path, name: str = "content") -> Path:
    folder = tmp_path / name
    (folder / "media").mkdir(parents=True)
    (folder / "media" / "a.jpg").write_bytes(jpeg(1))
    (folder / "media" / "b.jpg").write_bytes(jpeg(2))
    write(
        folder,
        "launch.yaml",
        recipe(
            entry("launch", "2027-01-05 09:00", "Launch!", "media/a.jpg"),
            entry("teaser", "2027-01-03 18:00", "Soon", "media/b.jpg"),
            entry("plain", "2027-01-04 12:00", "No media"),
        ),
    )
    write(
        folder,
        "weekly.yaml",
        """
timezone: Europe/Paris
defaults:
  targets: [linkedin]
  media: media/a.jpg
posts:
  - id: tips
    content: "Tip #{n} of {total}"
    repeat: {every: week, on: [tue], times: ["10:00"], start: "2027-01-05", count: 4}
""",
    )
    return folder


def plan_json(folder: Path, *extra: str) -> dict:
    r = invoke("recipes", "plan", str(folder), "--json", *extra)
    assert r.code in (0, 2), r.err
    return r.json()


def test_applying_twice_creates_each_post_once(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with_posts(tmp_path)
    first = plan_json(folder)
    assert len(first["create"]) == 7 and not first["update"] and not first["cancel"] and not first["errors"]
    assert invoke("recipes", "plan", str(folder), "--detailed-exitcode").code == 2

    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0, r.err
    done = r.json()
    assert (
        done["summary"]["created"] == 7 and done["summary"]["mediaUploaded"] == 2
    )  # a.jpg used 5 times: once
    posts = set_posts("content")
    assert len(posts) == 7 and {p.status for p in posts} == {"scheduled"}
    launch = next(p for p in posts if p.labels[LABEL_KEY] == "content/launch.yaml#launch")
    assert launch.labels[LABEL_SET] == "content" and launch.content == "Launch!"
    assert launch.scheduled_at.startswith("2027-01-05T08:00:00")  # 09:00 in Paris
    assert launch.idempotency_key and launch.idempotency_key.startswith("recipe-")

    again = invoke("recipes", "apply", str(folder), "--json")
    assert again.code == 0, again.err
    s = again.json()["summary"]
    assert (s["created"], s["updated"], s["cancelled"], s["unchanged"], s["mediaUploaded"]) == (0, 0, 0, 7, 0)
    assert len(set_posts("content")) == 7
    assert invoke("recipes", "plan", str(folder), "--detailed-exitcode").code == 0
    # the whole library: one upload per distinct file, whatever the runs
    from socialpub_tui.client import connect

    with connect(worker=False) as client:
        assert len(list(client.iter_media())) == 2


def test_plan_shows_each_kind_of_change(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with_posts(tmp_path)
    assert invoke("recipes", "apply", str(folder)).code == 0
    ids = {p.labels[LABEL_KEY].partition("#")[2]: p.id for p in set_posts("content")}

    write(
        folder,
        "launch.yaml",
        recipe(
            entry("launch", "2027-01-05 09:00", "Launch day!", "media/a.jpg"),  # text
            entry("teaser", "2027-01-03 19:30", "Soon", "media/b.jpg"),  # time
            entry("plain", "2027-01-04 12:00", "No media", "media/b.jpg"),  # media
            entry("extra", "2027-01-06 08:00", "Added"),
        ),
    )  # added
    plan = plan_json(folder)
    assert [i["entry"] for i in plan["create"]] == ["extra"]
    updates = {i["entry"]: i for i in plan["update"]}
    assert {k: v["changes"] for k, v in updates.items()} == {
        "launch": ["content"],
        "teaser": ["scheduledAt"],
        "plain": ["mediaUrls"],
    }
    assert (
        updates["teaser"]["postId"] == ids["teaser"]
        and updates["teaser"]["scheduledAt"] == "2027-01-03T18:30:00Z"
    )
    assert len(plan["unchanged"]) == 4 and not plan["cancel"]

    # an image replaced in place (same name, new bytes) is a media change; removing an entry is a cancel with --prune
    (folder / "media" / "b.jpg").write_bytes(jpeg(9))
    write(
        folder,
        "launch.yaml",
        recipe(
            entry("launch", "2027-01-05 09:00", "Launch!", "media/a.jpg"),
            entry("teaser", "2027-01-03 18:00", "Soon", "media/b.jpg"),
        ),
    )
    plan = plan_json(folder)
    assert [(i["entry"], i["changes"]) for i in plan["update"]] == [("teaser", ["mediaUrls"])]
    assert not plan["cancel"]  # without --prune: vanished occurrences are only a notice
    pruned = plan_json(folder, "--prune")
    assert [(i["entry"], i["postId"]) for i in pruned["cancel"]] == [("plain", ids["plain"])]
    r = invoke("recipes", "plan", str(folder), "--prune")
    assert "plain" in r.out and "gone from the files" in r.out

    r = invoke("recipes", "apply", str(folder), "--prune", "--json")
    assert r.code == 0, r.err
    s = r.json()["summary"]
    assert (s["updated"], s["cancelled"], s["mediaUploaded"]) == (1, 1, 1)
    by_entry = {p.labels[LABEL_KEY].partition("#")[2]: p for p in set_posts("content")}
    assert by_entry["plain"].status == "cancelled"
    assert not plan_json(folder, "--prune")["update"]


def test_changed_targets_replace_the_post(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("one", "2027-02-01 10:00")))
    assert invoke("recipes", "apply", str(folder)).code == 0
    [old] = set_posts("content")
    write(folder, "a.yaml", recipe(entry("one", "2027-02-01 10:00", targets="[facebook]")))
    plan = plan_json(folder)
    assert plan["create"][0]["replaces"] == old.id and plan["create"][0]["changes"] == ["targets"]
    assert [(i["postId"], i["reason"]) for i in plan["cancel"]] == [(old.id, "targets_changed")]
    assert invoke("recipes", "apply", str(folder)).code == 0
    posts = {p.id: p for p in set_posts("content")}
    assert posts[old.id].status == "cancelled"
    [new] = [p for p in posts.values() if p.status == "scheduled"]
    assert [t.platform for t in new.targets] == ["facebook"] and new.idempotency_key.endswith("-1")
    assert not plan_json(folder)["create"]


def test_prune_never_touches_hand_made_posts_nor_another_folders(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    write(mine, "a.yaml", recipe(entry("x", "2027-02-01 10:00"), entry("y", "2027-02-02 10:00")))
    write(
        theirs, "a.yaml", recipe(entry("x", "2027-02-01 10:00"), entry("y", "2027-02-02 10:00"))
    )  # same keys
    assert invoke("recipes", "apply", str(mine)).code == 0
    assert invoke("recipes", "apply", str(theirs)).code == 0
    hand = invoke("posts", "create", "By hand", "--to", "facebook", "--at", "2027-02-01T10:00:00Z", "--json")
    assert hand.code == 0, hand.err

    write(mine, "a.yaml", recipe(entry("z", "2027-02-03 10:00")))  # x and y gone from this folder
    plan = plan_json(mine, "--prune")
    mine_ids = {p.id for p in set_posts("mine")}
    assert {i["postId"] for i in plan["cancel"]} == mine_ids and len(mine_ids) == 2
    r = invoke("recipes", "apply", str(mine), "--prune", "--json")
    assert r.code == 0, r.err
    assert r.json()["summary"]["cancelled"] == 2
    status = {p.id: p.status for p in all_posts()}
    assert status[hand.json()["id"]] == "scheduled"
    assert {status[p.id] for p in set_posts("theirs")} == {"scheduled"}
    assert sorted(p.status for p in set_posts("mine")) == ["cancelled", "cancelled", "scheduled"]

    # pruned then added back: a new post (a new generation of the key), the cancelled one stays cancelled
    write(mine, "a.yaml", recipe(entry("z", "2027-02-03 10:00"), entry("x", "2027-02-01 10:00")))
    assert [i["entry"] for i in plan_json(mine)["create"]] == ["x"]
    assert invoke("recipes", "apply", str(mine)).code == 0
    assert sorted(p.status for p in set_posts("mine")) == ["cancelled", "cancelled", "scheduled", "scheduled"]


def test_a_series_whose_count_shrinks(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    series = """
timezone: Europe/Paris
posts:
  - id: tips
    content: "Tip #{{n}}"
    targets: [facebook]
    repeat: {{every: week, on: [tue], times: ["09:00"], start: "2027-03-02", count: {count}}}
"""
    write(folder, "weekly.yaml", series.format(count=6))
    assert invoke("recipes", "apply", str(folder)).code == 0
    before = {p.labels[LABEL_KEY]: p.id for p in set_posts("content")}
    assert len(before) == 6
    write(folder, "weekly.yaml", series.format(count=4))
    plan = plan_json(folder, "--prune")
    assert [i["key"].rpartition("@")[2] for i in plan["cancel"]] == ["2027-03-30T09:00", "2027-04-06T09:00"]
    assert len(plan["unchanged"]) == 4 and not plan["create"] and not plan["update"]
    # the DST change of 2027-03-28 is crossed: 09:00 stays 09:00 local, its UTC time moves
    times = {i["key"].rpartition("@")[2]: i["scheduledAt"] for i in plan["unchanged"]}
    assert times["2027-03-23T09:00"] == "2027-03-23T08:00:00Z"
    assert invoke("recipes", "apply", str(folder), "--prune").code == 0
    after = {p.labels[LABEL_KEY]: (p.id, p.status) for p in set_posts("content")}
    assert sum(s == "scheduled" for _, s in after.values()) == 4
    assert all(after[k][0] == before[k] for k in after)  # the 4 kept are the same posts


def test_one_failing_file_leaves_the_others_applied(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    write(folder, "a-good.yaml", recipe(entry("one", "2027-02-01 10:00")))
    write(folder, "b-broken.yaml", "timezone: Europe/Paris\nposts:\n  - id: [oops\n")
    write(
        folder,
        "c-unknown-account.yaml",
        recipe(
            entry("two", "2027-02-02 10:00"),
            entry("three", "2027-02-03 10:00", targets="[{platform: facebook, channelId: acc_nope}]"),
        ),
    )
    write(folder, "d-good.yaml", recipe(entry("four", "2027-02-04 10:00")))
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 1
    out = r.json()
    assert out["summary"]["created"] == 2
    assert {f["file"]: f["status"] for f in out["files"]} == {
        "a-good.yaml": "applied",
        "b-broken.yaml": "invalid",
        "c-unknown-account.yaml": "invalid",
        "d-good.yaml": "applied",
    }
    assert out["summary"]["filesFailed"] == 2  # the broken YAML too
    assert {e["file"] for e in out["errors"]} == {"b-broken.yaml", "c-unknown-account.yaml"}
    assert sorted(p.labels[LABEL_KEY].partition("#")[2] for p in set_posts("content")) == ["four", "one"]
    human = invoke("recipes", "apply", str(folder))
    assert human.code == 1 and "c-unknown-account.yaml" in human.err and "acc_nope" in human.err


def test_dry_run_changes_nothing(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with_posts(tmp_path)
    r = invoke("recipes", "apply", str(folder), "--dry-run", "--json")
    assert r.code == 0 and len(r.json()["create"]) == 7
    dry = invoke("recipes", "apply", str(folder), "--dry-run").out
    assert "would create" in dry and "to would" not in dry
    assert set_posts("content") == []


def test_past_occurrences_are_never_created(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("old", "2020-01-01 10:00"), entry("new", "2027-01-01 10:00")))
    r = invoke("recipes", "plan", str(folder), "--json")
    assert [i["entry"] for i in r.json()["create"]] == ["new"]
    assert any("past" in n for n in r.json()["notices"])
    r = invoke("recipes", "apply", str(folder))
    assert r.code == 0 and "past" in r.err
    assert [p.labels[LABEL_KEY].partition("#")[2] for p in set_posts("content")] == ["new"]


def test_strict_makes_an_occurrence_skipped_as_past_an_error(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 33: a past time was a notice with exit 0, so a cron job saw success. `--strict` makes it an error
    (exit 1, code occurrence_in_past, at the entry's line); the rest is still applied."""
    folder = tmp_path / "content"
    write(folder, "a.yaml", recipe(entry("new", "2027-01-01 10:00"), entry("old", "2020-01-01 10:00")))
    r = invoke("recipes", "plan", str(folder), "--strict", "--json")
    assert r.code == 1, r.err
    (error,) = r.json()["errors"]
    assert error["code"] == "occurrence_in_past" and error["file"] == "a.yaml" and error["line"] == 7, error
    r = invoke("recipes", "plan", str(folder), "--strict")
    assert r.code == 1 and "a.yaml:7:0: a.yaml#old: its time 2020-01-01T09:00:00Z is past" in r.err, r.err
    r = invoke("recipes", "apply", str(folder), "--strict")
    assert r.code == 1 and "occurrence_in_past" not in r.out and "is past" in r.err, r.err + r.out
    assert "1 created" in r.out and "1 error(s) in applied files" in r.out, r.out
    assert [p.labels[LABEL_KEY].partition("#")[2] for p in set_posts("content")] == ["new"]
    assert invoke("recipes", "apply", str(folder)).code == 0  # without --strict: a notice, as before


def test_the_summary_counts_each_failed_file_once(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 33: four bad files read "4 file(s) failed; 3 file error(s)"."""
    folder = tmp_path / "content"
    write(folder, "good.yaml", recipe(entry("a", "2027-01-01 10:00")))
    write(folder, "broken1.yaml", "posts:\n  - id: x\n    content: [open\n")
    write(folder, "broken2.yaml", "posts: {\n")
    (folder / "media").mkdir()
    (folder / "media" / "fake.jpg").write_text("text, not a JPEG")
    write(folder, "fake.yaml", recipe(entry("b", "2027-01-01 10:00", media="media/fake.jpg")))
    r = invoke("recipes", "apply", str(folder))
    assert r.code == 1
    summary = r.out.strip().splitlines()[-1]
    assert "1 created" in summary and "; 3 file(s) failed (3 not valid: nothing applied)." in summary, summary
    assert "file error" not in summary
    assert invoke("recipes", "apply", str(folder), "--json").json()["summary"]["filesFailed"] == 3


def test_media_remembered_across_runs_and_uploaded_again_when_gone(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = folder_with_posts(tmp_path)
    assert invoke("recipes", "apply", str(folder)).code == 0
    state_file = tmp_path / "d" / "recipes" / "media-state.json"  # in the data dir (cli_env's)
    state = json.loads(state_file.read_text())["media"]
    assert len(state) == 2
    # a new entry naming a known file: no upload
    write(folder, "more.yaml", recipe(entry("more", "2027-03-01 10:00", media="media/a.jpg")))
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.json()["summary"]["mediaUploaded"] == 0 and r.json()["summary"]["created"] == 1
    # the remembered media deleted from the library (expired): uploaded again, the state follows
    from socialpub_tui.client import connect

    write(
        folder,
        "more.yaml",
        recipe(
            entry("more", "2027-03-01 10:00", media="media/a.jpg"),
            entry("another", "2027-03-02 10:00", media="media/b.jpg"),
        ),
    )
    b_key = next(v["key"] for v in state.values() if v["file"].endswith("b.jpg"))
    with connect(worker=False) as client:  # b.jpg's posts are cancelled so that its file can be deleted
        for p in set_posts("content"):
            if any(b_key in u for u in p.media_urls):
                client.cancel_post(p.id)
        client.delete_media(b_key)
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0, r.err
    assert r.json()["summary"]["mediaUploaded"] == 1
    new_state = json.loads(state_file.read_text())["media"]
    assert b_key not in {v["key"] for v in new_state.values()} and len(new_state) == 2


def test_plan_warns_when_the_free_publications_cannot_cover_the_creates(embedded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """No subscription: three free publications (spec). `plan` says so before `apply` stops at 402."""
    folder = folder_with_posts(tmp_path)  # 7 posts to create
    notices = plan_json(folder)["notices"]
    assert any(
        "3 free publication(s) left for 7 post(s)" in n and "subscription_required" in n for n in notices
    )
    small = tmp_path / "small"
    write(small, "one.yaml", recipe(entry("one", "2027-01-05 09:00", "Just one")))
    assert not any("free publication" in n for n in plan_json(small)["notices"])


def test_no_free_publication_notice_on_a_paid_plan(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert not any("free publication" in n for n in plan_json(folder_with_posts(tmp_path))["notices"])


def test_a_file_without_timezone_keeps_the_zone_its_posts_were_made_in(
    backend, tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A laptop in Paris applies a file without `timezone:`; cron or CI, in UTC, applies it again: no post moves."""
    from recipes.model import LABEL_ZONE

    folder = tmp_path / "nozone"
    write(folder, "r.yaml", "posts:\n" + entry("a", "2027-03-01 10:00") + entry("b", "2027-03-02 10:00"))
    monkeypatch.setenv("TZ", "Europe/Paris")
    assert invoke("recipes", "apply", str(folder)).code == 0
    made = {p.labels[LABEL_KEY]: p for p in set_posts("nozone")}
    assert {p.scheduled_at[:16] for p in made.values()} == {"2027-03-01T09:00", "2027-03-02T09:00"}
    assert {p.labels[LABEL_ZONE] for p in made.values()} == {"Europe/Paris"}

    monkeypatch.setenv("TZ", "UTC")
    plan = plan_json(folder)
    assert not plan["update"] and not plan["create"] and not plan["cancel"], plan
    assert any("r.yaml has no `timezone:`: read in Europe/Paris" in n for n in plan["notices"]), plan[
        "notices"
    ]
    write(
        folder,
        "r.yaml",
        "posts:\n"
        + entry("a", "2027-03-01 10:00")
        + entry("b", "2027-03-02 10:00")
        + entry("c", "2027-03-03 10:00"),
    )  # a new entry of that file: read in its zone too
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0 and r.json()["summary"]["created"] == 1 and r.json()["summary"]["updated"] == 0, r.out
    after = {p.labels[LABEL_KEY]: p.scheduled_at[:16] for p in set_posts("nozone")}
    assert after == {
        "nozone/r.yaml#a": "2027-03-01T09:00",
        "nozone/r.yaml#b": "2027-03-02T09:00",
        "nozone/r.yaml#c": "2027-03-03T09:00",
    }

    write(
        folder, "r.yaml", "timezone: UTC\nposts:\n" + entry("a", "2027-03-01 10:00")
    )  # said: the file decides
    moved = plan_json(folder)
    assert [i["key"] for i in moved["update"]] == ["nozone/r.yaml#a"], moved


def test_a_media_file_the_backend_refuses_is_named_in_the_files_error(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "badmedia"
    (folder / "media").mkdir(parents=True)
    (folder / "media" / "good.jpg").write_bytes(jpeg(1))
    (folder / "media" / "broken.jpg").write_bytes(
        truncated_jpeg()
    )  # a JPEG's head: only the backend can tell
    write(folder, "r.yaml", recipe(entry("a", "2027-03-01 10:00", "A", "[media/good.jpg, media/broken.jpg]")))
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 1
    (outcome,) = r.json()["files"]
    assert outcome["status"] == "failed" and "(broken.jpg)" in outcome["summary"], outcome
    assert set_posts("badmedia") == []


def test_plan_and_dry_run_say_what_apply_would_refuse_about_accounts(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "accounts"
    write(
        folder,
        "r.yaml",
        recipe(
            entry("a", "2027-03-01 10:00", targets="[{platform: facebook, channelId: acc_nope}]"),
            entry("b", "2027-03-02 10:00"),
        ),
    )
    for args in (("plan",), ("apply", "--dry-run")):
        r = invoke("recipes", *args, str(folder), "--json")
        assert r.code == 1, (args, r.out)
        (err,) = r.json()["errors"]
        assert (err["file"], err["code"]) == ("r.yaml", "channel_not_connected") and "acc_nope" in err[
            "message"
        ]
    assert invoke("recipes", "apply", str(folder)).code == 1  # as apply itself says
    assert set_posts("accounts") == []


def test_another_machines_uploads_are_neither_changes_nor_uploaded_again(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A laptop applies the folder, then CI (its own state file: none here) plans and applies the same folder
    against the same backend: the posts' media are found by the hash of the bytes sent (sourceSha256)."""
    folder = folder_with_posts(tmp_path)
    assert invoke("recipes", "apply", str(folder)).code == 0
    (tmp_path / "d" / "recipes" / "media-state.json").unlink()  # another machine: no memory of those uploads
    plan = plan_json(folder)
    assert not plan["update"] and not plan["create"], plan["update"]
    r = invoke("recipes", "apply", str(folder), "--json")
    s = r.json()["summary"]
    assert (s["updated"], s["mediaUploaded"], s["unchanged"]) == (0, 0, 7), s
    write(folder, "more.yaml", recipe(entry("more", "2027-03-01 10:00", media="media/b.jpg")))
    s = invoke("recipes", "apply", str(folder), "--json").json()["summary"]
    assert (s["created"], s["mediaUploaded"]) == (1, 0)  # b.jpg's upload by the first machine, reused


def test_a_key_taken_by_another_request_makes_a_fresh_generation(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A post created meanwhile with an occurrence's idempotencyKey but another body (another machine's apply of
    an older file, without the set's labels, so the plan did not see it): the API answers 409
    idempotency_key_reused, and apply creates the occurrence under the key's next generation."""
    from recipes.model import idempotency_key
    from socialpub_tui.client import connect

    folder = tmp_path / "one"
    (folder / "media").mkdir(parents=True)
    write(folder, "launch.yaml", recipe(entry("plain", "2027-01-04 12:00", "No media")))
    key = plan_json(folder)["create"][0]["key"]
    with connect(worker=False) as client:
        squatter = client.create_post(
            {
                "targets": ["linkedin"],
                "content": "an older text",
                "scheduledAt": "2027-01-04T11:00:00Z",
                "idempotencyKey": idempotency_key(key),
            }
        )
    r = invoke("recipes", "apply", str(folder), "--json")
    assert r.code == 0, r.err
    made = set_posts("one")
    assert len(made) == 1 and made[0].id != squatter.id
    assert made[0].idempotency_key == idempotency_key(key, 1) and made[0].content == "No media"
