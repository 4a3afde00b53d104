"""YouTube against its strict emulator, configured like a real Google Cloud project (a new one by default: not
audited by the YouTube API Services, consent screen in Testing): issue 29's findings, each reproduced here (the
fidelity table in backend/networks/youtube/docs.md names these tests)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import time_machine

from backend.networks.base import MediaRef, PublishOutcome, encode_ref
from backend.networks.sandbox.store import SandboxItem
from backend.networks.youtube.adapter import YouTubeAdapter
from backend.networks.youtube.emulator import UPLOAD_SESSION, arm_video_fate
from backend.services.adapters import sandbox
from tests.networks.conftest import VID, publication, resumed, saving

API = "https://www.googleapis.sandbox.invalid/youtube/v3"
UPLOAD = "https://www.googleapis.sandbox.invalid/upload/youtube/v3"
VIDEO = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 5000


def loader(media: MediaRef) -> bytes:
    return VIDEO


def yt(settings: Any, *, sleep: Any = None, spy: list[httpx.Request] | None = None, audited: bool = False):  # type: ignore[no-untyped-def]
    """The adapter talking to the in-process emulator of this test's sandbox, as `audited` a project."""
    settings.sandbox_apps = {"youtube": {"audited": True}} if audited else {}
    emu = sandbox(settings).transport("youtube")

    def handle(req: httpx.Request) -> httpx.Response:
        if spy is not None:
            spy.append(req)
        return emu.handle_request(req)

    client = httpx.Client(transport=httpx.MockTransport(handle))
    return YouTubeAdapter(client, API, UPLOAD, media_loader=loader, sleep=sleep or (lambda s: None))


def published(ad: YouTubeAdapter, pub: Any) -> PublishOutcome:
    out = ad.publish(pub)
    for _ in range(5):
        if out.state != "pending":
            break
        out = ad.check_status(pub, out.tracking_ref or "")
    return out


def privacy_read_back(ad: YouTubeAdapter, pub: Any, video_id: str) -> str:
    r = ad.client.get(f"{API}/videos", params={"part": "status", "id": video_id}, headers=ad._auth(pub))
    return str(r.json()["items"][0]["status"]["privacyStatus"])


# ---- F-Y1: an unaudited project's uploads are locked private ---------------------------------------------------
def test_a_new_projects_public_upload_is_locked_private_and_succeeds_with_a_warning(
    settings, account
) -> None:  # type: ignore[no-untyped-def]
    ad = yt(settings)
    pub = publication(account("youtube"), "youtube", "Launch day\nwatch it", [VID])
    out = published(ad, pub)
    assert out.state == "published", out.fail_reason
    assert privacy_read_back(ad, pub, out.external_post_id or "") == "private"
    (warning,) = out.warnings
    assert warning.code == "youtube_private_lock"
    assert "private" in warning.message and "audit" in warning.message
    assert "SOCIALPUB_YOUTUBE_AUDITED" in warning.message and "public" in warning.message


def test_an_audited_projects_upload_keeps_its_privacy_and_has_no_warning(settings, account) -> None:  # type: ignore[no-untyped-def]
    ad = yt(settings, audited=True)
    pub = publication(account("youtube"), "youtube", "Launch day\nwatch it", [VID])
    out = published(ad, pub)
    assert out.state == "published" and out.warnings == ()
    assert privacy_read_back(ad, pub, out.external_post_id or "") == "public"


def test_a_private_upload_asked_private_has_no_warning(settings, account) -> None:  # type: ignore[no-untyped-def]
    ad = yt(settings)
    pub = publication(
        account("youtube"), "youtube", "Private\nfor me", [VID], {"youtube": {"privacyStatus": "private"}}
    )
    out = published(ad, pub)
    assert out.state == "published" and out.warnings == ()


