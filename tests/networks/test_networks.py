"""Facebook, Instagram, LinkedIn, YouTube adapters against the sandbox; the LinkedIn PDF."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import httpx
import pytest
import time_machine
from PIL import Image
from pypdf import PdfReader

from backend import clock
from backend.networks import registry
from backend.networks.base import MediaRef
from backend.networks.linkedin.adapter import LinkedInAdapter
from backend.networks.linkedin.pdf import build_carousel_pdf
from backend.networks.sandbox import list_published
from backend.services.adapters import make_adapter, sandbox, sandbox_config
from tests.networks.conftest import IMG, READABLE_APPS, VID, publication, resumed, saving
from tests.support.networks import own

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test


def jpeg(w: int, h: int, color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (w, h), color).save(out, "JPEG")
    return out.getvalue()


def loader(media: MediaRef) -> bytes:
    return b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 5000 if media.kind == "video" else jpeg(800, 600)


def adapter(platform: str, settings):  # type: ignore[no-untyped-def]
    return make_adapter(platform, settings, media_loader=loader)  # the bytes of the test media


CASES = [
    ("facebook", "hello fb", []),
    ("facebook", "photo", [IMG[0]]),
    ("facebook", "video", [VID]),
    ("instagram", "one", [IMG[0]]),
    ("instagram", "carousel", IMG[:3]),
    ("instagram", "reel", [VID]),
    ("linkedin", "text only", []),
    ("linkedin", "image", [IMG[0]]),
    ("linkedin", "Deck\nslides", IMG[:4]),
    ("linkedin", "clip", [VID]),
    ("youtube", "My short\nabout things", [VID]),
]


@pytest.mark.parametrize("platform,text,media", CASES)
def test_happy_path(settings, account, platform, text, media) -> None:  # type: ignore[no-untyped-def]
    ident = account(platform)
    ad = adapter(platform, settings)
    pub = publication(ident, platform, text, media)
    out = ad.publish(pub)
    if out.state == "pending":
        out = ad.check_status(pub, out.tracking_ref)
    assert out.state == "published", out
    assert out.external_post_id and out.post_url and out.post_url.startswith("https://")
    rows = list_published(platform=platform)
    assert len(rows) == 1 and rows[0]["external_id"] == out.external_post_id
    prefix = {
        "facebook": "https://www.facebook.com/",
        "instagram": "https://www.instagram.com/",
        "linkedin": "https://www.linkedin.com/feed/update/urn:li:share:",
        "youtube": "https://youtu.be/",
    }
    assert out.post_url.startswith(prefix[platform])


@pytest.mark.parametrize("platform,media", [("instagram", [VID]), ("linkedin", [IMG[0]]), ("youtube", [VID])])
def test_pending_then_published_with_time(settings, account, platform, media) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 5.0
    ident = account(platform)
    ad = adapter(platform, settings)
    pub = publication(ident, platform, "wait for it", media)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        out = ad.publish(pub)
        assert out.state == "pending" and out.tracking_ref
        assert ad.check_status(pub, out.tracking_ref).state == "pending"
        assert list_published(platform=platform) == []
        t.move_to(start + timedelta(seconds=6))
        done = ad.check_status(pub, out.tracking_ref)
        if platform in (
            "instagram",
            "linkedin",
        ):  # ready for the publishing call: a status check never makes it
            assert done.state == "ready" and done.tracking_ref and list_published(platform=platform) == []
            done = ad.complete(pub, done.tracking_ref)
        assert done.state == "published" and done.post_url
        assert len(list_published(platform=platform)) == 1


@pytest.mark.parametrize(
    "platform,media", [("instagram", [VID]), ("linkedin", [VID]), ("linkedin", [IMG[0]])]
)
def test_a_status_check_never_publishes(settings, account, platform, media) -> None:  # type: ignore[no-untyped-def]
    """Once the network is ready (asset AVAILABLE, container FINISHED), check_status answers `ready`, as often
    as asked, and publishes nothing: the publishing call is complete(), which the engine makes as an attempt
    (recorded first, reconciled before any repeat: a LinkedIn asset can be posted any number of times)."""
    settings.sandbox_processing_s = 5.0
    settings.sandbox_apps = {**settings.sandbox_apps, **READABLE_APPS}
    ident = account(platform)
    ad = adapter(platform, settings)
    pub = publication(ident, platform, "ready, then posted once", media, attempted_at=clock.now())
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        out = ad.publish(pub)
        assert out.state == "pending"
        t.move_to(start + timedelta(seconds=6))
        checks = [ad.check_status(pub, out.tracking_ref) for _ in range(3)]
        assert [c.state for c in checks] == ["ready"] * 3 and list_published(platform=platform) == []
        completing = resumed(pub, [checks[-1].tracking_ref])  # the publishing call's attempt: about that ref
        assert ad.find_existing(completing) is None
        done = ad.complete(pub, checks[-1].tracking_ref)
        assert done.state == "published" and len(list_published(platform=platform)) == 1
        found = ad.find_existing(
            completing
        )  # listed at once: a reconciliation after complete() is conclusive
        assert found is not None and found.external_post_id == done.external_post_id


EXPECT = {
    ("facebook", "fail-permanent"): ("permanent", "190/460"),
    ("facebook", "fail-retriable"): ("retriable", "2"),
    ("facebook", "rate-limited"): ("retriable", "32"),
    ("instagram", "fail-permanent"): ("permanent", "ERROR/2207009"),
    ("instagram", "fail-retriable"): ("retriable", "-1/2207001"),
    ("instagram", "rate-limited"): ("retriable", "4"),
    ("linkedin", "fail-permanent"): ("permanent", "ACCESS_DENIED"),
    ("linkedin", "fail-retriable"): ("retriable", "500"),
    ("linkedin", "rate-limited"): ("retriable", "429"),
    ("youtube", "fail-permanent"): ("permanent", "codec"),
    ("youtube", "fail-retriable"): ("retriable", "backendError"),
    ("youtube", "rate-limited"): ("retriable", "quotaExceeded"),
}


@pytest.mark.parametrize("platform,behaviour", list(EXPECT))
def test_behaviours_classified(settings, account, platform, behaviour) -> None:  # type: ignore[no-untyped-def]
    ident = account(platform, behaviour)
    ad = adapter(platform, settings)
    media = [VID] if platform == "youtube" else [IMG[0]]
    pub = publication(ident, platform, "x", media)
    out = ad.publish(pub)
    if out.state == "pending":
        out = ad.check_status(pub, out.tracking_ref)
    assert out.state == "failed"
    assert (out.fail_type, out.network_code) == EXPECT[(platform, behaviour)]
    assert out.fail_reason
    if behaviour == "rate-limited":
        assert out.retry_after_s and out.retry_after_s > 0
        if platform in ("facebook", "instagram"):
            assert out.retry_after_s == 300  # estimated_time_to_regain_access: 5 minutes
    assert list_published(platform=platform) == []


@pytest.mark.parametrize("platform", ["facebook", "instagram", "linkedin", "youtube"])
def test_flaky_every_other_call(settings, account, platform) -> None:  # type: ignore[no-untyped-def]
    ident = account(platform, "flaky")
    ad = adapter(platform, settings)
    media = [VID] if platform == "youtube" else [IMG[0]]
    states = []
    for i in range(4):
        pub = publication(ident, platform, f"p{i}", media)
        out = ad.publish(pub)
        if out.state == "pending":
            out = ad.check_status(pub, out.tracking_ref)
        states.append((out.state, out.fail_type))
    assert states == [("failed", "retriable"), ("published", None)] * 2


@pytest.mark.parametrize(
    "platform,media", [("facebook", [IMG[0]]), ("instagram", IMG[:2]), ("linkedin", []), ("youtube", [VID])]
)
def test_find_existing_after_crash(settings, account, platform, media) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_apps = {**settings.sandbox_apps, **READABLE_APPS}
    ident = account(platform)
    ad = adapter(platform, settings)
    pub, saved = saving(
        publication(ident, platform, "exactly once (really) #1", media, attempted_at=clock.now())
    )
    assert ad.find_existing(pub) is None
    out = ad.publish(pub)  # the network published; our side crashed before recording it
    if out.state == "pending":
        out = ad.check_status(pub, out.tracking_ref)
    found = ad.find_existing(resumed(pub, saved))  # asked with what the attempt saved, as the engine asks
    assert found is not None and found.state == "published"
    assert found.external_post_id == out.external_post_id
    assert len(list_published(platform=platform)) == 1
    assert (
        ad.find_existing(publication(ident, platform, "something else", media, attempted_at=clock.now()))
        is None
    )


def test_instagram_daily_publishing_limit(settings, account) -> None:  # type: ignore[no-untyped-def]
    own(settings, "instagram").sandbox_daily_posts = 2
    ident = account("instagram")
    ad = adapter("instagram", settings)
    assert [ad.publish(publication(ident, "instagram", f"p{i}", [IMG[0]])).state for i in range(2)] == [
        "published"
    ] * 2
    out = ad.publish(publication(ident, "instagram", "third", [IMG[0]]))
    assert (out.state, out.fail_type, out.network_code) == ("failed", "retriable", "content_publishing_limit")
    # the network itself refuses with 9 / 2207042 when asked anyway
    from backend.networks.facebook.graph import GraphClient

    g = GraphClient(httpx.Client(transport=sandbox(settings).transport("instagram")), "Instagram")
    cid = g.post(
        f"{ad.base}/{ident.external_account_id}/media", ident.access_token, {"image_url": IMG[0].url}
    )["id"]
    with pytest.raises(Exception) as exc:
        g.post(
            f"{ad.base}/{ident.external_account_id}/media_publish", ident.access_token, {"creation_id": cid}
        )
    assert exc.value.code == "9/2207042" and exc.value.fail_type == "retriable"


def test_linkedin_exact_requests(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("linkedin")
    seen: list[httpx.Request] = []
    emu = sandbox(settings).transport("linkedin")

    def spy(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return emu.handle_request(req)

    ad = LinkedInAdapter(
        httpx.Client(transport=httpx.MockTransport(spy)),
        "https://api.linkedin.sandbox.invalid/rest",
        version="202601",
        media_loader=loader,
    )
    out = ad.publish(publication(ident, "linkedin", "Hi (team) #launch @here", IMG[:3]))
    assert out.state == "published"
    init, put, status, post = seen
    assert str(init.url).endswith("/rest/documents?action=initializeUpload")
    assert json.loads(init.content) == {"initializeUploadRequest": {"owner": ident.external_account_id}}
    for r in (init, status, post):
        assert r.headers["linkedin-version"] == "202601" and r.headers["x-restli-protocol-version"] == "2.0.0"
        assert r.headers["authorization"] == f"Bearer {ident.access_token}"
    assert put.method == "PUT" and put.content.startswith(b"%PDF")
    # the upload URL takes a plain PUT: the bearer token and the document's type, no API headers
    assert put.headers["authorization"] == f"Bearer {ident.access_token}"
    assert put.headers["content-type"] == "application/pdf" and "linkedin-version" not in put.headers
    assert len(PdfReader(io.BytesIO(put.content)).pages) == 3
    body = json.loads(post.content)
    assert body["commentary"] == r"Hi \(team\) \#launch \@here"
    assert body["content"]["media"]["title"] == "Hi (team) #launch @here"
    assert body["content"]["media"]["id"].startswith("urn:li:document:")
    assert body["distribution"] == {
        "feedDistribution": "MAIN_FEED",
        "targetEntities": [],
        "thirdPartyDistributionChannels": [],
    }
    assert body["lifecycleState"] == "PUBLISHED" and body["visibility"] == "PUBLIC"


def test_youtube_session_request(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("youtube")
    seen: list[httpx.Request] = []
    emu = sandbox(settings).transport("youtube")

    def spy(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return emu.handle_request(req)

    from backend.networks.youtube.adapter import YouTubeAdapter

    ad = YouTubeAdapter(
        httpx.Client(transport=httpx.MockTransport(spy)),
        "https://www.googleapis.sandbox.invalid/youtube/v3",
        "https://www.googleapis.sandbox.invalid/upload/youtube/v3",
        media_loader=loader,
    )
    gen = MediaRef("https://media.test/g.mp4", "video", "video/mp4", generated=True)
    pub = publication(
        ident,
        "youtube",
        "Title line\nbody",
        [gen],
        {"youtube": {"privacyStatus": "unlisted", "tags": ["a b", "c"], "madeForKids": True}},
    )
    assert ad.publish(pub).state == "published"
    session, put, poll = seen
    assert session.url.params["uploadType"] == "resumable" and session.url.params["part"] == "snippet,status"
    assert session.headers["x-upload-content-type"] == "video/mp4"
    assert int(session.headers["x-upload-content-length"]) == len(put.content)
    assert json.loads(session.content) == {
        "snippet": {
            "title": "Title line",
            "description": "Title line\nbody",
            "categoryId": "22",
            "tags": ["a b", "c"],
        },
        "status": {
            "privacyStatus": "unlisted",
            "selfDeclaredMadeForKids": True,
            "containsSyntheticMedia": True,
        },
    }
    assert poll.url.params["part"] == "status,processingDetails"


def test_youtube_resumes_an_interrupted_upload(settings, account) -> None:  # type: ignore[no-untyped-def]
    """A PUT cut after half the bytes reached YouTube: the adapter asks how far it got (`Content-Range: bytes
    */N`, answered 308 with `Range`) and sends the rest from there; one video, every byte once."""
    ident = account("youtube")
    emu = sandbox(settings).transport("youtube")
    data = bytes(range(256)) * 4096  # 1 MiB
    seen: list[tuple[str, str, int]] = []

    def cut_once(req: httpx.Request) -> httpx.Response:
        seen.append((req.method, req.headers.get("content-range", ""), len(req.content)))
        if req.method == "PUT" and len(seen) == 2:  # the first PUT: half arrives, then the connection drops
            half = httpx.Request("PUT", req.url, headers=req.headers, content=req.content[: len(data) // 2])
            emu.handle_request(half)
            raise httpx.ReadError("connection reset by peer", request=req)
        return emu.handle_request(req)

    from backend.networks.youtube.adapter import YouTubeAdapter

    ad = YouTubeAdapter(
        httpx.Client(transport=httpx.MockTransport(cut_once)),
        "https://www.googleapis.sandbox.invalid/youtube/v3",
        "https://www.googleapis.sandbox.invalid/upload/youtube/v3",
        media_loader=lambda m: data,
    )
    out = ad.publish(publication(ident, "youtube", "Resumed\nafter a cut", [VID]))
    assert out.state == "published", out.fail_reason
    half = len(data) // 2
    assert seen[:4] == [
        ("POST", "", seen[0][2]),
        ("PUT", "", len(data)),
        ("PUT", f"bytes */{len(data)}", 0),
        ("PUT", f"bytes {half}-{len(data) - 1}/{len(data)}", len(data) - half),
    ]
    from backend.networks.sandbox.store import SandboxItem

    [video] = SandboxItem.select().where((SandboxItem.platform == "youtube") & (SandboxItem.kind == "video"))
    assert video.id == out.external_post_id and video.data["bytes"] == len(data)


def test_linkedin_pdf_square_pages() -> None:
    pdf = build_carousel_pdf([jpeg(1600, 900), jpeg(600, 1200, "blue"), jpeg(500, 500, "green")])
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) == 3
    for page in reader.pages:
        box = page.mediabox
        assert float(box.width) == float(box.height) == 1080
    with pytest.raises(ValueError):
        build_carousel_pdf([])


def test_linkedin_pdf_letterboxes_on_white() -> None:
    pdf = build_carousel_pdf([jpeg(1000, 500, "black")], side=200)
    images = PdfReader(io.BytesIO(pdf)).pages[0].images
    im = images[0].image.convert("RGB")
    assert im.size == (200, 200)
    assert im.getpixel((100, 5))[0] > 240  # band above: white
    assert im.getpixel((100, 100))[0] < 20  # the picture: black


def test_state_survives_a_new_emulator(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    pub = publication(ident, "tiktok", "x", [VID])
    ref = make_adapter("tiktok", settings, media_loader=loader).publish(pub).tracking_ref
    from backend.networks.factory import AdapterContext
    from backend.networks.sandbox import Sandbox

    fresh_sandbox = Sandbox(sandbox_config(settings))  # a new process would build exactly this
    fresh = registry.get("tiktok").make_adapter(
        AdapterContext(
            httpx.Client(transport=fresh_sandbox.transport("tiktok")), fresh_sandbox.hosts("tiktok")
        ),
    )
    assert fresh.check_status(pub, ref).state == "published"
