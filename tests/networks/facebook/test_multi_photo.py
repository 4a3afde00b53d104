"""Facebook multi-photo posts (issue 29): every photo is sent — each uploaded unpublished (POST /{page}/photos
published=false), then ONE post, POST /{page}/feed with attached_media (Graph's photo-uploads guide)."""

from __future__ import annotations

import json

import httpx

from backend.networks.rules import build_payload
from backend.networks.sandbox import list_published
from backend.networks.sandbox.store import SandboxItem
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, VID, publication
from tests.networks.test_networks import loader


def spied(settings):  # type: ignore[no-untyped-def]
    seen: list[httpx.Request] = []
    handler = sandbox(settings).handler("facebook")

    def spy(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return make_adapter("facebook", settings, transport=httpx.MockTransport(spy), media_loader=loader), seen


def test_the_rules_keep_every_image() -> None:
    p = build_payload("facebook", "three photos", IMG[:3], None)
    assert p.kind == "carousel" and list(p.media) == IMG[:3]
    mixed = build_payload("facebook", "a video first", [VID, IMG[0]], None)
    assert mixed.kind == "video" and list(mixed.media) == [VID]  # attached_media takes photos only


def test_three_photos_make_one_post_with_all_of_them(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    ad, seen = spied(settings)
    out = ad.publish(publication(ident, "facebook", "three photos", IMG[:3]))
    assert out.state == "published" and out.external_post_id
    posts = [r for r in seen if r.method == "POST"]
    assert [r.url.path.rsplit("/", 1)[-1] for r in posts] == ["photos", "photos", "photos", "feed"]
    [post] = list_published(platform="facebook")
    assert post["external_id"] == out.external_post_id and post["text"] == "three photos"
    item = SandboxItem.get_by_id(out.external_post_id)
    assert len(item.data["attached_media"]) == 3
    unpublished = SandboxItem.select().where(SandboxItem.kind == "unpublished_photo")
    assert {u.id for u in unpublished} == set(item.data["attached_media"])
    found = ad.find_existing(
        publication(ident, "facebook", "three photos", IMG[:3], attempted_at=item.created_at)
    )
    assert found is not None and found.external_post_id == out.external_post_id


def test_an_unpublished_photo_is_not_a_post_and_attaches_once(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident, other = account("facebook"), account("facebook", name="Other")
    handler = sandbox(settings).handler("facebook")
    base = "https://graph.facebook.sandbox.invalid/v26.0"

    def post(acc, edge: str, data: dict) -> httpx.Response:  # type: ignore[no-untyped-def,type-arg]
        url = f"{base}/{acc.external_account_id}/{edge}"
        return handler(httpx.Request("POST", url, data={**data, "access_token": acc.access_token}))

    photo = post(ident, "photos", {"url": "https://media.test/m/1.jpg", "published": "false"})
    assert photo.status_code == 200 and set(photo.json()) == {"id"}  # no post_id: not a post
    assert list_published(platform="facebook") == []
    pid = photo.json()["id"]
    foreign = post(
        other, "feed", {"message": "not mine", "attached_media": json.dumps([{"media_fbid": pid}])}
    )
    assert foreign.status_code == 400 and foreign.json()["error"]["code"] == 100
    ok = post(ident, "feed", {"message": "mine", "attached_media": json.dumps([{"media_fbid": pid}])})
    assert ok.status_code == 200
    again = post(ident, "feed", {"message": "twice", "attached_media": json.dumps([{"media_fbid": pid}])})
    assert again.status_code == 400 and again.json()["error"]["code"] == 100


def test_a_retry_reuses_the_photos_already_uploaded(settings, account) -> None:  # type: ignore[no-untyped-def]
    """An attempt interrupted between the uploads and /feed: its photos (saved as progress) are attached by the
    next attempt, not uploaded again; exactly one post."""
    ident = account("facebook")
    ad, seen = spied(settings)
    saved: list[str] = []
    first = publication(ident, "facebook", "two photos", IMG[:2])
    first = first.__class__(**{**first.__dict__, "save_progress": saved.append})
    from backend.networks.sandbox import errors

    errors.configure_errors("facebook", "2", path=r"/feed$", times=1)
    out = ad.publish(first)
    assert out.state == "failed" and saved
    seen.clear()
    retry = first.__class__(**{**first.__dict__, "resume": saved[-1]})
    done = ad.publish(retry)
    assert done.state == "published"
    assert [r.url.path.rsplit("/", 1)[-1] for r in seen if r.method == "POST"] == ["feed"]
    assert len(list_published(platform="facebook")) == 1