# ---- F-Y2: deleted / rejected / failed are final ----------------------------------------------------------------
@pytest.mark.parametrize(
    "status,reason,words",
    [
        ("deleted", None, "deleted"),
        ("rejected", "duplicate", "rejected the video (duplicate)"),
        ("rejected", "copyright", "rejected the video (copyright)"),
        ("failed", "invalidFile", "could not process the video (invalidFile)"),
    ],
)
def test_a_video_deleted_rejected_or_failed_during_processing_fails_for_good(  # type: ignore[no-untyped-def]
    settings, account, status, reason, words
) -> None:
    settings.sandbox_processing_s = 5.0
    ad = yt(settings)
    arm_video_fate(status, reason)
    pub = publication(account("youtube"), "youtube", "Doomed\nclip", [VID])
    first = ad.publish(pub)
    assert first.state == "pending" and first.network_status == "uploaded"
    with time_machine.travel(datetime.now(UTC) + timedelta(seconds=10), tick=False):
        out = ad.check_status(pub, first.tracking_ref or "")
    assert out.state == "failed" and out.fail_type == "permanent", out
    assert words in (out.fail_reason or "") and out.network_status == status


# ---- F-Y3: resuming after a 5xx backs off with jitter, as the official sample does ------------------------------
def test_an_upload_answered_503_backs_off_with_jitter_then_resumes_one_video(settings, account) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.sandbox.errors import configure_errors

    slept: list[float] = []
    seen: list[httpx.Request] = []
    ad = yt(settings, sleep=slept.append, spy=seen)
    ad.rng = lambda: 0.5
    pub = publication(account("youtube"), "youtube", "Backoff\nplease", [VID])
    # the bytes' PUT, then the status query asking how far they got: each answered 503 Backend Error
    configure_errors("youtube", "backendError", times=2, path="upload")
    out = published(ad, pub)
    assert out.state == "published", out.fail_reason
    assert slept == [0.5 * 2**1, 0.5 * 2**2]  # random() * 2**n before each new try (Y-SAMPLE)
    assert (
        SandboxItem.select()
        .where((SandboxItem.platform == "youtube") & (SandboxItem.kind == "video"))
        .count()
        == 1
    )


def test_a_retry_after_is_honoured_when_longer_than_the_jitter() -> None:
    from backend.networks.youtube.adapter import backoff_s

    assert backoff_s(1, 0.5, None) == 1.0
    assert backoff_s(3, 0.25, 20.0) == 20.0
    assert backoff_s(10, 1.0, None) == 32.0  # capped: the engine's own retries take longer outages


# ---- F-Y4: the project's videos.insert bucket, shared by every channel, until midnight Pacific ------------------
def test_the_projects_insert_bucket_is_shared_by_its_channels_and_resets_at_midnight_pacific(  # type: ignore[no-untyped-def]
    settings, account
) -> None:
    # 2026-11-28 10:00 PT = 18:00 UTC: the bucket resets at 2026-11-29 08:00 UTC
    with time_machine.travel(datetime(2026, 11, 28, 18, 0, tzinfo=UTC), tick=False):
        ad = yt(settings)
        one, two = account("youtube", name="One"), account("youtube", name="Two")
        for i in range(100):
            ident = one if i % 2 else two
            r = ad.client.post(
                f"{UPLOAD}/videos",
                params={"uploadType": "resumable", "part": "snippet,status"},
                headers={
                    "Authorization": f"Bearer {ident.access_token}",
                    "X-Upload-Content-Length": "10",
                    "X-Upload-Content-Type": "video/mp4",
                },
                json={"snippet": {"title": f"t{i}"}, "status": {"privacyStatus": "private"}},
            )
            assert r.status_code == 200, (i, r.text)
        out = ad.publish(publication(one, "youtube", "The 101st\ninsert", [VID]))
        assert out.state == "failed" and out.network_code == "quotaExceeded" and out.wait
        assert out.retry_after_s == pytest.approx(14 * 3600, abs=1)
    with time_machine.travel(datetime(2026, 11, 29, 8, 0, 1, tzinfo=UTC), tick=False):
        assert published(ad, publication(two, "youtube", "A new\nday", [VID])).state == "published"


