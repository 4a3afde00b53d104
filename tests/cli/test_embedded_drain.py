"""Embedded: a post created without --wait is sent before the command exits, not left in `processing`."""

from __future__ import annotations

from tests.cli.conftest import invoke


def test_post_without_wait_is_sent_before_exit(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("posts", "create", "sent on exit", "--to", "facebook", "--to", "linkedin", "--json")
    assert r.code == 0, r.err
    post_id = r.json()["id"]
    shown = invoke("posts", "show", post_id, "--json").json()
    assert shown["status"] == "completed", shown
    assert all(t["status"] == "succeeded" and t["postUrl"] for t in shown["targets"])


def test_scheduled_post_does_not_hold_the_command(embedded) -> None:  # type: ignore[no-untyped-def]
    import time

    started = time.monotonic()
    r = invoke("posts", "create", "later", "--to", "facebook", "--at", "+2h", "--json")
    assert r.code == 0 and r.json()["status"] == "scheduled"
    assert time.monotonic() - started < 5
