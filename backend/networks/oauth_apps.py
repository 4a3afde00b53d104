"""A network's OAuth app (issue 17; ../shared/ANCHORS.md "OAuth and token life"; docs/sandbox.md for the emulators'
side): its endpoints, and the three things only the network knows — which accounts a grant reaches, the cheapest
call that proves a token works, how its API words a refusal. Each network's package declares its `OAuthApp` (its
app.py, the registry entry's `app`); the flows are backend/networks/oauth.py (authorize, code exchange,
discovery, health check) and backend/networks/tokens.py (refresh).

Endpoints: the real hosts by default. `SOCIALPUB_<NETWORK>_OAUTH_BASE` replaces their origin (scheme, host, port;
the paths stay the real ones, which is how `socialpub sandbox serve` serves them); unset, an API base on a
loopback host (an emulator: `SOCIALPUB_<NETWORK>_BASE_URL=http://127.0.0.1:P…`) lends its origin.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from backend.config import Settings
from backend.networks.oauth_types import App, Endpoints, OAuthApp
from backend.networks.registry import UnknownNetwork, get
from backend.outbound.guard import host_is_local

if TYPE_CHECKING:
    from backend.networks.settings import NetworkSettings


class NotConfigured(Exception):
    """The network's OAuth app is not configured: the message names the settings to set."""


def _loopback(url: str) -> bool:
    return host_is_local(urlsplit(url).hostname or "")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _rebase(url: str, origin: str) -> str:
    parts = urlsplit(url)
    return origin.rstrip("/") + parts.path + (f"?{parts.query}" if parts.query else "")


def network_settings(platform: str, settings: Settings) -> NetworkSettings:
    own = get(platform).settings_of(settings)
    if own is None:
        raise NotConfigured(f"{platform} has no settings of its own")
    return own


def api_base(platform: str, settings: Settings) -> str:
    return network_settings(platform, settings).api_base


def oauth_app(platform: str) -> OAuthApp:
    """The network's OAuth app; NotConfigured for a network without one (or no such network)."""
    try:
        found = get(platform).oauth_app()
    except UnknownNetwork as exc:
        raise NotConfigured(str(exc)) from None
    if found is None:
        raise NotConfigured(f"{platform} has no OAuth app: connect it with --access-token")
    return found


def endpoints(platform: str, settings: Settings) -> Endpoints:
    """The network's OAuth endpoints as this configuration reaches them (and the scopes it asks)."""
    found = oauth_app(platform)
    real = found.endpoints
    if found.scopes is not None:
        real = replace(real, scopes=found.scopes(settings))
    own = network_settings(platform, settings)
    origin = own.oauth_base
    if not origin and _loopback(own.api_base):
        origin = _origin(own.api_base)
    if not origin:
        return real
    return replace(
        real,
        authorize=_rebase(real.authorize, origin),
        token=_rebase(real.token, origin),
        revoke=_rebase(real.revoke, origin) if real.revoke else None,
    )


def app(platform: str, settings: Settings) -> App:
    """The configured OAuth app of `platform`; NotConfigured says which settings are missing."""
    oauth_app(platform)
    own = network_settings(platform, settings)
    if not own.client_id or not own.client_secret:
        p = platform.upper()
        raise NotConfigured(
            f"{platform} is not configured for OAuth: set SOCIALPUB_{p}_CLIENT_ID and "
            f"SOCIALPUB_{p}_CLIENT_SECRET (the app's credentials from the network's developer "
            "console), or connect with --access-token"
        )
    return App(platform, own.client_id, own.client_secret, endpoints(platform, settings))
