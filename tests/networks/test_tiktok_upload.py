"""TikTok FILE_UPLOAD (issue 17 item 4): the adapter sends a video's bytes in chunks (TikTok's 5-64 MB rule, lowered
here so that a small file goes in several chunks), the emulator checks each PUT like TikTok; photos and a configured
network keep PULL_FROM_URL."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import httpx
import pytest
import time_machine

from backend import clock
from backend.networks.base import MediaRef
from backend.networks.sandbox.store import SandboxItem
from backend.networks.tiktok import adapter as tiktok
from backend.networks.tiktok import emulator
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, VID, publication


@pytest.fixture(autouse=True)
def audited_app(settings, monkeypatch):  # type: ignore[no-untyped-def]
    """These tests post publicly: an audited TikTok app (socialpub's setting and the emulated app's); an
    unaudited one's refusals are tests/networks/test_tiktok_fidelity.py's."""
    monkeypatch.setenv("SOCIALPUB_TIKTOK_AUDITED", "true")
    settings.sandbox_apps = {"tiktok": {"audited": True}}


VIDEO = b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 17 + b"end"  # 4367 bytes, an MP4's first box
PRIVATE = {"tiktok": {"privacyLevel": "SELF_ONLY"}}


@pytest.fixture
def small_chunks(monkeypatch):  # type: ignore[no-untyped-def]
    """1000-byte chunks on both sides (TikTok's 5 MB minimum scaled down), no wait before a chunk's retry."""
    monkeypatch.setattr(tiktok, "CHUNK_SIZE", 1000)
    monkeypatch.setattr(tiktok, "MIN_CHUNK_SIZE", 1000)
    monkeypatch.setattr(tiktok, "CHUNK_RETRY_WAIT_S", 0.0)
    monkeypatch.setattr(emulator, "MIN_CHUNK_BYTES", 1000)


def spied(settings, data: bytes = VIDEO, fail=None):  # type: ignore[no-untyped-def]
    """The sandbox account's adapter through a spy of the emulator; fail(request, n) may answer instead."""
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler("tiktok")

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = fail(request, len(seen)) if fail else None
        return answer if answer is not None else handler(request)

    ad = make_adapter("tiktok", settings, transport=httpx.MockTransport(spy), media_loader=lambda m: data)
    return ad, seen


def puts(seen: list[httpx.Request]) -> list[httpx.Request]:
    return [r for r in seen if r.method == "PUT"]


def item_of(publish_id: str) -> SandboxItem:
    return SandboxItem.get_by_id(publish_id)


def test_chunk_plan_follows_tiktoks_rules() -> None:
    mb = tiktok.MB
    assert tiktok.chunk_plan(3 * mb) == (3 * mb, 1)  # under 5 MB: whole
    assert tiktok.chunk_plan(7 * mb) == (7 * mb, 1)  # under one chunk: whole
    assert tiktok.chunk_plan(25 * mb) == (10 * mb, 2)  # the last chunk takes the remainder (15 MB)
    assert tiktok.chunk_ranges(25 * mb)[-1] == (10 * mb, 25 * mb - 1)
    size = 128 * mb
    chunk, count = tiktok.chunk_plan(size)
    assert 5 * mb <= chunk <= 64 * mb and count == size // chunk and size - (count - 1) * chunk <= 128 * mb


def test_a_video_goes_in_chunks_in_order(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, seen = spied(settings)
    pub = publication(ident, "tiktok", "chunked", [VID], PRIVATE)
    out = ad.publish(pub)
    assert out.state == "pending" and out.network_status == "PROCESSING_UPLOAD"
    assert out.tracking_ref.startswith("v_pub_file~v2.")
    init = next(json.loads(r.content) for r in seen if r.url.path.endswith("/video/init/"))
    assert init["source_info"] == {
        "source": "FILE_UPLOAD",
        "video_size": 4367,
        "chunk_size": 1000,
        "total_chunk_count": 4,
    }
    assert init["post_info"]["title"] == "chunked"
    chunks = puts(seen)
    assert [r.headers["content-range"] for r in chunks] == [
        "bytes 0-999/4367",
        "bytes 1000-1999/4367",
        "bytes 2000-2999/4367",
        "bytes 3000-4366/4367",
    ]
    assert [len(r.content) for r in chunks] == [1000, 1000, 1000, 1367]  # the last one takes the remainder
    assert all(r.headers["content-type"] == "video/mp4" for r in chunks)
    assert all(
        r.url.host == "open.tiktokapis.sandbox.invalid" and "authorization" not in r.headers for r in chunks
    )
    assert b"".join(r.content for r in chunks) == VIDEO
    received = item_of(out.tracking_ref).data["received"]
    assert received == {"bytes": len(VIDEO), "sha256": hashlib.sha256(VIDEO).hexdigest()}
    assert item_of(out.tracking_ref).media == []  # nothing pulled
    done = ad.check_status(pub, out.tracking_ref)
    # a SELF_ONLY post: TikTok gives no post id for a post that is not public (get-video-status), so no link
    assert done.state == "published" and done.post_url is None
    assert done.external_post_id == out.tracking_ref


def test_a_draft_video_goes_by_upload_too(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, seen = spied(settings)
    pub = publication(ident, "tiktok", "typed in the app", [VID], {"tiktok": {"postMode": "MEDIA_UPLOAD"}})
    out = ad.publish(pub)
    assert out.tracking_ref.startswith("v_inbox_file~")
    init = next(r for r in seen if r.url.path.endswith("/inbox/video/init/"))
    assert json.loads(init.content) == {
        "source_info": {
            "source": "FILE_UPLOAD",
            "video_size": 4367,
            "chunk_size": 1000,
            "total_chunk_count": 4,
        }
    }
    assert ad.check_status(pub, out.tracking_ref).state == "inbox_delivered"


def test_a_small_file_goes_whole_at_tiktoks_sizes(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, seen = spied(settings)
    out = ad.publish(publication(ident, "tiktok", "whole", [VID], PRIVATE))
    assert out.state == "pending"
    [chunk] = puts(seen)
    assert chunk.headers["content-range"] == f"bytes 0-{len(VIDEO) - 1}/{len(VIDEO)}"


def test_a_failed_chunk_is_sent_again(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    failed: list[str] = []

    def once(request: httpx.Request, n: int) -> httpx.Response | None:
        if (
            request.method == "PUT"
            and request.headers["content-range"].startswith("bytes 1000-")
            and not failed
        ):
            failed.append(request.headers["content-range"])
            return httpx.Response(503, text="upstream hiccup")
        return None

    ad, seen = spied(settings, fail=once)
    pub = publication(ident, "tiktok", "retried", [VID], PRIVATE)
    out = ad.publish(pub)
    assert out.state == "pending", out
    assert [r.headers["content-range"].split("/")[0] for r in puts(seen)] == [
        "bytes 0-999",
        "bytes 1000-1999",
        "bytes 1000-1999",
        "bytes 2000-2999",
        "bytes 3000-4366",
    ]
    assert item_of(out.tracking_ref).data["received"]["sha256"] == hashlib.sha256(VIDEO).hexdigest()
    assert ad.check_status(pub, out.tracking_ref).state == "published"


def test_a_chunk_failing_every_time_fails_the_attempt(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")

    def always(request: httpx.Request, n: int) -> httpx.Response | None:
        if request.method == "PUT" and request.headers["content-range"].startswith("bytes 2000-"):
            return httpx.Response(500)
        return None

    ad, seen = spied(settings, fail=always)
    out = ad.publish(publication(ident, "tiktok", "broken", [VID], PRIVATE))
    assert (out.state, out.fail_type, out.network_code, out.ambiguous) == (
        "failed",
        "retriable",
        "upload_failed",
        False,
    )
    assert len(puts(seen)) == 2 + tiktok.CHUNK_ATTEMPTS  # bounded


def test_a_final_chunk_cut_off_is_ambiguous(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")

    def cut(request: httpx.Request, n: int) -> httpx.Response | None:
        if request.method == "PUT" and request.headers["content-range"].startswith("bytes 3000-"):
            raise httpx.ReadTimeout("cut", request=request)
        return None

    ad, _ = spied(settings, fail=cut)
    out = ad.publish(publication(ident, "tiktok", "cut", [VID], PRIVATE))
    assert out.fail_type == "retriable" and out.ambiguous  # TikTok may have had every byte: check first


def init_upload(ad, ident, size: int, chunk: int | None = None, count: int | None = None):  # type: ignore[no-untyped-def]
    plan = tiktok.chunk_plan(size)
    return ad._call(
        ident.access_token,
        "/v2/post/publish/video/init/",
        {
            "post_info": {"privacy_level": "SELF_ONLY", "brand_content_toggle": False},
            "source_info": {
                "source": "FILE_UPLOAD",
                "video_size": size,
                "chunk_size": chunk or plan[0],
                "total_chunk_count": count or plan[1],
            },
        },
        write=True,
    )


def test_the_emulator_checks_each_chunk(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, _ = spied(settings)
    data = init_upload(ad, ident, len(VIDEO))
    url, client = data["upload_url"], ad.client

    def put(
        first: int,
        last: int,
        body: bytes | None = None,
        total: int = len(VIDEO),
        ctype: str = "video/mp4",
        rng: str | None = None,
    ) -> httpx.Response:
        content = VIDEO[first : last + 1] if body is None else body
        return client.put(
            url,
            content=content,
            headers={"Content-Type": ctype, "Content-Range": rng or f"bytes {first}-{last}/{total}"},
        )

    assert put(1000, 1999).status_code == 416  # not the first chunk
    assert put(0, 998).status_code == 416  # not chunk_size
    assert put(0, 999, total=9999).status_code == 416  # another total
    assert put(0, 999, ctype="image/png").status_code == 400
    assert put(0, 999, rng="bytes=0-999").status_code == 400
    assert put(0, 999, body=b"x" * 10).status_code == 400  # the range does not match the body
    status = ad.fetch_status(ident.access_token, data["publish_id"])
    assert status == {"status": "PROCESSING_UPLOAD", "uploaded_bytes": 0}
    assert put(0, 999).status_code == 206
    assert put(0, 999).status_code == 416  # overlap: chunk 0 again
    assert put(2000, 2999).status_code == 416  # a chunk skipped
    assert ad.fetch_status(ident.access_token, data["publish_id"])["uploaded_bytes"] == 1000
    assert put(1000, 1999).status_code == 206 and put(2000, 2999).status_code == 206
    assert put(3000, 3999).status_code == 416  # the last chunk must take the rest of the file
    assert put(3000, len(VIDEO) - 1).status_code == 201
    assert put(3000, len(VIDEO) - 1).status_code == 416  # complete: nothing more
    wrong = client.put(
        url.replace("upload_token=", "upload_token=x"),
        content=VIDEO[:1000],
        headers={"Content-Type": "video/mp4", "Content-Range": "bytes 0-999/4367"},
    )
    assert wrong.status_code == 404


def test_the_upload_url_expires_after_an_hour(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, _ = spied(settings)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        data = init_upload(ad, ident, len(VIDEO))
        t.move_to(start + timedelta(seconds=3601))
        r = ad.client.put(
            data["upload_url"],
            content=VIDEO[:1000],
            headers={"Content-Type": "video/mp4", "Content-Range": "bytes 0-999/4367"},
        )
    assert r.status_code == 403


@pytest.mark.parametrize(
    "size,chunk,count",
    [
        (4000, 2000, 3),  # total_chunk_count is video_size // chunk_size
        (4367, 1000, 5),
        (4367, 999, 4),  # chunks under the minimum
        (4367, 5000, 1),  # a chunk larger than the file
        (500, 250, 2),  # a file under the minimum goes whole
    ],
)
def test_the_emulator_checks_the_sizes_at_init(settings, account, small_chunks, size, chunk, count) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.base import NetworkError

    ident = account("tiktok")
    ad, _ = spied(settings)
    with pytest.raises(NetworkError) as exc:
        init_upload(ad, ident, size, chunk, count)
    assert exc.value.code == "invalid_params"


def test_a_file_that_is_no_video_fails_at_processing(settings, account, small_chunks) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, _ = spied(settings, data=b"GIF89a" + b"\x00" * 3000)
    pub = publication(ident, "tiktok", "not a video", [VID], PRIVATE)
    out = ad.publish(pub)
    assert out.state == "pending"
    done = ad.check_status(pub, out.tracking_ref)
    assert (done.state, done.network_code) == ("failed", "file_format_check_failed")


def test_configured_pull_and_photos_keep_pull_from_url(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    loaded: list[MediaRef] = []
    ad, seen = spied(settings)
    ad.media_loader = lambda m: loaded.append(m) or VIDEO  # type: ignore[func-returns-value]
    out = ad.publish(publication(ident, "tiktok", "photo", IMG[:2], PRIVATE))
    assert out.state == "pending" and not loaded and not puts(seen)
    assert json.loads(seen[-1].content)["source_info"]["source"] == "PULL_FROM_URL"

    settings.media_by_url = "tiktok"  # SOCIALPUB_MEDIA_BY_URL=tiktok: videos pulled as before
    pulled = make_adapter("tiktok", settings)
    assert pulled.media_by_url and pulled.media_loader is not None
    pub = publication(ident, "tiktok", "pulled", [VID], PRIVATE)
    out = pulled.publish(pub)
    assert out.tracking_ref.startswith("v_pub_url~") and out.network_status == "PROCESSING_DOWNLOAD"
    assert item_of(out.tracking_ref).media == [VID.url]
    assert pulled.check_status(pub, out.tracking_ref).state == "published"
