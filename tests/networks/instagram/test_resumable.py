"""Instagram Reels sent by bytes (issue 29 item 7): `upload_type=resumable` on the container, then the file POSTed to
rupload with `Authorization: OAuth <token>`, `offset: 0`, `file_size: <bytes>` (IG User Media reference) — so an
Instagram video needs no public URL. Images still do (no byte path for them): refused at creation."""

from __future__ import annotations

import httpx

from backend.networks.base import MediaRef
from backend.networks.sandbox.store import SandboxItem
from backend.services.adapters import make_adapter, sandbox
from backend.services.posts.checks import media_url_refusals
from tests.networks.conftest import IMG, publication
from tests.networks.test_networks import loader

LOOPBACK_VID = MediaRef("http://127.0.0.1:8000/m/v.mp4", "video", "video/mp4")
LOOPBACK_IMG = MediaRef("http://127.0.0.1:8000/m/0.jpg", "image", "image/jpeg", 1080, 1080)


def spied(settings):  # type: ignore[no-untyped-def]
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler("instagram")

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return make_adapter("instagram", settings, transport=httpx.MockTransport(spy), media_loader=loader), seen


def test_a_reel_is_uploaded_by_bytes_and_published(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram")
    ad, seen = spied(settings)
    pub = publication(ident, "instagram", "a reel", [LOOPBACK_VID])
    out = ad.publish(pub)
    if out.state == "pending":
        out = ad.check_status(pub, str(out.tracking_ref))
    if out.state == "ready":
        out = ad.complete(pub, str(out.tracking_ref))
    assert out.state == "published", out
    create = next(r for r in seen if r.method == "POST" and r.url.path.endswith("/media"))
    form = dict(httpx.QueryParams(create.content.decode()))
    assert form["media_type"] == "REELS" and form["upload_type"] == "resumable" and "video_url" not in form
    [upload] = [r for r in seen if "/ig-api-upload/" in r.url.path]
    assert upload.url.host == "rupload.facebook.sandbox.invalid"
    assert upload.url.path.startswith("/ig-api-upload/v26.0/")
    data = loader(LOOPBACK_VID)
    assert upload.headers["authorization"] == f"OAuth {ident.access_token}"
    assert upload.headers["offset"] == "0" and upload.headers["file_size"] == str(len(data))
    assert upload.content == data


def test_a_carousel_video_item_is_uploaded_by_bytes(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 0
    ident = account("instagram")
    ad, seen = spied(settings)
    pub = publication(ident, "instagram", "mixed", [IMG[0], LOOPBACK_VID])
    out = ad.publish(pub)
    assert out.state == "published", out
    forms = [
        dict(httpx.QueryParams(r.content.decode()))
        for r in seen
        if r.method == "POST" and r.url.path.endswith("/media")
    ]
    video = next(f for f in forms if f.get("media_type") == "VIDEO")
    assert video["is_carousel_item"] == "true" and video["upload_type"] == "resumable"
    assert len([r for r in seen if "/ig-api-upload/" in r.url.path]) == 1


def test_rupload_refuses_what_meta_refuses_and_the_container_waits_for_bytes(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 0
    ident = account("instagram")
    handler = sandbox(settings).handler("instagram")
    base = "https://graph.facebook.sandbox.invalid/v26.0"
    made = handler(
        httpx.Request(
            "POST",
            f"{base}/{ident.external_account_id}/media",
            data={"media_type": "REELS", "upload_type": "resumable", "access_token": ident.access_token},
        )
    )
    assert made.status_code == 200
    cid, uri = made.json()["id"], made.json()["uri"]
    assert uri == f"https://rupload.facebook.sandbox.invalid/ig-api-upload/v26.0/{cid}"

    def status() -> str:
        r = handler(
            httpx.Request(
                "GET", f"{base}/{cid}", params={"fields": "status_code", "access_token": ident.access_token}
            )
        )
        return str(r.json()["status_code"])

    assert status() == "IN_PROGRESS"  # no bytes yet: never FINISHED
    data = loader(LOOPBACK_VID)
    good = {"Authorization": f"OAuth {ident.access_token}", "offset": "0", "file_size": str(len(data))}
    for headers, body in (
        ({k: v for k, v in good.items() if k != "Authorization"}, data),  # no token
        ({**good, "Authorization": "OAuth nope"}, data),  # a token that is not the container's owner's
        ({**good, "file_size": str(len(data) + 1)}, data),  # file_size is not what was sent
        ({**good, "offset": "7"}, data),  # nothing received yet: offset 0
    ):
        refused = handler(httpx.Request("POST", uri, headers=headers, content=body))
        assert refused.status_code in (400, 401) and "error" in refused.json(), refused.text
        assert status() == "IN_PROGRESS"
    ok = handler(httpx.Request("POST", uri, headers=good, content=data))
    assert ok.status_code == 200 and ok.json()["success"] is True
    assert status() == "FINISHED"
    item = SandboxItem.get_by_id(cid)
    assert item.data["received"]["bytes"] == len(data)


def test_only_instagram_images_need_a_public_url(settings) -> None:  # type: ignore[no-untyped-def]
    assert media_url_refusals("instagram", [LOOPBACK_VID], settings) == []
    [(url, why)] = media_url_refusals("instagram", [LOOPBACK_IMG], settings)
    assert url == LOOPBACK_IMG.url and "SOCIALPUB_MEDIA_URL" in why
    mixed = media_url_refusals("instagram", [LOOPBACK_IMG, LOOPBACK_VID], settings)
    assert [u for u, _ in mixed] == [LOOPBACK_IMG.url]  # the video of a carousel goes by bytes
    settings.media_by_url = "instagram"  # configured to send video URLs too
    assert [u for u, _ in media_url_refusals("instagram", [LOOPBACK_VID], settings)] == [LOOPBACK_VID.url]
