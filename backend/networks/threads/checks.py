"""Threads' `accounts doctor` hooks (backend/networks/doctor.py): its own app (the Threads app ID, not the Meta app's:
missing credentials are the doctor service's generic finding), who may connect to it, the HTTPS-only redirect, where its media must be reachable from, and a
connected account's grant. Sources: the fidelity table (docs.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.facebook import NETWORK as FACEBOOK
from backend.networks.facebook.checks import missing_scopes
from backend.networks.threads import NETWORK
from backend.networks.threads.app import SCOPES
from backend.outbound.guard import not_public

if TYPE_CHECKING:
    from backend.config import Settings

PUBLISH_SCOPES = (
    SCOPES  # threads_basic: every endpoint (the listing too); threads_content_publish: publishing
)


def check_app(settings: Settings) -> list[Finding]:
    own = NETWORK.settings_of(settings)
    out: list[Finding] = []
    client_id = str(getattr(own, "client_id", "") or "")
    meta_id = str(getattr(FACEBOOK.settings_of(settings), "client_id", "") or "")
    if client_id and client_id == meta_id:
        out.append(
            Finding(
                "threads_app_id_is_meta_app_id",
                "error",
                "SOCIALPUB_THREADS_CLIENT_ID is the Meta app's ID: Threads refuses it at login (error 1349026, "
                "'No application data was given')",
                "use the Threads app ID and secret shown in the app's Threads use case settings, not the app's "
                "own ID",
            )
        )
    out.append(
        Finding(
            "threads_redirect_https_only",
            "warning",
            "Threads accepts only HTTPS redirect URIs, registered exactly: the CLI's loopback redirect "
            "(http://127.0.0.1:PORT/callback) cannot be registered and is refused at login (URL Blocked, 1349168)",
            "register an HTTPS redirect URI in the Threads use case settings (any page of yours) and connect with "
            "`socialpub accounts connect threads --redirect-uri URI` (then paste the address the browser lands on), "
            "or with --access-token (a token from the use case's User Token Generator)",
        )
    )
    if not getattr(own, "app_reviewed", False):
        out.append(
            Finding(
                "threads_testers_only",
                "warning",
                "the Threads app is not through App Review: only its Threads testers who accepted the invite can "
                "connect (anyone else is refused with error 1349245)",
                "add the account as a Threads tester (App roles), accept the invite in Threads (Settings → Account "
                "→ Website permissions → Invites); for everyone, pass App Review for threads_basic and "
                "threads_content_publish and set SOCIALPUB_THREADS_APP_REVIEWED=true",
            )
        )
    media = settings.s3_public_url or settings.public_media_url
    why = not_public(media)
    if why is not None:
        out.append(
            Finding(
                "media_url_not_public",
                "warning",
                f"Threads downloads every image and video from its URL, and the media host {media} cannot be "
                f"reached from the internet ({why}): posts with media will be refused at creation (text posts "
                "are fine)",
                "set SOCIALPUB_MEDIA_URL (or SOCIALPUB_S3_PUBLIC_URL) to a public address that serves the media "
                "host, e.g. a CDN, a bucket or a tunnel",
            )
        )
    return out


def check_account(granted: Sequence[str]) -> list[Finding]:
    return missing_scopes(NETWORK.label, granted, PUBLISH_SCOPES, NETWORK.name)


CHECKS = NetworkChecks(check_app, check_account)
