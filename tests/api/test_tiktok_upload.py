"""The dedicated TikTok video by bytes (issue 17 item 4; docs/tiktok.md "Media"): FILE_UPLOAD in chunks sent by the
worker (`tiktok.upload`) after the init answered the publishId, resumed after a crash where TikTok's copy stands, a
dead upload URL ending FAILED; SOCIALPUB_MEDIA_BY_URL keeps the pull; a live account's photos need a public URL."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import httpx
import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.networks.tiktok import adapter as tiktok
from backend.networks.tiktok import emulator
from backend.services.adapters import sandbox
from backend.store.models import Job, TikTokPublish
from tests.api.test_tiktok import PHOTO, VIDEO, connect, post, record, sent, status, upload, work
from tests.conftest import key_headers
from tests.media import corpus
from tests.services.test_posts_public_media import live

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test

CHUNK = 500  # TikTok's 5 MB minimum scaled down on both sides: the 1790-byte test video goes in 3 chunks


@pytest.fixture
def small_chunks(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tiktok, "CHUNK_SIZE", CHUNK)
    monkeypatch.setattr(tiktok, "MIN_CHUNK_SIZE", CHUNK)
    monkeypatch.setattr(tiktok, "CHUNK_RETRY_WAIT_S", 0.0)
    monkeypatch.setattr(emulator, "MIN_CHUNK_BYTES", CHUNK)


@pytest.fixture
def ready(settings, owner):  # type: ignore[no-untyped-def]
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    return settings


VIDEO_BYTES = corpus.tiny_video()  # the dedicated TikTok routes check no video rule


def test_the_video_goes_by_file_upload_in_chunks(settings, client, owner, ready, small_chunks) -> None:  # type: ignore[no-untyped-def]
    tk = connect(settings, owner)
    url = upload(client, owner, VIDEO_BYTES)
    out = post(client, owner, VIDEO, {"videoUrl": url, "postMode": "DIRECT_POST", "title": "bytes"})
    assert out["publishId"].startswith("v_pub_file~") and out["status"] == "PROCESSING_UPLOAD"
    item = sent(out["publishId"])
    size = len(VIDEO_BYTES)
    assert item.media == []  # no URL was given to TikTok
    assert {k: item.data["upload"][k] for k in ("video_size", "chunk_size", "total_chunk_count")} == {
        "video_size": size,
        "chunk_size": CHUNK,
        "total_chunk_count": size // CHUNK,
    }
    rec = record(out["publishId"])
    assert rec.upload_url and "upload_token=" in rec.upload_url  # kept (encrypted) for the worker
    assert Job.select().where((Job.kind == "tiktok.upload") & (Job.status == "queued")).count() == 1
    assert status(client, owner, out["publishId"])["status"] == "PROCESSING_UPLOAD"  # no byte sent yet
    # the upload, then the tracking read, which falls due a poll after the init (20 ms for a sandbox account): on a
    # fast machine the upload is over before it is due, so the run waits for it (settle) rather than stop between
    Worker(ready, concurrency=1).run_until_idle(max_seconds=10, settle_s=1.0)
    item = sent(out["publishId"])
    assert item.data["received"] == {"bytes": size, "sha256": hashlib.sha256(VIDEO_BYTES).hexdigest()}
    assert record(out["publishId"]).upload_url is None
    got = status(client, owner, out["publishId"], tk.id)
    assert got["status"] == "PUBLISH_COMPLETE" and got["publicPostIds"] == [item.post_id]


@pytest.mark.parametrize("sent_before", [1, 3], ids=["mid-upload", "after-the-last-chunk"])
def test_an_interrupted_upload_is_resumed_where_tiktok_stands(
    settings,
    client,
    owner,
    ready,
    small_chunks,  # type: ignore[no-untyped-def]
    sent_before,
) -> None:
    ready.sandbox_processing_s = 30  # TikTok processes for 30 s after the last byte
    connect(settings, owner)
    url = upload(client, owner, VIDEO_BYTES)
    out = post(client, owner, VIDEO, {"videoUrl": url})
    rec = record(out["publishId"])
    # a worker killed mid-upload (or before it recorded the end): some chunks reached TikTok, the job is to run
    size = len(VIDEO_BYTES)
    with httpx.Client(transport=sandbox(ready).transport("tiktok")) as put:
        for n in range(sent_before):
            first, last = n * CHUNK, (size - 1 if n == 2 else (n + 1) * CHUNK - 1)
            r = put.put(
                rec.upload_url,
                content=VIDEO_BYTES[first : last + 1],
                headers={"Content-Type": "video/mp4", "Content-Range": f"bytes {first}-{last}/{size}"},
            )
            assert r.status_code == (201 if n == 2 else 206)
    assert status(client, owner, out["publishId"])["status"] == "PROCESSING_UPLOAD"
    with time_machine.travel(clock.now(), tick=False) as t:
        work(ready)
        # the restarted worker read uploaded_bytes and sent the rest in order (nothing when all was in): the
        # emulator has the whole file, once, and the upload is recorded as done
        item = sent(out["publishId"])
        assert item.data["received"] == {"bytes": size, "sha256": hashlib.sha256(VIDEO_BYTES).hexdigest()}
        assert record(out["publishId"]).upload_url is None
        assert status(client, owner, out["publishId"])["status"] == "PROCESSING_UPLOAD"
        t.shift(31)
        assert status(client, owner, out["publishId"])["status"] == "SEND_TO_USER_INBOX"


def test_a_dead_upload_url_ends_failed_with_the_reason(settings, client, owner, ready) -> None:  # type: ignore[no-untyped-def]
    connect(settings, owner)
    url = upload(client, owner, VIDEO_BYTES)
    with time_machine.travel(clock.now(), tick=False) as t:
        out = post(client, owner, VIDEO, {"videoUrl": url, "postMode": "DIRECT_POST"})
        t.shift(timedelta(minutes=61))  # the worker was down longer than the upload URL lives
        work(ready)
        got = status(client, owner, out["publishId"])
    assert got["status"] == "FAILED" and got["failReason"] == "upload_failed"
    assert "one hour" in got["failMessage"] and "publish the video again" in got["failMessage"]
    assert record(out["publishId"]).upload_url is None


def test_media_by_url_still_pulls(settings, client, owner, ready) -> None:  # type: ignore[no-untyped-def]
    ready.media_by_url = "tiktok"
    connect(settings, owner)
    url = upload(client, owner, VIDEO_BYTES)
    out = post(client, owner, VIDEO, {"videoUrl": url, "postMode": "DIRECT_POST"})
    item = sent(out["publishId"])
    assert out["publishId"].startswith("v_pub_url~") and item.media == [url]
    assert record(out["publishId"]).upload_url is None
    assert not Job.select().where(Job.kind == "tiktok.upload").exists()


@pytest.mark.parametrize("by_url", ["", "tiktok"])
def test_a_live_accounts_pulled_media_must_be_public(client, owner, ready, by_url) -> None:  # type: ignore[no-untyped-def]
    ready.media_url = "http://127.0.0.1:8000/media/"
    ready.media_by_url = by_url
    acc = live(owner, "tiktok")
    image = upload(client, owner, corpus.jpeg(300, 300))
    r = client.post(PHOTO, json={"imageUrls": [image], "channelId": acc}, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "media_url_not_public"
    [detail] = r.json()["details"]
    assert (
        detail["field"] == "imageUrls[0]"
        and detail["url"] == image
        and "SOCIALPUB_MEDIA_URL" in detail["message"]
    )
    assert "TikTok takes no photo upload" in detail["message"]
    assert not TikTokPublish.select().exists()  # refused before anything was sent or recorded
    if by_url:  # a configured pull of the video: the same refusal, saying how to upload the bytes instead
        video = upload(client, owner, VIDEO_BYTES)
        r = client.post(VIDEO, json={"videoUrl": video, "channelId": acc}, headers=key_headers(owner.api_key))
        assert r.status_code == 400 and r.json()["error"] == "media_url_not_public"
        assert "remove tiktok from SOCIALPUB_MEDIA_BY_URL" in r.json()["details"][0]["message"]