def test_the_quota_answer_has_googles_shape(settings, account) -> None:  # type: ignore[no-untyped-def]
    ad = yt(settings)
    ident = account("youtube", behaviour="rate-limited")
    r = ad.client.post(
        f"{UPLOAD}/videos",
        params={"uploadType": "resumable"},
        headers={
            "Authorization": f"Bearer {ident.access_token}",
            "X-Upload-Content-Length": "10",
            "X-Upload-Content-Type": "video/mp4",
        },
        json={"snippet": {"title": "t"}},
    )
    (err,) = r.json()["error"]["errors"]
    assert r.status_code == 403 and (err["domain"], err["reason"]) == ("youtube.quota", "quotaExceeded")
    assert 'href="/youtube/v3/getting-started#quota"' in r.json()["error"]["message"]


# ---- F-Y8: reconciliation asks the saved upload session first ----------------------------------------------------
def test_an_attempt_cut_after_its_last_put_is_found_through_its_saved_session_without_listing(  # type: ignore[no-untyped-def]
    settings, account
) -> None:
    import dataclasses

    seen: list[httpx.Request] = []
    ad = yt(settings, spy=seen)
    saved: list[str] = []
    pub = dataclasses.replace(
        publication(account("youtube"), "youtube", "Cut\nafter the bytes", [VID]), save_progress=saved.append
    )
    real, emu = ad.client, sandbox(settings).transport("youtube")

    def cut_after_last_put(request: httpx.Request) -> httpx.Response:  # the bytes arrive, the answer is lost
        resp = emu.handle_request(request)
        if request.method == "PUT" and resp.status_code in (200, 201):
            raise httpx.ReadError("connection reset by peer", request=request)
        return resp

    ad.client = httpx.Client(transport=httpx.MockTransport(cut_after_last_put))
    ad.publish(pub)  # the engine records it unresolved; the session was saved before any byte was sent
    assert saved and "session" in saved[0]
    ad.client = real
    seen.clear()
    later = dataclasses.replace(pub, resume=saved[-1], attempted_at=datetime.now(UTC))
    found = ad.find_existing(later)
    assert found is not None and found.state == "published" and found.external_post_id
    assert [r.method for r in seen] == ["PUT", "GET"]  # the session's status, then videos.list: no listing
    assert "content-range" in seen[0].headers and seen[0].headers["content-range"].startswith("bytes */")
    assert (
        SandboxItem.select()
        .where((SandboxItem.platform == "youtube") & (SandboxItem.kind == "video"))
        .count()
        == 1
    )


def test_a_saved_session_that_created_nothing_is_absent_and_the_next_attempt_continues_it(  # type: ignore[no-untyped-def]
    settings, account
) -> None:
    import dataclasses

    ad = yt(settings)
    saved: list[str] = []
    pub = dataclasses.replace(
        publication(account("youtube"), "youtube", "Never\nsent", [VID]), save_progress=saved.append
    )
    ad._new_session(pub, VIDEO, "video/mp4")  # the session opened; the process died before any byte
    later = dataclasses.replace(pub, resume=saved[-1], attempted_at=datetime.now(UTC))
    assert ad.find_existing(later) is None
    assert published(ad, later).state == "published"
    uploads = SandboxItem.select().where((SandboxItem.platform == "youtube") & (SandboxItem.kind == "upload"))
    assert uploads.count() == 1  # the same session: no second insert spent


def test_an_attempt_that_saved_no_session_made_no_video_and_nothing_is_asked(settings, account) -> None:  # type: ignore[no-untyped-def]
    """`upload` saves its session before any byte, and only the bytes' last PUT makes a video: an attempt cut off
    before the save made nothing, whatever the channel holds under its title (here another target's upload)."""
    seen: list[httpx.Request] = []
    ad = yt(settings, spy=seen)
    ident = account("youtube")
    other = published(ad, publication(ident, "youtube", "Same\ntitle", [VID]))
    assert other.state == "published"
    seen.clear()
    cut = publication(ident, "youtube", "Same\ntitle", [VID], attempted_at=datetime.now(UTC))
    assert cut.resume is None
    assert ad.find_existing(cut) is None
    assert seen == []  # no listing to match by title


