"""TikTok adapter against the sandbox emulator, and the exact requests it sends (NETWORKS.md section 1)."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest
import time_machine

from backend import clock
from backend.networks.base import NetworkError
from backend.networks.sandbox import list_published
from backend.networks.tiktok.adapter import TikTokAdapter
from backend.services.adapters import make_adapter
from tests.networks.conftest import IMG, VID, publication
from tests.networks.test_networks import loader
from tests.support.networks import own


@pytest.fixture(autouse=True)
def audited_app(settings, monkeypatch):  # type: ignore[no-untyped-def]
    """These tests post publicly: an audited TikTok app (socialpub's setting and the emulated app's); an
    unaudited one's refusals are tests/networks/test_tiktok_fidelity.py's."""
    monkeypatch.setenv("SOCIALPUB_TIKTOK_AUDITED", "true")
    settings.sandbox_apps = {"tiktok": {"audited": True}}


def tiktok_adapter(settings) -> TikTokAdapter:  # type: ignore[no-untyped-def]
    """The sandbox account's adapter, the bytes of VID given by the test loader (videos go by FILE_UPLOAD)."""
    return make_adapter("tiktok", settings, media_loader=loader)  # type: ignore[no-any-return]


def test_direct_video_happy_path(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad = tiktok_adapter(settings)
    pub = publication(ident, "tiktok", "my #video", [VID])
    out = ad.publish(pub)
    assert out.state == "pending" and out.tracking_ref.startswith("v_pub_file~v2.")
    done = ad.check_status(pub, out.tracking_ref)
    assert done.state == "published" and done.network_status == "PUBLISH_COMPLETE"
    assert done.external_post_id.isdigit() and len(done.external_post_id) == 19
    assert done.post_url == f"https://www.tiktok.com/@{ident.username}/video/{done.external_post_id}"
    rows = list_published(platform="tiktok")
    assert [(r["external_id"], r["text"], r["status"]) for r in rows] == [
        (done.external_post_id, "my #video", "published")
    ]


def test_processing_is_a_function_of_the_clock(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 3.0
    ident = account("tiktok", "slow")
    ad = tiktok_adapter(settings)
    pub = publication(ident, "tiktok", "x", [VID])
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        out = ad.publish(pub)
        assert ad.check_status(pub, out.tracking_ref).network_status == "PROCESSING_UPLOAD"  # FILE_UPLOAD
        t.move_to(start + timedelta(seconds=29))  # slow = 10 x 3 s
        assert ad.check_status(pub, out.tracking_ref).state == "pending"
        t.move_to(start + timedelta(seconds=30.5))
        assert ad.check_status(pub, out.tracking_ref).state == "published"


def test_draft_video_goes_to_inbox_without_text(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad = tiktok_adapter(settings)
    pub = publication(
        ident,
        "tiktok",
        "caption",
        [VID],
        {"tiktok": {"postMode": "MEDIA_UPLOAD", "privacyLevel": "SELF_ONLY"}},
    )
    out = ad.publish(pub)
    assert out.tracking_ref.startswith("v_inbox_file~")
    done = ad.check_status(pub, out.tracking_ref)
    assert done.state == "inbox_delivered" and done.network_status == "SEND_TO_USER_INBOX"
    assert list_published(platform="tiktok")[0]["text"] == ""


def test_photo_carousel_draft_keeps_title(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad = tiktok_adapter(settings)
    pub = publication(ident, "tiktok", "five photos", IMG[:5], {"tiktok": {"postMode": "MEDIA_UPLOAD"}})
    out = ad.publish(pub)
    assert out.tracking_ref.startswith("p_inbox_url~")
    assert ad.check_status(pub, out.tracking_ref).state == "inbox_delivered"
    row = list_published(platform="tiktok")[0]
    assert row["title"] == "five photos" and len(row["media"]) == 5 and row["kind"] == "photo"


@pytest.mark.parametrize(
    "behaviour,state,fail_type,code",
    [
        ("fail-permanent", "failed", "permanent", "file_format_check_failed"),
        ("fail-retriable", "failed", "retriable", "internal_error"),
        ("rate-limited", "failed", "retriable", "rate_limit_exceeded"),
    ],
)
def test_behaviours_classified(settings, account, behaviour, state, fail_type, code) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok", behaviour)
    ad = tiktok_adapter(settings)
    pub = publication(ident, "tiktok", "x", [VID])
    out = ad.publish(pub)
    if out.state == "pending":
        out = ad.check_status(pub, out.tracking_ref)
    assert (out.state, out.fail_type, out.network_code) == (state, fail_type, code)
    assert out.fail_reason and "TikTok" in out.fail_reason
    if code == "rate_limit_exceeded":
        assert out.retry_after_s == 60


def test_flaky_fails_every_other_call(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok", "flaky")
    ad = tiktok_adapter(settings)
    results = [ad.publish(publication(ident, "tiktok", f"p{i}", [VID])) for i in range(4)]
    assert [r.state for r in results] == ["failed", "pending", "failed", "pending"]
    assert results[0].fail_type == "retriable"


def test_rate_limit_six_inits_per_minute(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad = tiktok_adapter(settings)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        outs = [ad.publish(publication(ident, "tiktok", f"p{i}", [VID])) for i in range(7)]
        assert [o.state for o in outs[:6]] == ["pending"] * 6
        assert (outs[6].state, outs[6].network_code, outs[6].fail_type) == (
            "failed",
            "rate_limit_exceeded",
            "retriable",
        )
        t.move_to(start + timedelta(seconds=61))
        assert ad.publish(publication(ident, "tiktok", "later", [VID])).state == "pending"


def test_pending_drafts_cap_and_daily_cap(settings, account) -> None:  # type: ignore[no-untyped-def]
    own(settings, "tiktok").sandbox_daily_posts = 3
    ident = account("tiktok")
    ad = tiktok_adapter(settings)
    draft = {"tiktok": {"postMode": "MEDIA_UPLOAD"}}
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        for i in range(5):
            t.move_to(start + timedelta(minutes=i))
            assert ad.publish(publication(ident, "tiktok", "d", [VID], draft)).state == "pending"
        t.move_to(start + timedelta(minutes=6))
        out = ad.publish(publication(ident, "tiktok", "d", [VID], draft))
        assert out.network_code == "spam_risk_too_many_pending_share" and out.fail_type == "retriable"
        assert "drafts" in out.fail_reason
        for i in range(3):
            t.move_to(start + timedelta(minutes=7 + i))
            assert ad.publish(publication(ident, "tiktok", "p", [VID])).state == "pending"
        t.move_to(start + timedelta(minutes=11))
        out = ad.publish(publication(ident, "tiktok", "p", [VID]))
        assert out.network_code == "spam_risk_too_many_posts"
        t.move_to(start + timedelta(days=1, minutes=12))
        assert ad.publish(publication(ident, "tiktok", "p", [VID])).state == "pending"


def test_private_account_privacy(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok", private=True)
    assert "PUBLIC_TO_EVERYONE" not in ident.privacy_level_options
    ad = tiktok_adapter(settings)
    # no privacy chosen: refused before anything is sent, naming the account's options
    out = ad.publish(publication(ident, "tiktok", "x", [VID], {"tiktok": {}}))
    assert (out.network_code, out.fail_type) == ("privacy_level_required_for_target", "permanent")
    assert "FOLLOWER_OF_CREATOR, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY" in (out.fail_reason or "")
    assert list_published(platform="tiktok") == []
    opts = {"tiktok": {"privacyLevel": "FOLLOWER_OF_CREATOR"}}
    assert ad.publish(publication(ident, "tiktok", "x", [VID], opts)).state == "pending"
    out = ad.publish(
        publication(ident, "tiktok", "x", [VID], {"tiktok": {"privacyLevel": "PUBLIC_TO_EVERYONE"}})
    )
    assert (out.network_code, out.fail_type) == ("privacy_level_option_mismatch", "permanent")


def test_status_read_with_another_account_is_refused(settings, account) -> None:  # type: ignore[no-untyped-def]
    a, b = account("tiktok", name="A"), account("tiktok", name="B")
    ad: TikTokAdapter = tiktok_adapter(settings)
    publish_id = ad.init_photo(a.access_token, image_urls=[IMG[0].url], post_mode="MEDIA_UPLOAD", title="t")
    assert ad.fetch_status(a.access_token, publish_id)["status"] == "SEND_TO_USER_INBOX"
    with pytest.raises(NetworkError) as exc:
        ad.fetch_status(b.access_token, publish_id)
    assert exc.value.code == "token_not_authorized_for_specified_publish_id" and exc.value.http_status == 400
    with pytest.raises(NetworkError) as exc:
        ad.fetch_status(a.access_token, "p_pub_url~v2.0000")
    assert exc.value.code == "invalid_publish_id"
    with pytest.raises(NetworkError) as exc:
        ad.creator_info("act.nope")
    assert (exc.value.code, exc.value.fail_type, exc.value.http_status) == (
        "access_token_invalid",
        "permanent",
        401,
    )


def test_creator_info(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok", name="Chef Anna")
    info = tiktok_adapter(settings).creator_info(ident.access_token)
    assert info["creator_username"] == ident.username and info["creator_nickname"] == "Chef Anna"
    assert info["privacy_level_options"] == ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]


def test_find_existing_after_crash(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad = tiktok_adapter(settings)
    pub = publication(ident, "tiktok", "only once", [VID], attempted_at=clock.now())
    assert ad.find_existing(pub) is None
    out = ad.publish(pub)  # reached the network; pretend we crashed before recording out.tracking_ref
    found = ad.find_existing(pub)
    assert found is not None and found.state == "published"
    assert found.external_post_id == ad.check_status(pub, out.tracking_ref).external_post_id
    assert len(list_published(platform="tiktok")) == 1
    other = publication(ident, "tiktok", "another text", [VID], attempted_at=clock.now())
    assert ad.find_existing(other) is None


@pytest.mark.parametrize("behaviour,processing_s", [("ok", 3.0), ("slow", 30.0)])
def test_a_direct_post_is_listed_only_once_processed(
    settings,
    account,
    behaviour,  # type: ignore[no-untyped-def]
    processing_s,
) -> None:
    """The video list shows public posts only: while TikTok processes an accepted init, find_existing reads
    "absent", which is why absence counts only after the listing delay (the sandbox's: its processing time)."""
    from types import SimpleNamespace

    from backend.services.adapters import listing_delay_s

    settings.sandbox_processing_s = 3.0
    ident = account("tiktok", behaviour)
    ad = tiktok_adapter(settings)
    sandbox_account = SimpleNamespace(platform="tiktok", kind="sandbox", behaviour=behaviour)
    assert listing_delay_s(sandbox_account, settings) == processing_s  # type: ignore[arg-type]
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        pub = publication(ident, "tiktok", "processing first", [VID], attempted_at=clock.now())
        out = ad.publish(pub)  # accepted: TikTok has it
        t.move_to(start + timedelta(seconds=processing_s - 0.5))
        assert (
            ad.find_existing(pub) is None
        )  # inside the listing delay: absent from the list, not from TikTok
        t.move_to(start + timedelta(seconds=processing_s + 0.5))
        found = ad.find_existing(pub)
        assert (
            found is not None
            and found.external_post_id == ad.check_status(pub, out.tracking_ref).external_post_id
        )


def test_listing_delays_of_live_networks(settings) -> None:  # type: ignore[no-untyped-def]
    """Live accounts: the adapters' documented listing lag (TikTok: processing and moderation), overridable per
    network with SOCIALPUB_LISTING_DELAY_S; the sandbox's other networks list at once, like theirs."""
    from types import SimpleNamespace

    from backend.services.adapters import listing_delay_s

    def delay(platform: str, kind: str) -> float:
        return listing_delay_s(SimpleNamespace(platform=platform, kind=kind, behaviour="ok"), settings)  # type: ignore[arg-type]

    settings.sandbox_processing_s = 3.0
    assert delay("tiktok", "live") == 600.0
    assert [
        delay(p, k) for p in ("facebook", "instagram", "linkedin", "youtube") for k in ("live", "sandbox")
    ] == [0.0] * 8
    settings.listing_delay_s = {"tiktok": 1800, "youtube": 120}
    assert (delay("tiktok", "live"), delay("youtube", "live"), delay("tiktok", "sandbox")) == (
        1800.0,
        120.0,
        3.0,
    )


# --- the exact requests (NETWORKS.md) ---------------------------------------------------------------


def _recording_adapter(responses: list[httpx.Response]) -> tuple[TikTokAdapter, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return responses.pop(0)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    # SOCIALPUB_MEDIA_BY_URL=tiktok: videos by PULL_FROM_URL (FILE_UPLOAD: tests/networks/test_tiktok_upload.py)
    return TikTokAdapter(client, "https://open.tiktokapis.com", media_by_url=True, audited=True), seen


def ok(data: dict) -> httpx.Response:
    return httpx.Response(200, json={"data": data, "error": {"code": "ok", "message": "", "log_id": "x"}})


def creator(
    options: tuple[str, ...] = ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"), **kw
) -> httpx.Response:  # type: ignore[no-untyped-def]
    """creator_info's answer, read before every direct post."""
    info = {
        "creator_username": "brand",
        "creator_nickname": "Brand",
        "privacy_level_options": list(options),
        "comment_disabled": False,
        "duet_disabled": False,
        "stitch_disabled": False,
        "max_video_post_duration_sec": 600,
        **kw,
    }
    return ok(info)


def test_exact_direct_video_request(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, seen = _recording_adapter([creator(), ok({"publish_id": "v_pub_url~v2.1"})])
    pub = publication(
        ident, "tiktok", "cap", [VID], {"tiktok": {"privacyLevel": "SELF_ONLY", "disableDuet": False}}
    )
    assert ad.publish(pub).tracking_ref == "v_pub_url~v2.1"
    assert str(seen[0].url).endswith("/v2/post/publish/creator_info/query/")  # before every direct post
    req = seen[1]
    assert (req.method, str(req.url)) == ("POST", "https://open.tiktokapis.com/v2/post/publish/video/init/")
    assert req.headers["authorization"] == f"Bearer {ident.access_token}"
    assert req.headers["content-type"] == "application/json; charset=UTF-8"
    assert json.loads(req.content) == {
        # interactions stay off unless the creator turned them on (TikTok's UX rules): duets on, the others off
        "post_info": {
            "title": "cap",
            "privacy_level": "SELF_ONLY",
            "disable_comment": True,
            "disable_duet": False,
            "disable_stitch": True,
            "brand_content_toggle": False,
            "brand_organic_toggle": False,
        },
        "source_info": {"source": "PULL_FROM_URL", "video_url": VID.url},
    }


def test_exact_inbox_and_photo_requests(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, seen = _recording_adapter(
        [ok({"publish_id": "v_inbox_url~v2.1"}), creator(), ok({"publish_id": "p_pub_url~v2.2"})]
    )
    ad.publish(
        publication(
            ident,
            "tiktok",
            "cap",
            [VID],
            {"tiktok": {"postMode": "MEDIA_UPLOAD", "privacyLevel": "SELF_ONLY"}},
        )
    )
    assert str(seen[0].url).endswith("/v2/post/publish/inbox/video/init/")
    assert json.loads(seen[0].content) == {"source_info": {"source": "PULL_FROM_URL", "video_url": VID.url}}
    ad.publish(
        publication(
            ident,
            "tiktok",
            "two",
            IMG[:2],
            {"tiktok": {"privacyLevel": "PUBLIC_TO_EVERYONE", "autoAddMusic": True}},
        )
    )
    assert str(seen[2].url).endswith("/v2/post/publish/content/init/")
    assert json.loads(seen[2].content) == {
        "post_info": {
            "title": "two",
            "privacy_level": "PUBLIC_TO_EVERYONE",
            "disable_comment": True,
            "auto_add_music": True,
            "brand_content_toggle": False,
            "brand_organic_toggle": False,
        },
        "source_info": {
            "source": "PULL_FROM_URL",
            "photo_cover_index": 0,
            "photo_images": [IMG[0].url, IMG[1].url],
        },
        "post_mode": "DIRECT_POST",
        "media_type": "PHOTO",
    }


def test_error_in_200_envelope_and_retry_after(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")
    ad, _ = _recording_adapter(
        [
            httpx.Response(
                200, json={"data": {}, "error": {"code": "url_ownership_unverified", "message": "m"}}
            ),
            httpx.Response(
                429,
                headers={"Retry-After": "17"},
                json={"data": {}, "error": {"code": "rate_limit_exceeded", "message": "slow down"}},
            ),
            httpx.Response(503, text="upstream down"),
        ]
    )
    pub = publication(ident, "tiktok", "x", [VID], {"tiktok": {"privacyLevel": "SELF_ONLY"}})
    a, b, c = ad.publish(pub), ad.publish(pub), ad.publish(pub)
    assert (a.fail_type, a.network_code) == ("permanent", "url_ownership_unverified")
    assert (b.fail_type, b.retry_after_s) == ("retriable", 17)
    assert c.fail_type == "retriable"


def test_timeout_is_ambiguous(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("tiktok")

    def boom(req: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=req)

    ad = TikTokAdapter(httpx.Client(transport=httpx.MockTransport(boom)), media_loader=loader)
    out = ad.publish(
        publication(
            ident, "tiktok", "x", [VID], {"tiktok": {"privacyLevel": "SELF_ONLY", "postMode": "MEDIA_UPLOAD"}}
        )
    )
    assert out.fail_type == "retriable" and out.ambiguous
