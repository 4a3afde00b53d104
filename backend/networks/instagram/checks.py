"""Instagram's `accounts doctor` hooks (backend/networks/doctor.py): the Meta app (shared with Facebook), where
its images must be reachable from, and a connected account's grant. Sources: the fidelity table (docs.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.facebook import NETWORK as FACEBOOK
from backend.networks.facebook.checks import app_mode_findings, missing_scopes, redirect_findings
from backend.networks.instagram import NETWORK
from backend.outbound.guard import not_public

if TYPE_CHECKING:
    from backend.config import Settings

# IG User Media: create needs instagram_basic, instagram_content_publish, pages_read_engagement; listing (find_existing)
# instagram_basic + pages_read_engagement or pages_show_list; discovery reads /me/accounts (pages_show_list)
PUBLISH_SCOPES = ("instagram_basic", "instagram_content_publish", "pages_show_list", "pages_read_engagement")
# ... and when the person's Page role comes through a Business Manager: business_management (listing; older copies:
# publishing too) or ads_management (every copy)
BUSINESS_SCOPES = ("business_management", "ads_management")


def check_app(settings: Settings) -> list[Finding]:
    own = FACEBOOK.settings_of(settings)
    mode = str(getattr(own, "app_mode", "development"))
    out = app_mode_findings(NETWORK.label, mode)
    port = getattr(NETWORK.settings_of(settings), "redirect_port", None)
    out += redirect_findings(NETWORK.label, NETWORK.name, port, mode)
    media = settings.s3_public_url or settings.public_media_url
    why = not_public(media)
    if why is not None:
        out.append(
            Finding(
                "media_url_not_public",
                "warning",
                f"Instagram fetches images from their URL, and the media host {media} cannot be reached from the "
                f"internet ({why}): posts with images will be refused at creation (videos are uploaded as bytes)",
                "set SOCIALPUB_MEDIA_URL (or SOCIALPUB_S3_PUBLIC_URL) to a public address that serves the media "
                "host, e.g. a CDN, a bucket or a tunnel",
            )
        )
    return out


def check_account(granted: Sequence[str]) -> list[Finding]:
    out = missing_scopes(NETWORK.label, granted, PUBLISH_SCOPES, NETWORK.name)
    if granted and not set(BUSINESS_SCOPES) & set(granted):
        out.append(
            Finding(
                "business_management_missing",
                "warning",
                "the Instagram account was connected without business_management: if your role on the linked Page "
                "comes through a Business Manager, Instagram refuses to list its media (and may refuse to publish)",
                "reconnect it (socialpub accounts connect instagram) and grant business_management",
            )
        )
    return out


CHECKS = NetworkChecks(check_app, check_account)
