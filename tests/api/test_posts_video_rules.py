"""Each network's video rules (duration, size, dimensions, aspect, frame rate, codec: backend/networks/rules,
VideoLimits) are checked per target when a post is created or its media are edited, from what the probe read at
ingestion: a refusal is the spec's per-target shape, `video_out_of_range_for_target` with the rule and why."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.api.posts_support import fast, future, post, sandbox  # noqa: F401  (fixtures)
from tests.conftest import key_headers
from tests.media import corpus

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # (its TikTok posts are public)


def upload(client: Any, owner: Any, data: bytes) -> str:
    r = client.post(
        "/v1/media", json={"base64": base64.b64encode(data).decode()}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 201, r.text
    return str(r.json()["url"])


def refusals(r: Any) -> dict[str, tuple[str, str]]:
    assert r.status_code == 400 and r.json()["error"] == "invalid_targets", r.text
    return {d["platform"]: (d["error"], d.get("rule", "")) for d in r.json()["details"]}


ALL = ["facebook", "instagram", "linkedin", "tiktok", "youtube"]


def test_a_video_every_network_takes_is_accepted_everywhere(client, owner, sandbox, fast):  # noqa: F811
    url = upload(client, owner, corpus.video("mp4"))  # 360×640, 24 fps, 3 s, H.264
    post(client, owner, 202, targets=ALL, content="Launch", mediaUrls=[url])


def test_a_tiny_short_slow_video_is_refused_per_target_with_the_rule(client, owner, sandbox, fast):  # noqa: F811
    url = upload(client, owner, corpus.tiny_video())  # 64×48, 10 fps, 0.6 s
    r = post(client, owner, targets=ALL, content="Launch", mediaUrls=[url])
    got = refusals(r)
    assert got == {
        "instagram": ("video_out_of_range_for_target", "duration"),  # Reels: 3 s at least
        "linkedin": ("video_out_of_range_for_target", "duration"),  # 3 s at least
        "tiktok": ("video_out_of_range_for_target", "dimensions"),  # 360 px a side at least
        "youtube": ("video_out_of_range_for_target", "aspect"),  # landscape: not a Short
    }
    by = {d["platform"]: d for d in r.json()["details"]}
    assert "0.6 s, at least 3 s" in by["instagram"]["message"] and by["instagram"]["mediaUrl"] == url
    assert "64×48" in by["tiktok"]["message"] and "10 frames a second: 23–60" in by["tiktok"]["message"]


def test_a_landscape_video_is_no_youtube_short(client, owner, sandbox, fast):  # noqa: F811
    url = upload(client, owner, corpus.vertical_video(seconds=3, width=640, height=360))
    r = post(client, owner, targets=["youtube", "tiktok", "facebook"], content="Wide", mediaUrls=[url])
    got = refusals(r)
    assert got == {"youtube": ("video_out_of_range_for_target", "aspect")}
    assert "aspect ratio is 1.78:1" in r.json()["details"][0]["message"]


def test_an_edit_of_the_media_is_checked_as_a_creation(client, owner, sandbox, fast):  # noqa: F811
    good = upload(client, owner, corpus.video("mp4"))
    created = post(
        client, owner, 202, targets=["tiktok"], content="Later", mediaUrls=[good], scheduledAt=future(days=1)
    )
    bad = upload(client, owner, corpus.tiny_video())
    r = client.patch(
        f"/v1/posts/{created.json()['id']}", json={"mediaUrls": [bad]}, headers=key_headers(owner.api_key)
    )
    assert refusals(r) == {"tiktok": ("video_out_of_range_for_target", "dimensions")}


@pytest.mark.parametrize("network", ["tiktok", "youtube"])
def test_a_video_ingested_before_probing_is_left_to_the_network(client, owner, sandbox, fast, network):  # noqa: F811
    """A file from before migration 0031 has no probe data: its rules cannot be checked here, the network decides."""
    from backend.store.models import Media

    url = upload(client, owner, corpus.tiny_video())
    Media.update(duration_ms=None, frame_rate=None, video_codec=None, width=None, height=None).execute()
    post(client, owner, 202, targets=[network], content="Old file", mediaUrls=[url])