def test_a_session_youtube_no_longer_has_is_reconciled_by_the_uploads_listing(settings, account) -> None:  # type: ignore[no-untyped-def]
    seen: list[httpx.Request] = []
    ad = yt(settings, spy=seen)
    pub, saved = saving(
        publication(account("youtube"), "youtube", "Expired\nsession", [VID], attempted_at=datetime.now(UTC))
    )
    out = published(ad, pub)
    assert out.state == "published" and saved
    SandboxItem.delete().where(SandboxItem.id.startswith("upload:")).execute()  # YouTube forgot the session
    seen.clear()
    found = ad.find_existing(resumed(pub, saved))
    assert found is not None and found.state == "published"
    assert found.external_post_id == out.external_post_id
    assert [(r.method, r.url.path.rsplit("/", 1)[-1]) for r in seen] == [
        ("PUT", "videos"),  # the session's status: 404
        ("GET", "channels"),
        ("GET", "playlistItems"),
        ("GET", "videos"),
    ]


# ---- F-Y5: scopes: a grant without youtube.readonly cannot reconcile, never uploads twice -----------------------
def oauth_token(settings: Any, scopes: str) -> tuple[str, str]:
    """(access token, channel id) of a consent to the emulated Google app granting `scopes`."""
    from urllib.parse import parse_qs, urlsplit

    c = httpx.Client(
        transport=sandbox(settings).transport("youtube"), base_url="https://accounts.sandbox.invalid"
    )
    r = c.get(
        "/o/oauth2/v2/auth",
        params={
            "client_id": "app",
            "redirect_uri": "http://127.0.0.1:8765/callback",
            "response_type": "code",
            "scope": scopes,
            "access_type": "offline",
            "state": "s",
        },
    )
    code = parse_qs(urlsplit(r.headers["location"]).query)["code"][0]
    tok = c.post(
        "/token",
        data={
            "client_id": "app",
            "client_secret": "secret",
            "code": code,
            "redirect_uri": "http://127.0.0.1:8765/callback",
            "grant_type": "authorization_code",
        },
    ).json()["access_token"]
    channel = c.get(
        f"{API}/channels", params={"mine": "true", "part": "id"}, headers={"Authorization": f"Bearer {tok}"}
    )
    return tok, (channel.json()["items"][0]["id"] if channel.status_code == 200 else "")


