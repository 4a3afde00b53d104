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

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from backend.config import Settings
from backend.networks.registry import UnknownNetwork, get
from backend.outbound.guard import host_is_local

if TYPE_CHECKING:
    import httpx

    from backend.networks.base import NetworkError
    from backend.networks.settings import NetworkSettings


@dataclass(frozen=True)
class Endpoints:
    authorize: str
    token: str
    revoke: str | None
    scopes: tuple[str, ...]
    scope_separator: str  # TikTok and Facebook: ","; LinkedIn and Google: " "
    client_id_param: str = "client_id"  # TikTok: client_key
    pkce: bool = True
    # how the S256 challenge is written: RFC 7636's BASE64URL(SHA256(verifier)), or its lowercase hex (TikTok's
    # Login Kit for desktop: developers.tiktok.com/doc/login-kit-desktop; its official SDKs send hex too)
    pkce_encoding: str = "base64url"
    extra_authorize: tuple[tuple[str, str], ...] = ()  # Google: access_type=offline, prompt=consent
    refreshable: bool = (
        False  # a refresh token keeps the grant alive (TikTok, Google; LinkedIn when given one)
    )
    rotates_refresh: bool = False  # a refresh may re-issue the refresh token: store the new one atomically
    token_method: str = "POST"  # the code exchange: a form POST (OAuth 2.0), or GET with a query (Graph API)


# (Settings, the HTTP client, the grant's TokenSet) -> the Candidates the grant reaches
Discover = Callable[[Settings, "httpx.Client", Any], list[Any]]
# (Settings, the HTTP client, the account's external id, its token) -> the answer of the cheapest authenticated call
Check = Callable[[Settings, "httpx.Client", str, str], "httpx.Response"]
# an API call's refusal -> the network's classification of it
Refusal = Callable[["httpx.Response"], "NetworkError"]
# Settings -> the scopes connect asks, where the configuration chooses them (LinkedIn's organisation opt-in)
Scopes = Callable[[Settings], tuple[str, ...]]


@dataclass(frozen=True)
class InstanceCredentials:
    """The app socialpub registered on one server of a network made of many (kept per server, the secret
    encrypted: backend/services/network_instances.py)."""

    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ()
    redirect_uris: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prepared:
    """What connecting to one server needs, read from it: its app (`registered`: just registered, to keep),
    whether it takes PKCE, the scopes to ask, and the limits it reported (the network's cached form)."""

    credentials: InstanceCredentials
    registered: bool
    pkce: bool
    scopes: tuple[str, ...]
    limits: dict[str, Any] | None = None


@dataclass(frozen=True)
class Instances:
    """A network made of many servers, each with apps of its own (Mastodon): connecting names the server.

    host(given) -> the server's host as kept (ValueError saying why it is not one); prepare(settings, client, host,
    stored credentials or None) -> Prepared (registers an app there when none covers the scopes; raises
    oauth.OAuthError); app(host, credentials, pkce, scopes) -> the App of that server (its endpoints);
    discover(settings, client, host, TokenSet) -> the Candidates the grant reaches there; host_of(an account's
    external id) -> its server's host (None when it names none)."""

    host: Callable[[str], str]
    prepare: Callable[[Settings, httpx.Client, str, InstanceCredentials | None], Prepared]
    app: Callable[[str, InstanceCredentials, bool, tuple[str, ...]], App]
    discover: Callable[[Settings, httpx.Client, str, Any], list[Any]]
    host_of: Callable[[str], str | None]


@dataclass(frozen=True)
class OAuthApp:
    """What a network's package says of its OAuth app: its real endpoints, the discovery of the accounts a grant
    reaches (each with the token to store), the health check's call, and how its API refuses a call (the
    adapter's classification: auth_refused means reconnect). scopes: the scopes connect asks under a
    configuration, when they depend on it (None: the endpoints' own)."""

    endpoints: Endpoints
    discover: Discover
    check: Check
    refusal: Refusal
    scopes: Scopes | None = None
    # its token endpoint's refusals are OAuth's `{"error": "<code>", …}`; False for a network whose API errors
    # share that shape without being OAuth's (Bluesky's XRPC `{"error", "message"}`): read by `refusal` only
    oauth_error_bodies: bool = True
    # a network whose sessions refresh otherwise than through an OAuth token endpoint with the app's credentials
    # (Bluesky's refreshSession): (settings, client, refresh token, now, watchdog) -> TokenSet, raising
    # tokens.GrantDead / RefreshTransient / RefreshRejected; None: backend/networks/tokens.py `refresh`
    refresh: Callable[..., Any] | None = None
    # a network made of many servers (Mastodon): its apps are registered per server at connect, not configured
    instances: Instances | None = None


class NotConfigured(Exception):
    """The network's OAuth app is not configured: the message names the settings to set."""


@dataclass(frozen=True)
class App:
    platform: str
    client_id: str
    client_secret: str
    endpoints: Endpoints

    def __repr__(self) -> str:  # never the secret
        return f"<App {self.platform} {self.client_id}>"


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
