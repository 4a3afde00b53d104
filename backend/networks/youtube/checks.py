"""YouTube's `accounts doctor` hooks (backend/networks/doctor.py): what the configured Google Cloud project
implies before any browser step, and what a connected channel's grant allows. Sources: the fidelity table in
docs.md (Y4 audit, Y14-Y17 OAuth, Y5/Y11 scopes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.youtube.settings import YouTubeSettings

if TYPE_CHECKING:
    from backend.config import Settings

SCOPE = "https://www.googleapis.com/auth/"
# the scopes that allow each need (videos.insert; channels/playlistItems/videos.list), Y-INS and Y-DISC
UPLOAD = frozenset(SCOPE + s for s in ("youtube.upload", "youtube", "youtube.force-ssl", "youtubepartner"))
READ = frozenset(SCOPE + s for s in ("youtube.readonly", "youtube", "youtube.force-ssl", "youtubepartner"))
AUDIT_FORM = "https://developers.google.com/youtube/data/guides/quota_and_compliance_audits"
RECONNECT = (
    "reconnect it with `socialpub accounts connect youtube` and leave every permission Google asks ticked"
)


def check_app(settings: Settings) -> list[Finding]:
    own = settings.network_settings(YouTubeSettings)
    out: list[Finding] = []
    if not own.audited:
        out.append(
            Finding(
                "youtube_not_audited",
                "warning",
                "the Google Cloud project has not passed the YouTube API Services audit: YouTube locks every "
                "video it uploads private, whatever privacy the post asks (posts succeed with the warning "
                "youtube_private_lock)",
                f"request the audit ({AUDIT_FORM}); once passed, set SOCIALPUB_YOUTUBE_AUDITED=1",
            )
        )
    if own.publishing_status == "testing":
        out.append(
            Finding(
                "google_testing_mode",
                "warning",
                "the project's OAuth consent screen is in Testing: only its listed test users (100 at most) can "
                "connect, and Google expires their refresh tokens 7 days after consent (the channel then needs "
                "reconnecting every week)",
                "add your Google account as a test user (Google Auth Platform > Audience); publish the app "
                "(In production) to keep tokens beyond 7 days, then set SOCIALPUB_YOUTUBE_PUBLISHING_STATUS="
                "production",
            )
        )
    elif not own.verified:
        out.append(
            Finding(
                "google_unverified",
                "warning",
                "the OAuth app is in production but not verified by Google: consent shows the \"Google hasn't "
                'verified this app" screen (Advanced > continue) and its users are capped',
                "submit the app for Google's verification (Google Auth Platform > Verification centre); once "
                "verified, set SOCIALPUB_YOUTUBE_VERIFIED=1",
            )
        )
    if own.client_type == "web":
        out.append(
            Finding(
                "youtube_web_client",
                "warning",
                "the OAuth client is a Web application: Google accepts only its registered redirect URIs, so "
                "`accounts connect youtube` on a random port is refused (redirect_uri_mismatch)",
                "connect with `--port N` after registering http://127.0.0.1:N/callback on the client, or create "
                "a Desktop app client (any loopback port) and set SOCIALPUB_YOUTUBE_CLIENT_TYPE=desktop",
            )
        )
    return out


def check_account(granted_scopes: Sequence[str]) -> list[Finding]:
    granted = set(granted_scopes)
    if not granted:
        return []
    out: list[Finding] = []
    if not granted & UPLOAD:
        out.append(
            Finding(
                "youtube_scope_upload_missing",
                "error",
                "the channel's grant lacks youtube.upload: YouTube refuses every upload",
                RECONNECT,
            )
        )
    if not granted & READ:
        out.append(
            Finding(
                "youtube_scope_readonly_missing",
                "error",
                "the channel's grant lacks youtube.readonly: socialpub cannot read a video back (its privacy, "
                "its processing) nor look for it after an interrupted upload (such posts end 'check the account')",
                RECONNECT,
            )
        )
    return out


CHECKS = NetworkChecks(check_app, check_account)