def test_without_youtube_readonly_reconciliation_is_unverifiable_not_a_second_upload(settings) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.base import AccountCredentials, Publication, Unverifiable
    from backend.networks.rules import build_payload

    ad = yt(settings)
    token, _ = oauth_token(settings, "https://www.googleapis.com/auth/youtube.upload")
    r = ad.client.get(
        f"{API}/channels", params={"mine": "true"}, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 403 and r.json()["error"]["errors"][0]["reason"] == "insufficientPermissions"
    assert r.json()["error"]["details"][0]["reason"] == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    pub = Publication(
        build_payload("youtube", "No\nreadonly", [VID], None),
        AccountCredentials("UCx", token),
        "tgt_1",
        datetime.now(UTC),
        resume=encode_ref(session=f"{UPLOAD_SESSION}?uploadType=resumable&upload_id=gone", size=len(VIDEO)),
    )  # a saved session YouTube no longer has: only the listing could tell
    with pytest.raises(Unverifiable, match="youtube.readonly"):
        ad.find_existing(pub)


def test_without_youtube_upload_the_upload_is_refused_with_a_reconnect_hint(settings) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.base import AccountCredentials, Publication
    from backend.networks.rules import build_payload

    ad = yt(settings)
    token, channel = oauth_token(settings, "https://www.googleapis.com/auth/youtube.readonly")
    pub = Publication(
        build_payload("youtube", "No\nupload", [VID], None), AccountCredentials(channel, token), "tgt_1"
    )
    out = ad.publish(pub)
    assert out.state == "failed" and out.fail_type == "permanent" and out.auth_refused
    assert out.network_code == "insufficientPermissions" and "socialpub accounts connect youtube" in (
        out.fail_reason or ""
    )


# ---- accounts doctor: the project's review status and a channel's grant (checks.py) ------------------------------
def test_doctor_says_what_a_new_project_implies(settings) -> None:  # type: ignore[no-untyped-def]
    from backend.networks import registry

    checks = registry.get("youtube").network_checks()
    assert checks is not None
    found = {f.code: f for f in checks.check_app(settings)}
    assert set(found) == {"youtube_not_audited", "google_testing_mode"}
    assert all(f.severity == "warning" for f in found.values())
    assert "private" in found["youtube_not_audited"].message
    assert "SOCIALPUB_YOUTUBE_AUDITED=1" in found["youtube_not_audited"].fix
    assert (
        "7 days" in found["google_testing_mode"].message and "test user" in found["google_testing_mode"].fix
    )


def test_doctor_is_quiet_for_an_audited_published_verified_desktop_project(settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from backend.config import Settings
    from backend.networks.youtube.checks import check_app

    for name, value in {"AUDITED": "1", "PUBLISHING_STATUS": "production", "VERIFIED": "1"}.items():
        monkeypatch.setenv(f"SOCIALPUB_YOUTUBE_{name}", value)
    assert check_app(Settings(data_dir=settings.data_dir)) == []
    monkeypatch.setenv("SOCIALPUB_YOUTUBE_VERIFIED", "0")
    monkeypatch.setenv("SOCIALPUB_YOUTUBE_CLIENT_TYPE", "web")
    codes = [f.code for f in check_app(Settings(data_dir=settings.data_dir))]
    assert codes == ["google_unverified", "youtube_web_client"]


def test_doctor_checks_a_channels_grant() -> None:
    from backend.networks.youtube.checks import check_account

    up, ro = (
        "https://www.googleapis.com/auth/youtube.upload",
        "https://www.googleapis.com/auth/youtube.readonly",
    )
    assert check_account([up, ro]) == [] and check_account([]) == []
    assert check_account(["https://www.googleapis.com/auth/youtube.force-ssl"]) == []
    assert [f.code for f in check_account([up])] == ["youtube_scope_readonly_missing"]
    (missing,) = check_account([ro])
    assert missing.code == "youtube_scope_upload_missing" and missing.severity == "error"
    assert "socialpub accounts connect youtube" in missing.fix


def test_a_channels_own_upload_cap_is_a_separate_24_hour_wait(settings, account) -> None:  # type: ignore[no-untyped-def]
    from backend.networks.sandbox.errors import configure_errors

    ad = yt(settings)
    configure_errors("youtube", "uploadLimitExceeded")
    out = ad.publish(publication(account("youtube"), "youtube", "Capped\nchannel", [VID]))
    assert out.state == "failed" and out.network_code == "uploadLimitExceeded" and out.wait
    assert out.retry_after_s == 86400.0


def test_a_long_retry_after_ends_the_attempt_ambiguous_instead_of_sleeping(settings, account) -> None:  # type: ignore[no-untyped-def]
    """A 503 with `Retry-After: 600` on the bytes: no 10-minute sleep inside a job; the attempt ends retriable and
    ambiguous (the session holds what arrived: the next attempt asks it first, then continues it)."""
    slept: list[float] = []
    emu = sandbox(settings).transport("youtube")

    def busy(req: httpx.Request) -> httpx.Response:
        if req.method == "PUT":
            return httpx.Response(
                503, headers={"Retry-After": "600"}, json={"error": {"code": 503, "errors": []}}
            )
        return emu.handle_request(req)

    ad = YouTubeAdapter(
        httpx.Client(transport=httpx.MockTransport(busy)),
        API,
        UPLOAD,
        media_loader=loader,
        sleep=slept.append,
    )
    out = ad.publish(publication(account("youtube"), "youtube", "Busy\nYouTube", [VID]))
    assert out.state == "failed" and out.fail_type == "retriable" and out.ambiguous
    assert out.retry_after_s == 600 and slept == []
