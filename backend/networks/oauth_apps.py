"""Each network's OAuth app and endpoints (issue 17; ../shared/ANCHORS.md "OAuth and token life"; docs/sandbox.md
for the emulators' side). Pure configuration: the flows are backend/networks/oauth.py (authorize, code exchange,
discovery of the accounts a grant reaches, the health check) and backend/networks/tokens.py (refresh).

Endpoints: the real hosts by default. `SOCIALPUB_<NETWORK>_OAUTH_BASE` replaces their origin (scheme, host, port;
the paths stay the real ones, which is how `socialpub sandbox serve` serves them); unset, an API base on a
loopback host (an emulator: `SOCIALPUB_<NETWORK>_BASE_URL=http://127.0.0.1:P…`) lends its origin.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from backend.config import Settings
from backend.outbound.guard import host_is_local

PLATFORMS = ("facebook", "instagram", "linkedin", "tiktok", "youtube")


@dataclass(frozen=True)
class Endpoints:
    authorize: str
    token: str
    revoke: str | None
    scopes: tuple[str, ...]
    scope_separator: str  # TikTok and Facebook: ","; LinkedIn and Google: " "
    client_id_param: str = "client_id"  # TikTok: client_key
    pkce: bool = True
    extra_authorize: tuple[tuple[str, str], ...] = ()  # Google: access_type=offline, prompt=consent
    refreshable: bool = (
        False  # a refresh token keeps the grant alive (TikTok, Google; LinkedIn when given one)
    )
    rotates_refresh: bool = False  # a refresh may re-issue the refresh token: store the new one atomically


_GRAPH_SCOPES_FB = ("pages_show_list", "pages_manage_posts", "pages_read_engagement", "publish_video")
_GRAPH_SCOPES_IG = (
    "instagram_basic",
    "instagram_content_publish",
    "pages_show_list",
    "pages_read_engagement",
)

REAL: dict[str, Endpoints] = {
    "tiktok": Endpoints(
        "https://www.tiktok.com/v2/auth/authorize/",
        "https://open.tiktokapis.com/v2/oauth/token/",
        "https://open.tiktokapis.com/v2/oauth/revoke/",
        ("user.info.basic", "video.publish", "video.upload"),
        ",",
        client_id_param="client_key",
        refreshable=True,
        rotates_refresh=True,
    ),
    "facebook": Endpoints(
        "https://www.facebook.com/v21.0/dialog/oauth",
        "https://graph.facebook.com/v21.0/oauth/access_token",
        None,
        _GRAPH_SCOPES_FB,
        ",",
    ),
    "instagram": Endpoints(
        "https://www.facebook.com/v21.0/dialog/oauth",
        "https://graph.facebook.com/v21.0/oauth/access_token",
        None,
        _GRAPH_SCOPES_IG,
        ",",
    ),
    "linkedin": Endpoints(
        "https://www.linkedin.com/oauth/v2/authorization",
        "https://www.linkedin.com/oauth/v2/accessToken",
        "https://www.linkedin.com/oauth/v2/revoke",
        ("openid", "profile", "w_member_social", "w_organization_social", "r_organization_admin"),
        " ",
        refreshable=True,
    ),
    "youtube": Endpoints(
        "https://accounts.google.com/o/oauth2/v2/auth",
        "https://oauth2.googleapis.com/token",
        "https://oauth2.googleapis.com/revoke",
        (
            "https://www.googleapis.com/auth/youtube.upload",
            "https://www.googleapis.com/auth/youtube.readonly",
        ),
        " ",
        extra_authorize=(("access_type", "offline"), ("prompt", "consent")),
        refreshable=True,
        rotates_refresh=True,
    ),
}


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


def api_base(platform: str, settings: Settings) -> str:
    return str(getattr(settings, f"{platform}_api_base"))


def endpoints(platform: str, settings: Settings) -> Endpoints:
    """The network's OAuth endpoints as this configuration reaches them."""
    real = REAL[platform]
    origin = getattr(settings, f"{platform}_oauth_base", None)
    if not origin and _loopback(api_base(platform, settings)):
        origin = _origin(api_base(platform, settings))
    if not origin:
        return real
    return Endpoints(
        _rebase(real.authorize, origin),
        _rebase(real.token, origin),
        _rebase(real.revoke, origin) if real.revoke else None,
        real.scopes,
        real.scope_separator,
        real.client_id_param,
        real.pkce,
        real.extra_authorize,
        real.refreshable,
        real.rotates_refresh,
    )


def app(platform: str, settings: Settings) -> App:
    """The configured OAuth app of `platform`; NotConfigured says which settings are missing."""
    if platform not in REAL:
        raise NotConfigured(f"unknown network {platform!r}")
    client_id = getattr(settings, f"{platform}_client_id", None)
    secret = getattr(settings, f"{platform}_client_secret", None)
    if not client_id or not secret:
        p = platform.upper()
        raise NotConfigured(
            f"{platform} is not configured for OAuth: set SOCIALPUB_{p}_CLIENT_ID and "
            f"SOCIALPUB_{p}_CLIENT_SECRET (the app's credentials from the network's developer "
            "console), or connect with --access-token"
        )
    return App(platform, client_id, secret, endpoints(platform, settings))
