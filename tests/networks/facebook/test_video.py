"""Facebook video (issue 29): the video id is what the target stores and what reconciliation compares (the Page's
videos, GET /{page}/videos); processing is followed to ready (`status.video_status`) before the target succeeds;
a video still processing is never reported absent (no second upload)."""

from __future__ import annotations

from datetime import timedelta

import httpx
import time_machine

from backend import clock
from backend.networks.sandbox import list_published
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, VID, publication
from tests.networks.test_networks import loader


def test_a_video_is_pending_until_processing_is_ready(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 60.0
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    pub = publication(ident, "facebook", "a video", [VID])
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        out = ad.publish(pub)
        assert out.state == "pending" and out.tracking_ref
        assert ad.check_status(pub, out.tracking_ref).state == "pending"
        assert list_published(platform="facebook") == []  # not the Page's post while processing
        t.move_to(start + timedelta(seconds=61))
        done = ad.check_status(pub, out.tracking_ref)
        assert done.state == "published" and done.external_post_id == out.tracking_ref  # the video id
        assert f"/{ident.external_account_id}/videos/{done.external_post_id}" in str(done.post_url)
        [listed] = list_published(platform="facebook")
        assert listed["external_id"] == done.external_post_id


def test_emulator_reports_video_status_phases(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 60.0
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    handler = sandbox(settings).handler("facebook")
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        video = ad.publish(publication(ident, "facebook", "phases", [VID])).tracking_ref

        def status() -> dict:  # type: ignore[type-arg]
            url = f"https://graph.facebook.sandbox.invalid/v26.0/{video}"
            r = handler(
                httpx.Request("GET", url, params={"fields": "status", "access_token": ident.access_token})
            )
            assert r.status_code == 200
            return r.json()["status"]

        processing = status()
        assert processing["video_status"] == "processing"
        assert processing["uploading_phase"]["status"] == "complete"
        assert processing["publishing_phase"]["status"] == "not_started"
        t.move_to(start + timedelta(seconds=61))
        ready = status()
        assert ready["video_status"] == "ready" and ready["publishing_phase"]["status"] == "complete"


def test_a_video_whose_processing_fails_ends_permanent_with_metas_reason(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 10.0
    ident = account("facebook", behaviour="fail-permanent")
    ad = make_adapter("facebook", settings, media_loader=loader)
    pub = publication(ident, "facebook", "broken video", [VID])
    out = ad.publish(pub)  # the upload is accepted; processing fails
    assert out.state == "failed" and out.tracking_ref
    done = ad.check_status(pub, str(out.tracking_ref))
    assert done.state == "failed" and done.fail_type == "permanent"
    assert "could not process" in str(done.fail_reason).lower() and list_published(platform="facebook") == []


def test_reconciliation_finds_a_video_by_the_pages_videos(settings, account) -> None:  # type: ignore[no-untyped-def]
    """The upload's answer was lost: find_existing finds the video (its id, what the target stores) and says
    where it stands — never "absent", so never a second upload."""
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    pub = publication(ident, "facebook", "lost answer", [VID], attempted_at=clock.now())
    sent = ad.publish(pub)
    found = ad.find_existing(pub)
    assert found is not None and found.succeeded
    assert found.external_post_id == sent.external_post_id  # the video id, what the target stored
    assert found.external_post_id == list_published(platform="facebook")[0]["external_id"]


def test_a_video_still_processing_is_never_reported_absent(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 300.0
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        pub = publication(ident, "facebook", "slow video", [VID], attempted_at=clock.now())
        sent = ad.publish(pub)
        found = ad.find_existing(pub)
        # known to the Page as processing: tracked, not published again
        assert found is not None and found.state == "pending" and found.tracking_ref == sent.tracking_ref
        t.move_to(start + timedelta(seconds=301))
        assert ad.find_existing(pub).state == "published"  # type: ignore[union-attr]


def test_a_video_not_listed_yet_is_not_conclusive(settings, account) -> None:  # type: ignore[no-untyped-def]
    """Nothing listed shortly after an upload whose answer was lost: not "absent" (the Page may list it once
    processed) but a failure still ambiguous, checked again before any upload."""
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    pub = publication(ident, "facebook", "never arrived", [VID], attempted_at=clock.now())
    out = ad.find_existing(pub)
    assert out is not None and out.state == "failed" and out.ambiguous and out.fail_type == "retriable"
    with time_machine.travel(clock.now() + timedelta(hours=1), tick=False):
        assert ad.find_existing(pub) is None  # past the processing window: absent is conclusive


def test_text_and_photo_still_reconcile_by_published_posts(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    pub = publication(ident, "facebook", "a photo", [IMG[0]], attempted_at=clock.now())
    sent = ad.publish(pub)
    found = ad.find_existing(pub)
    assert found is not None and found.external_post_id == sent.external_post_id
