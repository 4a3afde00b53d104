"""TikTok's `accounts doctor` hooks (backend/networks/doctor.py): what the configured app implies before any
browser step, and what a connected account's grant allows. Sources: the fidelity table in docs.md (rules
desktop-redirect, pkce-hex, app-scopes, unaudited-self-only, listing-public-only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.tiktok.app import ENDPOINTS
from backend.networks.tiktok.settings import TikTokSettings

if TYPE_CHECKING:
    from backend.config import Settings

PORTAL = "https://developers.tiktok.com/apps"
CLI_REDIRECT = "http://127.0.0.1:*/callback"
RECONNECT = (
    "reconnect it with `socialpub accounts connect tiktok` and leave every permission TikTok asks ticked"
)


def check_app(settings: Settings) -> list[Finding]:
    own = settings.network_settings(TikTokSettings)
    out: list[Finding] = []
    if own.app_kind == "web":
        out.append(
            Finding(
                "tiktok_web_app_loopback",
                "error",
                "the TikTok app is a Web app (SOCIALPUB_TIKTOK_APP_KIND=web): TikTok accepts only https "
                "redirect URIs for it, and `accounts connect` listens on a loopback http address",
                f"add a Desktop platform to the app's Login Kit ({PORTAL}) with the redirect URI {CLI_REDIRECT}"
                " and unset SOCIALPUB_TIKTOK_APP_KIND, or connect through an https redirect of your own",
            )
        )
    else:
        out.append(
            Finding(
                "tiktok_desktop_redirect",
                "warning",
                "`accounts connect tiktok` redirects to a loopback address: TikTok accepts it only when the "
                f"app's Login Kit has a Desktop platform with {CLI_REDIRECT} registered (PKCE with a hex "
                "challenge, which socialpub sends)",
                f"register {CLI_REDIRECT} under Login Kit > Desktop in {PORTAL}",
            )
        )
    out.append(
        Finding(
            "tiktok_scopes_asked",
            "warning",
            f"connect asks {', '.join(ENDPOINTS.scopes)}: the app must have Login Kit and the Content Posting "
            "API (Direct Post on) — TikTok refuses the consent page for a scope the app does not hold",
            f"add the Content Posting API product and enable Direct Post in {PORTAL}",
        )
    )
    if not own.audited:
        out.append(
            Finding(
                "tiktok_not_audited",
                "warning",
                "the TikTok app is not audited: TikTok accepts its direct posts only as SELF_ONLY (Only me) to "
                "private accounts, from at most 5 accounts a day; a post to a public account is refused "
                "before anything is sent. TikTok does not audit tools that upload to your own accounts",
                "make the TikTok account private and choose SELF_ONLY, or post drafts (postMode MEDIA_UPLOAD); "
                "once TikTok audited the app, set SOCIALPUB_TIKTOK_AUDITED=1",
            )
        )
    return out


def check_account(granted_scopes: Sequence[str]) -> list[Finding]:
    if not granted_scopes:
        return []
    granted = set(granted_scopes)
    out: list[Finding] = []
    if "video.publish" not in granted:
        out.append(
            Finding(
                "tiktok_no_direct_post",
                "error",
                "the TikTok account did not grant video.publish: direct posts are impossible",
                RECONNECT,
            )
        )
    if "video.upload" not in granted:
        out.append(
            Finding(
                "tiktok_no_drafts",
                "warning",
                "the TikTok account did not grant video.upload: drafts (postMode MEDIA_UPLOAD) are impossible",
                RECONNECT,
            )
        )
    if "video.list" not in granted:
        out.append(
            Finding(
                "tiktok_unverifiable_reconciliation",
                "warning",
                "socialpub cannot list this account's posts (no video.list; TikTok lists public posts only): "
                "when a post's answer is lost before TikTok named it, the post ends failed asking you to check "
                "the TikTok account instead of publishing it again",
                "check the TikTok app when a post says so; nothing to configure",
            )
        )
    return out


CHECKS = NetworkChecks(check_app, check_account)
