"""Facebook Login (issue 17), for a Page: www.facebook.com/vNN.0/dialog/oauth, the Graph API's
oauth/access_token (the code exchange is a GET; a short-lived user token is exchanged for a long-lived one with
fb_exchange_token); the grant reaches the pages the user manages (`/me/accounts`), each with a Page token that
never expires when got with a long-lived user token. Instagram builds on this discovery (its package's app.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from backend.config import Settings
from backend.networks import oauth_apps
from backend.networks.base import NetworkError
from backend.networks.facebook import NETWORK
from backend.networks.facebook.graph import classify, versioned
from backend.networks.facebook.lifecycle import DEFAULT
from backend.networks.oauth import Candidate, OAuthError, TokenSet, call, json_body, token_set
from backend.networks.oauth_types import Endpoints, OAuthApp

PLATFORM = NETWORK.name
# the login dialog and the token endpoint are versioned like every Graph call; they use the default version (the
# newest tested), the API calls SOCIALPUB_GRAPH_API_VERSION (graph_base)
AUTHORIZE = f"https://www.facebook.com/{DEFAULT}/dialog/oauth"
TOKEN = f"https://graph.facebook.com/{DEFAULT}/oauth/access_token"

ENDPOINTS = Endpoints(
    AUTHORIZE,
    TOKEN,
    None,
    ("pages_show_list", "pages_manage_posts", "pages_read_engagement", "publish_video"),
    ",",
    token_method="GET",
)

# one page of /me/accounts (with the page's token, the user token, the expiry to store) -> its candidate, or None
PageCandidate = Callable[[dict[str, Any], str, str, Any], Candidate | None]


def graph_base(platform: str, settings: Settings) -> str:
    """The configured Graph API base of a network built on it, with the configured version."""
    own = oauth_apps.network_settings(platform, settings)
    return versioned(own.api_base, str(getattr(own, "graph_version", DEFAULT)))


def _long_lived(settings: Settings, client: httpx.Client, platform: str, token: str) -> TokenSet | None:
    """The user token exchanged for a long-lived one (fb_exchange_token); None when the app is not configured (a
    token from elsewhere is then used as it is)."""
    try:
        app = oauth_apps.app(platform, settings)
    except oauth_apps.NotConfigured:
        return None
    resp = call(
        client,
        "GET",
        app.endpoints.token,
        platform,
        params={
            "grant_type": "fb_exchange_token",
            "client_id": app.client_id,
            "client_secret": app.client_secret,
            "fb_exchange_token": token,
        },
    )
    return token_set(json_body(platform, resp))


def graph_discover(
    platform: str,
    settings: Settings,
    client: httpx.Client,
    tokens: TokenSet,
    fields: str,
    candidate: PageCandidate,
) -> list[Candidate]:
    """The pages the grant's user manages (`/me/accounts?fields=…`), each made a candidate by `candidate`."""
    long = _long_lived(settings, client, platform, tokens.access_token)
    user_token = long.access_token if long else tokens.access_token
    user_expiry = long.expires_at if long else tokens.expires_at
    base = graph_base(platform, settings)
    resp = call(
        client,
        "GET",
        f"{base}/me/accounts",
        platform,
        params={"fields": fields, "limit": "100", "access_token": user_token},
    )
    granted = _granted(client, platform, base, user_token)
    out: list[Candidate] = []
    for page in json_body(platform, resp).get("data") or []:
        page_token = str(page.get("access_token") or "")
        # a Page token got with a long-lived user token never expires; else it dies with the user token
        expiry = None if long else user_expiry
        found = candidate(page, page_token, user_token, expiry)
        if found is not None:
            out.append(replace(found, granted_scopes=granted))
    return out


def _granted(client: httpx.Client, platform: str, base: str, user_token: str) -> tuple[str, ...]:
    """The permissions the person granted (GET /me/permissions, status "granted"): the token answer does not say
    (a person may grant a subset). () when it cannot be read: the doctor then checks what it can."""
    try:
        resp = call(client, "GET", f"{base}/me/permissions", platform, params={"access_token": user_token})
        rows = json_body(platform, resp).get("data") or []
    except OAuthError:
        return ()
    return tuple(str(r["permission"]) for r in rows if isinstance(r, dict) and r.get("status") == "granted")


def _page(page: dict[str, Any], page_token: str, user_token: str, expiry: Any) -> Candidate:
    return Candidate(str(page["id"]), str(page.get("name") or ""), "", "page", page_token, expiry)


def discover(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    return graph_discover(PLATFORM, settings, client, tokens, "id,name,access_token", _page)


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    base = graph_base(PLATFORM, settings)
    return call(
        client,
        "GET",
        f"{base}/{external_id}/published_posts",
        PLATFORM,
        params={"limit": "1", "fields": "id", "access_token": token},
    )


def refusal(resp: httpx.Response) -> NetworkError:
    return classify(NETWORK.label, resp)


APP = OAuthApp(ENDPOINTS, discover, check, refusal)
