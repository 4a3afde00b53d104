"""Issue 29's "Done when", as one story with the real commands and real processes: each network's emulator served by
`socialpub sandbox serve NETWORK` in its DEFAULT configuration — a new developer app: self-serve products only,
not audited, not verified, a Meta app in development mode — `socialpub serve` on a data dir whose media URL is
loopback, and a new user who:

1. runs `socialpub accounts doctor`, which says before any browser step what such apps imply;
2. connects one account per network (facebook, instagram, linkedin, tiktok, youtube) through the OAuth flow;
3. publishes one post with a video to all five, and each network answers as the real one would for a new app:
   posted (LinkedIn, Instagram: its Reel goes as bytes, no public URL needed), posted with a visible warning
   (YouTube locked private, Facebook's development mode), or refused in advance at creation with a reason that says
   what to do (TikTok: a new app may post only SELF_ONLY to a private account) — nothing published where it
   would fail;
4. an Instagram image on the loopback media URL is refused in advance (Meta fetches images from their URL).

The walk-through for users: docs/first-post.md. SQLite only (the data dir's own store), as test_live_story."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_live_story import NETWORKS, TEXT, Story, clip
from tests.media import corpus


@pytest.fixture
def new_apps_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every emulated app the default (a new one), socialpub configured for such apps (its defaults)."""
    monkeypatch.setenv("SOCIALPUB_SANDBOX_APPS", "{}")
    monkeypatch.setenv("SOCIALPUB_TIKTOK_AUDITED", "false")


pytestmark = pytest.mark.usefixtures("new_apps_env")


def targets_of(post: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["platform"]: t for t in post["targets"]}


def test_a_new_user_with_new_apps_publishes_a_video_to_five_networks(story: Story, tmp_path: Path) -> None:
    # 1. the doctor, before any browser step: no error (the apps are usable), each new app's limits as warnings
    doctor = story.run("accounts", "doctor", "--json")
    report = json.loads(doctor.stdout)
    assert report["ok"] is True
    codes = {n["platform"]: {f["code"] for f in n["findings"]} for n in report["networks"]}
    assert "meta_app_development_mode" in codes["facebook"]
    assert (
        "media_url_not_public" in codes["instagram"]
    )  # the loopback media host: images refused, videos as bytes
    assert "tiktok_not_audited" in codes["tiktok"]
    assert "youtube_not_audited" in codes["youtube"]
    human = story.run("accounts", "doctor").stdout
    assert "SOCIALPUB_FACEBOOK_APP_MODE=live" in human and "SOCIALPUB_MEDIA_URL" in human

    # 2. one account per network, through each new app's OAuth flow
    for n in NETWORKS:
        [acc] = story.connect(n)
        assert acc["platform"] == n and acc["kind"] == "live" and acc["status"] == "active", acc

    # 3. one post with a video to all five, from the loopback media host. TikTok refuses it in advance: a new
    # (unaudited) app may post only SELF_ONLY to a private account, and this creator's account is public. Nothing is
    # created, and the refusal says what to do; the post then goes to the four others.
    media = str(clip(tmp_path / "clip.mp4"))
    to = [a for n in NETWORKS for a in ("--to", n)]
    refused5 = story.run("posts", "create", TEXT, *to, "--media", media, "--json", ok=False)
    assert refused5.returncode != 0
    said = refused5.stdout + refused5.stderr
    assert "unaudited_client_can_only_post_to_private_accounts" in said, said
    assert "private" in said and "SELF_ONLY" in said, said  # what to do
    assert story.json("posts", "list") == []
    four = [n for n in NETWORKS if n != "tiktok"]
    to = [a for n in four for a in ("--to", n)]
    created = story.run("posts", "create", TEXT, *to, "--media", media, "--json", "--wait", ok=False)
    post = json.loads(created.stdout)
    got = targets_of(post)
    assert set(got) == set(four), got
    for n in four:  # posted, with a link
        assert got[n]["status"] == "succeeded" and str(got[n]["postUrl"]).startswith("https://"), got[n]
    warned = {n: [w["code"] for w in t["warnings"]] for n, t in got.items()}
    assert warned["youtube"] == ["youtube_private_lock"]  # a new Google project: locked private
    assert warned["facebook"] == [
        "facebook_development_mode"
    ]  # a Meta app in development mode: app roles only
    assert warned["instagram"] == [] and warned["linkedin"] == []
    assert "/reel/" in got["instagram"]["postUrl"]  # the Reel's bytes uploaded: no public URL needed
    # the warnings are visible to the user, in full, with what to do
    assert "SOCIALPUB_FACEBOOK_APP_MODE=live" in created.stderr and "youtube_private_lock" in created.stderr
    assert post["status"] == "completed" and created.returncode == 0

    # 4. an Instagram image on the loopback media host: refused in advance (Meta fetches images from their URL)
    image = tmp_path / "photo.jpg"
    image.write_bytes(corpus.jpeg(1080, 1080))
    refused = story.run(
        "posts", "create", "A photo", "--to", "instagram", "--media", str(image), "--json", ok=False
    )
    assert refused.returncode != 0
    problem = json.loads(refused.stdout or refused.stderr)
    text = json.dumps(problem)
    assert "media_url_not_public" in text and "SOCIALPUB_MEDIA_URL" in text, problem
    listed = story.json("posts", "list")
    assert [p["id"] for p in listed] == [post["id"]]  # nothing created for the refused one
