"""Facebook's `accounts doctor` hooks (backend/networks/doctor.py): the configured Meta app and a connected Page's
grant. Sources: the fidelity table (docs.md). The Graph API version's lifecycle is the doctor service's generic
check (the registry entry's `lifecycle`, SOCIALPUB_GRAPH_API_VERSION)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.facebook import NETWORK

if TYPE_CHECKING:
    from backend.config import Settings

# what publishing needs (Pages API "Posts": pages_manage_posts; Video API: + pages_read_engagement, pages_show_list)
# and what reconciliation reads (published_posts and /{page}/videos: pages_read_engagement)
PUBLISH_SCOPES = ("pages_show_list", "pages_manage_posts", "pages_read_engagement")


def app_mode_findings(label: str, mode: str) -> list[Finding]:
    """What a Meta app's mode implies (SOCIALPUB_FACEBOOK_APP_MODE; one Meta app serves Facebook and Instagram)."""
    if mode == "live":
        return [
            Finding(
                "meta_redirect_https_only",
                "warning",
                f"the Meta app is Live: {label} accepts only HTTPS redirect URIs, registered exactly; the CLI's "
                "loopback redirect (http://127.0.0.1:PORT/callback) is refused at login",
                "register an HTTPS redirect URI in the app's Facebook Login settings, or connect with "
                "--access-token (a Page token from the Graph API Explorer)",
            )
        ]
    return [
        Finding(
            "meta_app_development_mode",
            "warning",
            f"the Meta app is in development mode (Standard Access): only people with a role on the app can "
            f"connect, and the {label} posts it publishes are seen only by them",
            "add the people who connect as testers (App Dashboard → App roles); to publish for everyone, switch "
            "the app to Live (a privacy-policy URL is required) and set SOCIALPUB_FACEBOOK_APP_MODE=live",
        )
    ]


def redirect_findings(label: str, network: str, port: int | None, mode: str) -> list[Finding]:
    """A development-mode app whose loopback redirect is not configured: Strict Mode sends the browser back only to a
    Valid OAuth Redirect URI, exactly, and a new app has none (fidelity table: Strict Mode)."""
    if port is not None or mode == "live":  # a Live app: meta_redirect_https_only says more
        return []
    env = f"SOCIALPUB_{network.upper()}_REDIRECT_PORT"
    return [
        Finding(
            "meta_redirect_uri",
            "warning",
            f"{label} sends the browser back only to a Valid OAuth Redirect URI registered on the Meta app, exactly "
            "(Strict Mode), and a new app has none: the CLI's loopback listener is refused (URL Blocked) until "
            "its URI is registered",
            f"choose a port (e.g. 53682), add http://127.0.0.1:53682/callback to the app's Facebook Login → "
            f"Settings → Valid OAuth Redirect URIs and set {env}=53682: `socialpub accounts connect {network}` "
            "then listens there",
        )
    ]


def missing_scopes(label: str, granted: Sequence[str], needed: Sequence[str], network: str) -> list[Finding]:
    missing = [s for s in needed if s not in set(granted)]
    if not granted or not missing:
        return []
    return [
        Finding(
            "scopes_missing",
            "error",
            f"the {label} account was connected without {', '.join(missing)}: publishing or checking for an "
            "earlier publication will be refused",
            f"reconnect it (socialpub accounts connect {network}) and grant every permission asked",
        )
    ]


def check_app(settings: Settings) -> list[Finding]:
    own = NETWORK.settings_of(settings)
    mode = str(getattr(own, "app_mode", "development"))
    port = getattr(own, "redirect_port", None)
    return app_mode_findings(NETWORK.label, mode) + redirect_findings(NETWORK.label, NETWORK.name, port, mode)


def check_account(granted: Sequence[str]) -> list[Finding]:
    return missing_scopes(NETWORK.label, granted, PUBLISH_SCOPES, NETWORK.name)


CHECKS = NetworkChecks(check_app, check_account)
