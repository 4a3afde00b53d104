# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""POST /v1/posts refuses a Bluesky video now when the account's PDS does not take a file that large (its
`describeServer.blobUploadLimit`: the video goes to the PDS as one blob), naming the server and its limit, instead
of accepting it and failing at publication; within the limit it is accepted and published."""

from __future__ import annotations

import base64
from typing import Any

from backend.jobs.worker import Worker
from backend.networks import registry
from backend.store.models import Post, PostTarget
from tests.api.posts_support import fast, post  # noqa: F401  (fixtures)
from tests.conftest import key_headers
from tests.media import corpus


def _upload(client: Any, owner: Any, data: bytes) -> str:
    r = client.post(
        "/v1/media", json={"base64": base64.b64encode(data).decode()}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 201, r.text
    return str(r.json()["url"])


def _sandbox_with_pds_limit(settings: Any, owner: Any, limit: int | None) -> None:
    """init --sandbox's accounts, the emulated PDS taking blobs up to `limit` (SOCIALPUB_BLUESKY_SANDBOX_BLOB_LIMIT)."""
    from backend.services import accounts

    registry.get("bluesky").settings_of(settings).sandbox_blob_limit = limit  # type: ignore[union-attr]
    accounts.connect_sandbox_defaults(settings, owner.workspace_id, public=True)


def test_a_video_over_the_pds_blob_limit_is_refused_at_creation(client, owner, settings, fast):
    _sandbox_with_pds_limit(settings, owner, 1000)
    url = _upload(client, owner, corpus.video("mp4"))
    r = post(client, owner, 400, targets=["bluesky"], content="a clip", mediaUrls=[url])
    (detail,) = r.json()["details"]
    assert detail["error"] == "video_out_of_range_for_target" and detail["platform"] == "bluesky"
    assert detail["rule"] == "max_bytes" and detail["limit"] == 1000 and detail["mediaUrl"] == url
    assert "takes files up to 1,000 bytes and the video is" in detail["message"]
    assert f"Bluesky server ({detail['server']})" in detail["message"]
    assert Post.select().count() == 0


def test_a_video_within_the_pds_blob_limit_is_accepted_and_published(client, owner, settings, fast):
    _sandbox_with_pds_limit(settings, owner, None)  # the reference PDS's 5 MiB
    url = _upload(client, owner, corpus.video("mp4"))
    r = post(client, owner, 202, targets=["bluesky"], content="a clip", mediaUrls=[url])
    Worker(settings, concurrency=1).run_until_idle(max_seconds=30, settle_s=0.5)
    target = PostTarget.get(PostTarget.post == r.json()["id"])
    assert target.status == "succeeded", target.fail_reason


def test_a_video_one_byte_over_the_limit_is_refused(client, owner, settings, fast):
    data = corpus.video("mp4")
    _sandbox_with_pds_limit(settings, owner, len(data) - 1)
    url = _upload(client, owner, data)
    r = post(client, owner, 400, targets=["bluesky"], content="a clip", mediaUrls=[url])
    (detail,) = r.json()["details"]
    assert detail["limit"] == len(data) - 1 and detail["error"] == "video_out_of_range_for_target"
