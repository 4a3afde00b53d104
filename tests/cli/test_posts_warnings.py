"""A target that went through not quite as asked (its `warnings`) as the CLI shows it: a new Google project's
YouTube upload, locked private (issue 29), with the embedded backend's sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import invoke
from tests.media import corpus


def test_create_wait_and_show_print_the_youtube_private_lock(embedded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(corpus.video("mp4"))
    r = invoke(
        "posts", "create", "Launch\nday", "--to", "youtube", "--media", str(clip), "--wait", "--timeout", "60"
    )
    assert r.code == 0, r.err
    assert "warning youtube_private_lock: YouTube locked the video private (asked: public)" in r.out
    post = invoke("posts", "list", "--json").json()
    pid = (post["items"] if isinstance(post, dict) else post)[0]["id"]
    shown = invoke("posts", "show", pid)
    assert "[warning: youtube_private_lock]" in shown.out
    assert "youtube_private_lock: YouTube locked the video private" in shown.out
    (target,) = invoke("posts", "show", pid, "--json").json()["targets"]
    assert target["status"] == "succeeded" and target["warnings"][0]["code"] == "youtube_private_lock"
