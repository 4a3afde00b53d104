"""Issue 17 item 4: a live network that fetches media from its URL cannot reach a loopback or private media host —
the post is refused at creation (and at an edit of its media), per target, saying what to configure."""

from __future__ import annotations

import base64

import pytest

from backend import clock
from backend.ids import new_id
from backend.outbound import guard
from backend.services import workspace
from backend.store.models import Account
from tests.conftest import key_headers
from tests.media import corpus
from tests.support.networks import own


@pytest.fixture
def laptop(settings, owner):  # type: ignore[no-untyped-def]
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.media_url = "http://127.0.0.1:8000/media/"
    return settings


def live(owner, platform: str) -> str:  # type: ignore[no-untyped-def]
    now = clock.now()
    return Account.create(
        id=new_id("acc"),
        workspace=owner.workspace_id,
        platform=platform,
        name=f"live {platform}",
        kind="live",
        status="active",
        access_token="t",
        connected_at=now,
        created_at=now,
    ).id


def image(client, owner) -> str:  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/media",
        json={"base64": base64.b64encode(corpus.jpeg(400, 400)).decode()},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 201, r.text
    return r.json()["url"]


def test_a_loopback_media_url_is_refused_for_networks_that_pull(client, owner, laptop):
    url = image(client, owner)
    assert url.startswith("http://127.0.0.1:8000/media/")
    ig, li = live(owner, "instagram"), live(owner, "linkedin")
    r = client.post(
        "/v1/posts",
        json={
            "targets": [
                {"platform": "instagram", "channelId": ig},
                {"platform": "linkedin", "channelId": li},
            ],
            "content": "hi",
            "mediaUrls": [url],
        },
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_targets"
    [problem] = r.json()["details"]
    assert problem["platform"] == "instagram" and problem["error"] == "media_url_not_public"
    assert "SOCIALPUB_MEDIA_URL" in problem["message"] and problem["mediaUrl"] == url
    # linkedin uploads the bytes: fine on its own
    r = client.post(
        "/v1/posts",
        json={"targets": [{"platform": "linkedin", "channelId": li}], "content": "hi", "mediaUrls": [url]},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text


def test_sandbox_accounts_and_public_hosts_are_not_concerned(settings, client, owner, laptop, monkeypatch):
    from backend.services import accounts

    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    url = image(client, owner)
    r = client.post(
        "/v1/posts",
        json={"targets": ["instagram"], "content": "hi", "mediaUrls": [url]},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text  # the sandbox reaches our media host in-process
    laptop.media_url = "https://media.example.com/m/"
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["93.184.216.34"])  # stubbed: no look-up
    assert guard.not_public("https://media.example.com/m/x.jpg") is None
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["10.0.0.7"])
    assert "10.0.0.7" in (guard.not_public("https://media.example.com/m/x.jpg") or "")
    assert guard.not_public("http://localhost:8000/m/x.jpg") and guard.not_public("http://[::1]/x.jpg")


def test_an_edit_of_the_media_is_checked_too(client, owner, laptop, monkeypatch):
    laptop.media_by_url = "facebook"  # facebook uploads the bytes unless configured to fetch the URL
    fb = live(owner, "facebook")
    laptop.media_url = "https://media.example.com/m/"
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["93.184.216.34"])
    r = client.post(
        "/v1/posts",
        json={
            "targets": [{"platform": "facebook", "channelId": fb}],
            "content": "later",
            "scheduledAt": clock.iso(clock.now().replace(year=clock.now().year + 1)),
        },
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text
    laptop.media_url = "http://127.0.0.1:8000/media/"
    url = image(client, owner)
    r = client.patch(
        f"/v1/posts/{r.json()['id']}", json={"mediaUrls": [url]}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and r.json()["details"][0]["error"] == "media_url_not_public"


def video(client, owner) -> str:  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/media",
        json={"base64": base64.b64encode(corpus.video("mp4")).decode()},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 201, r.text
    return r.json()["url"]


def post(client, owner, targets, urls):  # type: ignore[no-untyped-def]
    return client.post(
        "/v1/posts",
        json={
            "targets": [{"platform": p, "channelId": c} for p, c in targets],
            "content": "hi",
            "mediaUrls": urls,
        },
        headers=key_headers(owner.api_key),
    )


def test_only_what_pulls_is_refused_by_default(client, owner, laptop):
    """Bytes go up wherever the network allows it: facebook (photo, video) and tiktok videos are accepted from a
    laptop; a tiktok photo post (PULL_FROM_URL only) and instagram are refused."""
    img, vid = image(client, owner), video(client, owner)
    fb, tk, ig = live(owner, "facebook"), live(owner, "tiktok"), live(owner, "instagram")
    assert post(client, owner, [("facebook", fb)], [img]).status_code == 202
    assert post(client, owner, [("facebook", fb), ("tiktok", tk)], [vid]).status_code == 202
    r = post(client, owner, [("facebook", fb), ("tiktok", tk), ("instagram", ig)], [img])
    assert r.status_code == 400
    problems = {d["platform"]: d for d in r.json()["details"]}
    assert set(problems) == {"tiktok", "instagram"}
    assert (
        "photos" in problems["tiktok"]["message"] and "SOCIALPUB_MEDIA_URL" in problems["tiktok"]["message"]
    )


def test_configured_pull_is_refused_with_what_to_change(client, owner, laptop):
    laptop.media_by_url = "facebook,tiktok"
    vid = video(client, owner)
    fb, tk, li = live(owner, "facebook"), live(owner, "tiktok"), live(owner, "linkedin")
    r = post(client, owner, [("facebook", fb), ("tiktok", tk), ("linkedin", li)], [vid])
    assert r.status_code == 400
    problems = {d["platform"]: d for d in r.json()["details"]}
    assert set(problems) == {"facebook", "tiktok"}
    for d in problems.values():
        assert d["error"] == "media_url_not_public" and "SOCIALPUB_MEDIA_BY_URL" in d["message"]
    r = post(
        client, owner, [("tiktok", tk)], [image(client, owner)]
    )  # a photo post pulls anyway: no "remove"
    [d] = r.json()["details"]
    assert "photos" in d["message"] and "SOCIALPUB_MEDIA_BY_URL" not in d["message"]


def test_the_rules_say_who_pulls():
    from backend.networks.base import MediaRef
    from backend.networks.registry import names
    from backend.networks.rules import rules_for

    RULES = {name: rules_for(name) for name in names()}
    img, vid = MediaRef("https://m/a.jpg", "image"), MediaRef("https://m/v.mp4", "video")
    table = {
        (p, by_url, kind): RULES[p].pulls_media(media, by_url)
        for p in RULES
        for by_url in (False, True)
        for kind, media in (("image", [img]), ("video", [vid]))
    }
    assert {k for k, pulls in table.items() if pulls} == {
        ("instagram", False, "image"),
        ("instagram", True, "image"),
        ("instagram", True, "video"),  # a video goes as bytes (resumable upload) unless configured
        ("threads", False, "image"),  # Threads downloads every media from its URL
        ("threads", False, "video"),
        ("threads", True, "image"),
        ("threads", True, "video"),
        ("tiktok", False, "image"),
        ("tiktok", True, "image"),
        ("tiktok", True, "video"),
        ("facebook", True, "image"),
        ("facebook", True, "video"),
    }
    assert not any(RULES[p].pulls_media([], True) for p in RULES)


def test_the_setting_names_networks_that_can_pull():
    from backend.config import Settings
    from backend.services.networks import check_settings

    assert Settings(media_by_url=" TikTok, facebook ").media_by_url_networks == {"tiktok", "facebook"}
    assert Settings().media_by_url_networks == frozenset()
    check_settings(Settings(media_by_url="tiktok,facebook,instagram"))
    with pytest.raises(ValueError, match="linkedin"):  # checked as the service starts (create_app)
        check_settings(Settings(media_by_url="linkedin"))


def test_a_network_served_on_this_machine_is_refused_a_loopback_media_host_too(client, owner, laptop):
    """An emulator on loopback (`socialpub sandbox serve instagram`, SOCIALPUB_INSTAGRAM_BASE_URL on 127.0.0.1) is
    as strict as Instagram: it refuses a media URL the real one could not fetch (9004 / 2207052), so the post is
    refused at creation with what to configure, as it would be for the real network — never accepted and failed
    at publication."""
    url = image(client, owner)
    own(laptop, "instagram").api_base = "http://127.0.0.1:8402"
    ig = live(owner, "instagram")
    r = client.post(
        "/v1/posts",
        json={"targets": [{"platform": "instagram", "channelId": ig}], "content": "hi", "mediaUrls": [url]},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 400, r.text
    [problem] = r.json()["details"]
    assert problem["error"] == "media_url_not_public" and "SOCIALPUB_MEDIA_URL" in problem["message"]
