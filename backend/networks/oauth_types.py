"""The types of a network's OAuth app, as its package declares it (its app.py, the registry entry's `app`): its
endpoints, the discovery of the accounts a grant reaches, the health check's call, how its API refuses a call, and
for a network made of many servers (Mastodon) how an app is registered on each. Below the registry: the registry
names OAuthApp, and backend/networks/oauth_apps.py (which looks networks up in the registry) builds the App a flow
uses from these and the configuration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from backend.config import Settings

if TYPE_CHECKING:
    import httpx

    from backend.networks.base import NetworkError


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


class Revoke(Protocol):
    """A network's revocation of an account's grant (its OAuthApp's `revoke`, called at disconnection, best effort):
    (settings, client, the account's external id, its access token, its refresh token or None, the server's app
    credentials or None — Mastodon's, registered per server) -> a sentence of what was revoked, or None when the
    account holds nothing revocable. Raises oauth.OAuthError (refused, unreachable, socialpub's app missing)."""

    def __call__(
        self,
        settings: Settings,
        client: httpx.Client,
        external_id: str,
        access_token: str,
        refresh_token: str | None,
        creds: InstanceCredentials | None,
        /,
    ) -> str | None: ...


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
    external id) -> its server's host (None when it names none); text_limit(the server's cached limits) -> the
    most text a post there may hold."""

    host: Callable[[str], str]
    prepare: Callable[[Settings, httpx.Client, str, InstanceCredentials | None], Prepared]
    app: Callable[[str, InstanceCredentials, bool, tuple[str, ...]], App]
    discover: Callable[[Settings, httpx.Client, str, Any], list[Any]]
    host_of: Callable[[str], str | None]
    # a server's limits as cached (network_instance) -> the most text a post there may hold (None: not said)
    text_limit: Callable[[dict[str, Any]], int | None] | None = None


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
    # the network's own revocation of an account's grant, called when the account is disconnected (best effort):
    # see Revoke. None: the network offers no revocation socialpub can call
    revoke: Revoke | None = None


@dataclass(frozen=True)
class App:
    platform: str
    client_id: str
    client_secret: str
    endpoints: Endpoints

    def __repr__(self) -> str:  # never the secret
        return f"<App {self.platform} {self.client_id}>"
