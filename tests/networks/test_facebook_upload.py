"""Facebook photos and videos as multipart `source` (issue 17 item 4), checked by the emulator; the configured pull
(SOCIALPUB_MEDIA_BY_URL=facebook) keeps `url` / `file_url`."""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qs

import httpx

from backend.networks.facebook.emulator import multipart
from backend.networks.sandbox.core import Request
from backend.networks.sandbox.store import SandboxItem
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, VID, publication
from tests.networks.test_networks import jpeg, loader

VIDEO = loader(VID)


def spied(settings, load=loader):  # type: ignore[no-untyped-def]
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler("facebook")

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return make_adapter("facebook", settings, transport=httpx.MockTransport(spy), media_loader=load), seen


def posted(
    seen: list[httpx.Request],
) -> tuple[httpx.Request, dict[str, str], dict[str, tuple[str, str, bytes]]]:
    [req] = [r for r in seen if r.method == "POST"]
    fields, files = multipart(Request(req))
    return req, fields, files


def test_a_photo_goes_as_multipart_source(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    ad, seen = spied(settings)
    out = ad.publish(publication(ident, "facebook", "a photo", [IMG[0]]))
    assert out.state == "published" and out.post_url.startswith("https://www.facebook.com/photo.php?fbid=")
    req, fields, files = posted(seen)
    assert str(req.url) == f"https://graph.facebook.sandbox.invalid/v26.0/{ident.external_account_id}/photos"
    assert req.headers["content-type"].startswith("multipart/form-data; boundary=")
    assert fields == {"caption": "a photo", "access_token": ident.access_token}  # no url
    name, ctype, data = files["source"]
    assert (name, ctype, data) == ("0.jpg", "image/jpeg", jpeg(800, 600))
    [item] = SandboxItem.select().where((SandboxItem.platform == "facebook") & (SandboxItem.mode == "photo"))
    assert item.media == [] and item.text == "a photo"
    assert item.data["received"] == {
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "filename": "0.jpg",
        "content_type": "image/jpeg",
    }


def test_a_video_goes_as_multipart_source_to_graph_video(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    ad, seen = spied(settings)
    out = ad.publish(publication(ident, "facebook", "a video", [VID]))
    assert out.state == "published" and f"/{ident.external_account_id}/videos/" in out.post_url
    req, fields, files = posted(seen)
    assert (
        str(req.url)
        == f"https://graph-video.facebook.sandbox.invalid/v26.0/{ident.external_account_id}/videos"
    )
    assert fields == {"description": "a video", "access_token": ident.access_token}
    assert files["source"] == ("v.mp4", "video/mp4", VIDEO)
    [item] = SandboxItem.select().where((SandboxItem.platform == "facebook") & (SandboxItem.mode == "video"))
    assert item.data["received"]["sha256"] == hashlib.sha256(VIDEO).hexdigest() and item.media == []


def test_the_emulator_refuses_a_source_that_is_not_the_media(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    ad, _ = spied(settings, load=lambda m: b"<html>not media</html>")
    photo = ad.publish(publication(ident, "facebook", "bad photo", [IMG[0]]))
    assert (photo.state, photo.fail_type, photo.network_code) == ("failed", "permanent", "324")
    video = ad.publish(publication(ident, "facebook", "bad video", [VID]))
    assert (video.state, video.fail_type, video.network_code) == ("failed", "permanent", "352")


def test_configured_pull_sends_the_url(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.media_by_url = "facebook"
    ident = account("facebook")
    fetched: list[object] = []
    ad, seen = spied(settings, load=lambda m: fetched.append(m) or b"")  # type: ignore[func-returns-value]
    assert ad.publish(publication(ident, "facebook", "pulled photo", [IMG[0]])).state == "published"
    assert ad.publish(publication(ident, "facebook", "pulled video", [VID])).state == "published"
    photo, video = [r for r in seen if r.method == "POST"]
    assert photo.headers["content-type"] == "application/x-www-form-urlencoded"
    assert parse_qs(photo.content.decode())["url"] == [IMG[0].url]
    assert parse_qs(video.content.decode())["file_url"] == [VID.url]
    assert not fetched  # no bytes loaded
    items = SandboxItem.select().where(SandboxItem.platform == "facebook").order_by(SandboxItem.created_at)
    assert [i.media for i in items] == [[IMG[0].url], [VID.url]]
