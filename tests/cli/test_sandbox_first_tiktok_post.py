"""The embedded sandbox's first direct TikTok post (issue 29): `init --sandbox` connects a PRIVATE TikTok account,
to which a new (unaudited) TikTok app may direct-post as SELF_ONLY (content-sharing-guidelines: "Unaudited API
Clients can only post contents in SELF_ONLY viewership" and only to private accounts), so the post goes through,
with the `tiktok_self_only` warning saying only the creator sees it. A public account (the emulator's default for
an account made any other way) is refused at creation (tests/api/test_tiktok_privacy.py)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import invoke
from tests.media import corpus


def test_a_first_direct_post_to_the_sandbox_tiktok_account_succeeds_self_only(
    embedded, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(corpus.video("mp4"))
    choices = invoke("posts", "create", "Hello", "--to", "tiktok", "--media", str(clip), "--json")
    assert choices.code == 2 and "one of SELF_ONLY" in choices.err  # the new app may use only Only me here
    r = invoke(
        "posts",
        "create",
        "Hello",
        "--to",
        "tiktok",
        "--media",
        str(clip),
        "--tiktok-privacy",
        "SELF_ONLY",
        "--wait",
        "--timeout",
        "60",
        "--json",
    )
    assert r.code == 0, r.err
    (target,) = r.json()["targets"]
    assert target["status"] == "succeeded" and target["postUrl"] is None
    assert [w["code"] for w in target["warnings"]] == ["tiktok_self_only"]
    human = invoke("posts", "show", r.json()["id"])
    assert "tiktok_self_only" in human.out or "Only me" in human.out
