"""Dedicated TikTok publishing (issue 7; spec 2.6, 3.5, 4.6, 8): field rules, accounts, draft vs direct,
terminal statuses through the sandbox behaviours, TikTok's limits as errors, worker tracking, events."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.networks.sandbox.store import SandboxItem
from backend.services import accounts
from backend.store.models import Account, Event, Job, MediaHold, TikTokPublish
from tests.conftest import key_headers
from tests.media import corpus
from tests.support.networks import own

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test

PHOTO = "/v1/publish/tiktok/photo"
VIDEO = "/v1/publish/tiktok/video"


def status_path(publish_id: str) -> str:
    return f"/v1/publish/tiktok/status/{publish_id}"


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    """GROWTH plan (room for several accounts), no per-key rate limit, immediate sandbox processing."""
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    return settings


def connect(settings, owner, name: str = "Brand TikTok", behaviour: str = "ok") -> Account:  # type: ignore[no-untyped-def]
    return accounts.connect_sandbox(settings, owner.workspace_id, "tiktok", name, behaviour)


@pytest.fixture
def tk(settings, owner, fast) -> Account:  # type: ignore[no-untyped-def]
    return connect(settings, owner)


def upload(client, owner, data: bytes) -> str:  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/media", json={"base64": base64.b64encode(data).decode()}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 201, r.text
    return r.json()["url"]


@pytest.fixture
def images(client, owner, fast) -> list[str]:  # type: ignore[no-untyped-def]
    return [upload(client, owner, corpus.jpeg(200 + i, 150)) for i in range(5)]


@pytest.fixture
def video_url(client, owner, fast) -> str:  # type: ignore[no-untyped-def]
    return upload(client, owner, corpus.video("mp4"))


def post(client, owner, path: str, body: dict, expect: int = 200) -> dict:  # type: ignore[no-untyped-def]
    if body.get("postMode") == "DIRECT_POST" and "privacyLevel" not in body:
        body = {**body, "privacyLevel": "PUBLIC_TO_EVERYONE"}  # the creator's choice, where not the subject
    r = client.post(path, json=body, headers=key_headers(owner.api_key))
    assert r.status_code == expect, r.text
    return r.json()


def status(client, owner, publish_id: str, channel_id: str | None = None, expect: int = 200) -> dict:  # type: ignore[no-untyped-def]
    params = {"channelId": channel_id} if channel_id else None
    r = client.get(status_path(publish_id), params=params, headers=key_headers(owner.api_key))
    assert r.status_code == expect, r.text
    return r.json()


def sent(publish_id: str) -> SandboxItem:
    """What the sandbox TikTok received for this publication."""
    return SandboxItem.get_by_id(publish_id)


def record(publish_id: str) -> TikTokPublish:
    return TikTokPublish.get(TikTokPublish.publish_id == publish_id)


def work(settings, seconds: float = 10.0) -> int:  # type: ignore[no-untyped-def]
    return Worker(settings, concurrency=1).run_until_idle(max_seconds=seconds, settle_s=0)


# ---- field rules ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"imageUrls": []}, "imageUrls"),
        ({"imageUrls": ["x"] * 36}, "imageUrls"),
        ({"title": "t" * 91}, "title"),
        ({"title": "😀" * 46}, "title"),  # 92 UTF-16 units, as TikTok counts
        ({"description": "d" * 4001}, "description"),
        ({"postMode": "PUBLIC"}, "postMode"),
        ({"privacyLevel": "EVERYONE", "postMode": "DIRECT_POST"}, "privacyLevel"),
        ({"disableComment": "yes", "postMode": "DIRECT_POST"}, "disableComment"),
        ({"unknownField": 1}, "unknownField"),
    ],
)
def test_photo_field_rules(client, owner, tk, images, change, field):
    body = {"imageUrls": images[:2], **change}
    r = client.post(PHOTO, json=body, headers=key_headers(owner.api_key))
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "validation_error"
    assert any(d["field"].startswith(field) for d in r.json()["details"]), r.json()
    assert TikTokPublish.select().count() == 0 and SandboxItem.select().count() == 0


def test_photo_limits_are_inclusive(client, owner, tk, images):
    body = {"imageUrls": images[:1] * 35, "title": "😀" * 45, "description": "d" * 4000}
    out = post(client, owner, PHOTO, body)
    assert out["title"] == "😀" * 45 and len(sent(out["publishId"]).media) == 35


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": "t" * 2201}, "title"),
        ({"videoUrl": ""}, "videoUrl"),
        ({"disableDuet": 1, "postMode": "DIRECT_POST"}, "disableDuet"),
        ({"autoAddMusic": True}, "autoAddMusic"),  # a photo-only field
    ],
)
def test_video_field_rules(client, owner, tk, video_url, change, field):
    r = client.post(VIDEO, json={"videoUrl": video_url, **change}, headers=key_headers(owner.api_key))
    assert r.status_code == 400, r.text
    assert any(d["field"].startswith(field) for d in r.json()["details"]), r.json()


def test_video_url_is_required(client, owner, tk):
    r = client.post(VIDEO, json={"title": "x"}, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["details"][0]["field"] == "videoUrl"


def test_video_title_limit_is_inclusive(client, owner, tk, video_url):
    out = post(client, owner, VIDEO, {"videoUrl": video_url, "title": "t" * 2200, "postMode": "DIRECT_POST"})
    assert sent(out["publishId"]).data["post_info"]["title"] == "t" * 2200


@pytest.mark.parametrize("path", [PHOTO, VIDEO])
def test_media_not_on_the_media_host_says_to_ingest(client, owner, tk, images, path):
    body = (
        {"imageUrls": [images[0], "https://cdn.example.com/a.jpg"]}
        if path == PHOTO
        else {"videoUrl": "https://cdn.example.com/v.mp4"}
    )
    r = client.post(path, json=body, headers=key_headers(owner.api_key))
    assert r.status_code == 400
    err = r.json()
    assert err["error"] == "media_not_on_media_host"
    assert "POST /v1/media" in err["message"]
    assert [d["url"] for d in err["details"]] == [
        "https://cdn.example.com/" + ("a.jpg" if path == PHOTO else "v.mp4")
    ]
    assert SandboxItem.select().count() == 0


def test_unknown_file_on_the_media_host(client, owner, tk, settings):
    r = client.post(
        PHOTO,
        json={"imageUrls": [settings.public_media_url + "nope.jpg"]},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 400 and r.json()["error"] == "media_unreadable"
    assert r.json()["details"][0]["field"] == "imageUrls[0]"


def test_wrong_media_type(client, owner, tk, images, video_url):
    r = client.post(PHOTO, json={"imageUrls": [images[0], video_url]}, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "unsupported_media_type"
    assert r.json()["details"][0]["field"] == "imageUrls[1]"
    r = client.post(VIDEO, json={"videoUrl": images[0]}, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "unsupported_media_type"


def test_another_workspaces_file_is_refused(client, owner, other_owner, tk, fast):
    theirs = upload(client, other_owner, corpus.jpeg(90, 90))
    r = client.post(PHOTO, json={"imageUrls": [theirs]}, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "media_unreadable"


@pytest.mark.parametrize(
    "field", ["privacyLevel", "disableComment", "autoAddMusic", "brandContentToggle", "brandOrganicToggle"]
)
def test_direct_only_fields_are_refused_in_draft_mode(client, owner, tk, images, field):
    value = "SELF_ONLY" if field == "privacyLevel" else True
    r = client.post(PHOTO, json={"imageUrls": images[:1], field: value}, headers=key_headers(owner.api_key))
    assert r.status_code == 400
    assert r.json()["details"] == [
        {"field": field, "error": "direct_post_only", "message": "accepted with postMode DIRECT_POST only"}
    ]
    assert SandboxItem.select().count() == 0


def test_privacy_level_checked_against_the_accounts_options(client, owner, tk, images):
    r = client.post(
        PHOTO,
        json={"imageUrls": images[:1], "postMode": "DIRECT_POST", "privacyLevel": "FOLLOWER_OF_CREATOR"},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 400
    err = r.json()
    assert err["error"] == "privacy_level_option_mismatch"
    assert err["details"][0]["allowed"] == ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]
    assert SandboxItem.select().count() == 0


# ---- accounts --------------------------------------------------------------------------------------------
def test_no_tiktok_account(client, owner, fast, images):
    r = client.post(PHOTO, json={"imageUrls": images[:1]}, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == "channel_not_connected"


def test_channel_must_be_a_tiktok_account_of_the_workspace(settings, client, owner, tk, images):
    fb = accounts.connect_sandbox(settings, owner.workspace_id, "facebook", "Page")
    for channel in (fb.id, "acc_unknown"):
        r = client.post(
            PHOTO, json={"imageUrls": images[:1], "channelId": channel}, headers=key_headers(owner.api_key)
        )
        assert r.status_code == 400 and r.json()["error"] == "channel_not_connected"
        assert r.json()["details"][0]["channelId"] == channel


def test_disconnected_channel_is_refused(client, owner, tk, images):
    accounts.disconnect(owner.workspace_id, tk.id)
    r = client.post(
        PHOTO, json={"imageUrls": images[:1], "channelId": tk.id}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and "disconnected" in r.json()["message"]


def test_default_account_is_the_oldest_connected_of_two(settings, client, owner, fast, images):
    first = connect(settings, owner, "First")
    with time_machine.travel(clock.now() + timedelta(seconds=5), tick=False):
        second = connect(settings, owner, "Second")
    out = post(client, owner, PHOTO, {"imageUrls": images[:1]})
    assert out["channelId"] == first.id and record(out["publishId"]).account_id == first.id
    assert (
        SandboxItem.get_by_id(out["publishId"]).account_id
        != SandboxItem.get_by_id(
            post(client, owner, PHOTO, {"imageUrls": images[:1], "channelId": second.id})["publishId"]
        ).account_id
    )
    # once the oldest is disconnected, the next oldest is the default
    accounts.disconnect(owner.workspace_id, first.id)
    assert post(client, owner, PHOTO, {"imageUrls": images[:1]})["channelId"] == second.id


def test_status_read_with_the_wrong_account_is_refused(settings, client, owner, fast, images):
    first = connect(settings, owner, "First")
    with time_machine.travel(clock.now() + timedelta(seconds=5), tick=False):
        second = connect(settings, owner, "Second")
    mine = post(client, owner, PHOTO, {"imageUrls": images[:1], "channelId": second.id})["publishId"]
    # without channelId the default (first) account reads it: refused the way TikTok refuses it
    err = status(client, owner, mine, expect=403)
    assert err["error"] == "token_not_authorized_for_specified_publish_id"
    assert err["details"][0]["channelId"] == first.id and err["details"][0]["expectedChannelId"] == second.id
    assert f"channelId={second.id}" in err["message"]
    assert (
        status(client, owner, mine, first.id, expect=403)["error"]
        == "token_not_authorized_for_specified_publish_id"
    )
    assert status(client, owner, mine, second.id)["status"] == "SEND_TO_USER_INBOX"
    # the default account reads its own without channelId
    own = post(client, owner, PHOTO, {"imageUrls": images[:1]})["publishId"]
    assert status(client, owner, own)["status"] == "SEND_TO_USER_INBOX"
    assert (
        status(client, owner, own, second.id, expect=403)["error"]
        == "token_not_authorized_for_specified_publish_id"
    )


def test_unknown_publish_id_and_another_workspace(settings, client, owner, other_owner, tk, images, fast):
    assert status(client, owner, "p_inbox_url~v2.123", expect=404)["error"] == "invalid_publish_id"
    pid = post(client, owner, PHOTO, {"imageUrls": images[:1]})["publishId"]
    connect(settings, other_owner, "Theirs")
    r = client.get(status_path(pid), headers=key_headers(other_owner.api_key))
    assert r.status_code == 404 and r.json()["error"] == "invalid_publish_id"


def test_status_channel_must_be_a_tiktok_account(client, owner, tk, images):
    pid = post(client, owner, PHOTO, {"imageUrls": images[:1]})["publishId"]
    assert status(client, owner, pid, "acc_nope", expect=400)["error"] == "channel_not_connected"


# ---- draft vs direct: what is sent, what is echoed ---------------------------------------------------
def test_photo_draft_is_the_default_and_prefills_title_and_description(client, owner, tk, images):
    out = post(
        client, owner, PHOTO, {"imageUrls": images, "title": "Five", "description": "A carousel #five"}
    )
    assert out == {
        "success": True,
        "publishId": out["publishId"],
        "title": "Five",
        "description": "A carousel #five",
        "postMode": "MEDIA_UPLOAD",
        "channelId": tk.id,
    }
    item = sent(out["publishId"])
    assert out["publishId"].startswith("p_inbox_url~")
    assert item.mode == "PHOTO:MEDIA_UPLOAD" and item.media == images
    assert item.data["post_info"] == {
        "title": "Five",
        "description": "A carousel #five",
    }  # no privacy in a draft
    assert item.data["photo_cover_index"] == 0
    assert record(out["publishId"]).post_mode == "MEDIA_UPLOAD"


def test_photo_direct_sends_privacy_and_interactions(client, owner, tk, images):
    out = post(
        client,
        owner,
        PHOTO,
        {
            "imageUrls": images[:2],
            "title": "Live",
            "description": "Now",
            "postMode": "DIRECT_POST",
            "privacyLevel": "SELF_ONLY",
            "disableComment": True,
            "autoAddMusic": False,
        },
    )
    assert out["title"] == "Live" and out["description"] == "Now" and out["postMode"] == "DIRECT_POST"
    item = sent(out["publishId"])
    assert out["publishId"].startswith("p_pub_url~") and item.mode == "PHOTO:DIRECT_POST"
    assert item.data["post_info"] == {
        "title": "Live",
        "description": "Now",
        "privacy_level": "SELF_ONLY",
        "disable_comment": True,
        "auto_add_music": False,
        "brand_content_toggle": False,  # the disclosure, off unless the creator turns it on: always sent
        "brand_organic_toggle": False,
    }


def test_direct_without_privacy_level_is_refused_naming_the_options(client, owner, tk, images):
    r = client.post(
        PHOTO, json={"imageUrls": images[:1], "postMode": "DIRECT_POST"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and r.json()["error"] == "privacy_level_required_for_target", r.text
    assert r.json()["details"][0]["allowed"] == ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]
    out = post(client, owner, PHOTO, {"imageUrls": images[:1], "postMode": "DIRECT_POST"})
    assert sent(out["publishId"]).data["post_info"] == {
        "privacy_level": "PUBLIC_TO_EVERYONE",
        "disable_comment": True,  # comments off unless the creator turns them on
        "brand_content_toggle": False,
        "brand_organic_toggle": False,
    }
    assert out["title"] == "" and out["description"] == ""


def test_video_draft_echoes_the_title_without_sending_it(client, owner, tk, video_url):
    out = post(client, owner, VIDEO, {"videoUrl": video_url, "title": "Typed in the app"})
    assert out == {
        "success": True,
        "status": "PROCESSING_UPLOAD",
        "publishId": out["publishId"],
        "title": "Typed in the app",
        "postMode": "MEDIA_UPLOAD",
        "channelId": tk.id,
    }
    item = sent(out["publishId"])
    assert out["publishId"].startswith("v_inbox_file~") and item.mode == "VIDEO:MEDIA_UPLOAD"
    assert item.data["post_info"] == {} and item.text == ""
    assert item.media == [] and item.data["upload"]["video_size"] > 0  # FILE_UPLOAD: the bytes, not the URL


def test_video_direct_sends_title_privacy_and_interactions(client, owner, tk, video_url):
    out = post(
        client,
        owner,
        VIDEO,
        {
            "videoUrl": video_url,
            "title": "Hello #tiktok",
            "postMode": "DIRECT_POST",
            "privacyLevel": "MUTUAL_FOLLOW_FRIENDS",
            "disableComment": False,
            "disableDuet": True,
            "disableStitch": True,
        },
    )
    assert out["status"] == "PROCESSING_UPLOAD" and out["title"] == "Hello #tiktok"
    item = sent(out["publishId"])
    assert out["publishId"].startswith("v_pub_file~") and item.mode == "VIDEO:DIRECT_POST"
    assert item.data["post_info"] == {
        "title": "Hello #tiktok",
        "privacy_level": "MUTUAL_FOLLOW_FRIENDS",
        "disable_comment": False,
        "disable_duet": True,
        "disable_stitch": True,
        "brand_content_toggle": False,
        "brand_organic_toggle": False,
    }


def test_video_direct_sends_the_creators_commercial_content_disclosure(client, owner, tk, video_url):
    """TikTok's content sharing guidelines: the creator discloses promotional content ("Your brand":
    brand_organic_toggle) or a paid partnership ("Branded content": brand_content_toggle), and branded content is
    never SELF_ONLY — refused before anything is sent to TikTok."""
    out = post(
        client,
        owner,
        VIDEO,
        {
            "videoUrl": video_url,
            "postMode": "DIRECT_POST",
            "privacyLevel": "PUBLIC_TO_EVERYONE",
            "brandContentToggle": True,
            "brandOrganicToggle": True,
        },
    )
    info = sent(out["publishId"]).data["post_info"]
    assert (info["brand_content_toggle"], info["brand_organic_toggle"]) == (True, True)
    before = SandboxItem.select().count()
    r = client.post(
        VIDEO,
        json={
            "videoUrl": video_url,
            "postMode": "DIRECT_POST",
            "privacyLevel": "SELF_ONLY",
            "brandContentToggle": True,
        },
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 400 and r.json()["error"] == "branded_content_cannot_be_private", r.text
    assert r.json()["details"][0]["field"] == "privacyLevel"
    assert SandboxItem.select().count() == before


def test_media_is_held_for_the_pull_hour(client, owner, tk, images):
    out = post(client, owner, PHOTO, {"imageUrls": images[:2]})
    rec = record(out["publishId"])
    holds = list(MediaHold.select().where(MediaHold.ref == f"tiktok:{rec.id}"))
    assert len(holds) == 2
    for h in holds:
        assert abs((h.until - rec.created_at).total_seconds() - 3600) < 60


# ---- terminal statuses and fail reasons (sandbox behaviours) ------------------------------------------
def test_draft_ends_send_to_user_inbox(client, owner, tk, images, video_url):
    for out in (
        post(client, owner, PHOTO, {"imageUrls": images[:1]}),
        post(client, owner, VIDEO, {"videoUrl": video_url}),
    ):
        work(client.app.state.settings)  # a video's bytes are sent by the worker (FILE_UPLOAD)
        body = status(client, owner, out["publishId"])
        assert body["status"] == "SEND_TO_USER_INBOX" and "failReason" not in body


def test_direct_ends_publish_complete_with_the_post_id(client, owner, tk, images):
    out = post(client, owner, PHOTO, {"imageUrls": images[:1], "postMode": "DIRECT_POST"})
    body = status(client, owner, out["publishId"])
    assert body["status"] == "PUBLISH_COMPLETE" and "failReason" not in body
    assert body["publicPostIds"] == [sent(out["publishId"]).post_id]


@pytest.mark.parametrize(
    ("path", "reason"), [(PHOTO, "picture_size_check_failed"), (VIDEO, "file_format_check_failed")]
)
def test_fail_permanent_ends_failed_with_the_reason(
    settings, client, owner, fast, images, video_url, path, reason
):
    acc = connect(settings, owner, "Broken", "fail-permanent")
    body = {"imageUrls": images[:1]} if path == PHOTO else {"videoUrl": video_url}
    out = post(client, owner, path, {**body, "channelId": acc.id, "postMode": "DIRECT_POST"})
    work(client.app.state.settings)  # a video's bytes are sent by the worker (FILE_UPLOAD)
    got = status(client, owner, out["publishId"], acc.id)
    assert got["status"] == "FAILED" and got["failReason"] == reason and got["failMessage"]
    # never retried automatically: the worker sends nothing more, and the status stays
    work(client.app.state.settings)
    assert (
        SandboxItem.select().where(SandboxItem.account_id == sent(out["publishId"]).account_id).count() == 1
    )
    assert status(client, owner, out["publishId"], acc.id)["failReason"] == reason


def test_cancelled_pull_ends_failed_publish_cancelled(client, owner, tk, images, settings):
    from backend.services.adapters import make_adapter

    settings.sandbox_processing_s = 30
    out = post(client, owner, PHOTO, {"imageUrls": images[:1]})
    assert status(client, owner, out["publishId"])["status"] == "PROCESSING_DOWNLOAD"
    make_adapter("tiktok", settings).cancel(Account.get_by_id(tk.id).access_token, out["publishId"])
    with time_machine.travel(clock.now() + timedelta(seconds=2), tick=False):
        got = status(client, owner, out["publishId"])
    assert got["status"] == "FAILED" and got["failReason"] == "publish_cancelled"


def test_processing_statuses_until_ready(client, owner, tk, images, video_url, settings):
    settings.sandbox_processing_s = 30
    with time_machine.travel(clock.now(), tick=False) as t:
        v = post(client, owner, VIDEO, {"videoUrl": video_url})
        assert v["status"] == "PROCESSING_UPLOAD"
        got = status(client, owner, v["publishId"])  # the bytes are not sent yet (the worker sends them)
        assert got["status"] == "PROCESSING_UPLOAD" and "failReason" not in got
        work(settings)
        t.shift(2)
        assert status(client, owner, v["publishId"])["status"] == "PROCESSING_UPLOAD"  # TikTok processes
        t.shift(31)
        assert status(client, owner, v["publishId"])["status"] == "SEND_TO_USER_INBOX"


# ---- limits ----------------------------------------------------------------------------------------------
def test_seventh_publication_in_a_minute_is_rate_limited(client, owner, tk, images):
    with time_machine.travel(clock.now(), tick=False) as t:
        for _ in range(6):
            post(client, owner, PHOTO, {"imageUrls": images[:1], "postMode": "DIRECT_POST"})
        r = client.post(
            PHOTO,
            json={"imageUrls": images[:1], "postMode": "DIRECT_POST", "privacyLevel": "SELF_ONLY"},
            headers=key_headers(owner.api_key),
        )
        assert r.status_code == 429
        assert r.json()["error"] == "rate_limit_exceeded" and r.headers["Retry-After"] == "60"
        assert r.json()["details"][0] == {
            "platform": "tiktok",
            "error": "rate_limit_exceeded",
            "channelId": tk.id,
        }
        refused = TikTokPublish.select().where(TikTokPublish.publish_id.is_null()).get()
        assert refused.status == "FAILED" and refused.fail_reason == "rate_limit_exceeded"
        t.shift(61)
        post(client, owner, PHOTO, {"imageUrls": images[:1], "postMode": "DIRECT_POST"})


def test_rate_limited_account(settings, client, owner, fast, images):
    acc = connect(settings, owner, "Throttled", "rate-limited")
    r = client.post(
        PHOTO, json={"imageUrls": images[:1], "channelId": acc.id}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 429 and r.json()["error"] == "rate_limit_exceeded" and r.headers["Retry-After"]


def test_daily_cap(client, owner, tk, images, settings):
    own(settings, "tiktok").sandbox_daily_posts = 2
    for _ in range(2):
        post(client, owner, PHOTO, {"imageUrls": images[:1], "postMode": "DIRECT_POST"})
    r = client.post(
        PHOTO,
        json={"imageUrls": images[:1], "postMode": "DIRECT_POST", "privacyLevel": "SELF_ONLY"},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 403 and r.json()["error"] == "spam_risk_too_many_posts"
    assert "daily" in r.json()["message"]


def test_pending_drafts_cap(client, owner, tk, images, video_url):
    for i in range(5):
        post(
            client,
            owner,
            PHOTO if i % 2 else VIDEO,
            {"imageUrls": images[:1]} if i % 2 else {"videoUrl": video_url},
        )
    r = client.post(PHOTO, json={"imageUrls": images[:1]}, headers=key_headers(owner.api_key))
    assert r.status_code == 403 and r.json()["error"] == "spam_risk_too_many_pending_shares"
    assert "drafts" in r.json()["message"]
    # a direct post is not a draft: still accepted
    post(client, owner, PHOTO, {"imageUrls": images[:1], "postMode": "DIRECT_POST"})


def test_tiktok_down_is_a_502_and_flaky_succeeds_on_the_next_call(settings, client, owner, fast, images):
    down = connect(settings, owner, "Down", "fail-retriable")
    r = client.post(
        PHOTO, json={"imageUrls": images[:1], "channelId": down.id}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 502 and r.json()["error"] == "network_error" and "retry" in r.json()["message"]
    flaky = connect(settings, owner, "Flaky", "flaky")
    r = client.post(
        PHOTO, json={"imageUrls": images[:1], "channelId": flaky.id}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 502
    assert post(client, owner, PHOTO, {"imageUrls": images[:1], "channelId": flaky.id})["success"] is True


# ---- tracking by the worker (nobody polls) ------------------------------------------------------------
def test_worker_tracks_to_terminal_status_and_records_events(
    settings, client, owner, fast, images, video_url
):
    fast.sandbox_processing_s = 30
    bad = connect(settings, owner, "Broken", "fail-permanent")
    good = connect(settings, owner, "Good")
    with time_machine.travel(clock.now(), tick=False) as t:
        draft = post(client, owner, PHOTO, {"imageUrls": images, "title": "Five", "channelId": good.id})
        direct = post(
            client, owner, VIDEO, {"videoUrl": video_url, "postMode": "DIRECT_POST", "channelId": good.id}
        )
        broken = post(
            client, owner, VIDEO, {"videoUrl": video_url, "postMode": "DIRECT_POST", "channelId": bad.id}
        )
        ids = [draft["publishId"], direct["publishId"], broken["publishId"]]
        work(
            fast
        )  # the videos' bytes are sent; the first status read is due one poll interval after the init
        assert [record(p).status for p in ids] == [
            "PROCESSING_DOWNLOAD",
            "PROCESSING_UPLOAD",
            "PROCESSING_UPLOAD",
        ]
        assert [record(p).upload_url for p in ids[1:]] == [None, None]  # the upload is done
        t.shift(10.5)
        work(fast)
        # a FILE_UPLOAD video reads PROCESSING_UPLOAD at TikTok while it processes (a pull: PROCESSING_DOWNLOAD)
        assert [record(p).status for p in ids] == [
            "PROCESSING_DOWNLOAD",
            "PROCESSING_UPLOAD",
            "PROCESSING_UPLOAD",
        ]
        assert all(record(p).checks == 1 for p in ids)
        for _ in range(40):  # video processing is 30 s in the sandbox; the worker polls every 10 s
            t.shift(5)
            work(fast)
            if all(record(p).status in ("SEND_TO_USER_INBOX", "PUBLISH_COMPLETE", "FAILED") for p in ids):
                break
        assert [record(p).status for p in ids] == ["SEND_TO_USER_INBOX", "PUBLISH_COMPLETE", "FAILED"]
    assert record(ids[2]).fail_reason == "file_format_check_failed"
    assert record(ids[1]).public_post_ids == [sent(ids[1]).post_id]
    evts = {e.data["publishId"]: e for e in Event.select().where(Event.type.startswith("tiktok."))}
    assert set(evts) == set(ids)
    assert (
        evts[ids[0]].type == "tiktok.publish.inbox_delivered"
        and evts[ids[0]].data["status"] == "SEND_TO_USER_INBOX"
    )
    assert (
        evts[ids[1]].type == "tiktok.publish.completed" and evts[ids[1]].data["status"] == "PUBLISH_COMPLETE"
    )
    assert evts[ids[2]].type == "tiktok.publish.failed"
    assert (
        evts[ids[2]].data["failReason"] == "file_format_check_failed"
        and evts[ids[2]].data["channelId"] == bad.id
    )
    assert evts[ids[0]].subject_id == record(ids[0]).id and evts[ids[0]].workspace_id == owner.workspace_id
    assert not Job.select().where((Job.kind == "tiktok.track") & (Job.status == "queued")).exists()
    # exactly one event per publication, even when a status read follows
    status(client, owner, ids[0], good.id)
    assert Event.select().where(Event.type.startswith("tiktok.")).count() == 3


def test_status_read_and_worker_settle_once(client, owner, tk, images):
    out = post(client, owner, PHOTO, {"imageUrls": images[:1]})
    assert status(client, owner, out["publishId"])["status"] == "SEND_TO_USER_INBOX"
    work(client.app.state.settings)
    assert Event.select().where(Event.type == "tiktok.publish.inbox_delivered").count() == 1


def test_tracking_gives_up_at_the_deadline(settings, client, owner, fast, images):
    fast.sandbox_processing_s = 100_000
    connect(settings, owner, "Slow", "slow")
    with time_machine.travel(clock.now(), tick=False) as t:
        out = post(client, owner, PHOTO, {"imageUrls": images[:1]})
        work(fast)
        t.shift(2 * 3600 + 5)
        work(fast)
    got = status(client, owner, out["publishId"])
    assert got["status"] == "FAILED" and got["failReason"] == "tracking_timeout"
    assert Event.select().where(Event.type == "tiktok.publish.failed").count() == 1


def test_disconnected_account_ends_tracking(client, owner, tk, images, fast):
    fast.sandbox_processing_s = 60
    out = post(client, owner, PHOTO, {"imageUrls": images[:1]})
    accounts.disconnect(owner.workspace_id, tk.id)
    with time_machine.travel(clock.now() + timedelta(seconds=30), tick=False):
        work(fast)
    rec = record(out["publishId"])
    assert rec.status == "FAILED" and rec.fail_reason == "account_disconnected"
