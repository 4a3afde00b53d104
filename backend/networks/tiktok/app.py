"""TikTok's OAuth app (Login Kit): www.tiktok.com/v2/auth/authorize/, open.tiktokapis.com/v2/oauth/token/ (the
client id is TikTok's `client_key`; tokens refreshed with rotation); the grant reaches one user, its `open_id`."""

from __future__ import annotations

import httpx

from backend.config import Settings
from backend.networks import oauth
from backend.networks.base import NetworkError
from backend.networks.http import json_or_none
from backend.networks.oauth import Candidate, OAuthError, TokenSet, call, json_body, revocation
from backend.networks.oauth_apps import api_base
from backend.networks.oauth_types import Endpoints, InstanceCredentials, OAuthApp
from backend.networks.tiktok import NETWORK
from backend.networks.tiktok.adapter import classify

PLATFORM = NETWORK.name

ENDPOINTS = Endpoints(
    "https://www.tiktok.com/v2/auth/authorize/",
    "https://open.tiktokapis.com/v2/oauth/token/",
    "https://open.tiktokapis.com/v2/oauth/revoke/",
    ("user.info.basic", "video.publish", "video.upload"),
    ",",
    client_id_param="client_key",
    refreshable=True,
    rotates_refresh=True,
    pkce_encoding="hex",  # Login Kit for desktop: "hex encoding of SHA256" (docs.md, rule pkce-hex)
)


def refusal(resp: httpx.Response) -> NetworkError:
    body = json_or_none(resp)
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    return classify(
        str(err.get("code") or f"http_{resp.status_code}"), str(err.get("message") or ""), resp.status_code
    )


# /v2/user/info/ fields the Login Kit default scope user.info.basic allows: `username` needs user.info.profile,
# which socialpub does not ask (docs.md, rule user-info-fields); the handle comes from creator_info instead
USER_FIELDS = "open_id,union_id,display_name,avatar_url"


def _creator_username(base: str, client: httpx.Client, token: str) -> str:
    """The creator's @handle from creator_info (scope video.publish), or "" when TikTok does not give it."""
    resp = call(
        client,
        "POST",
        f"{base}/v2/post/publish/creator_info/query/",
        PLATFORM,
        json={},
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=UTF-8"},
    )
    body = json_or_none(resp)
    data = body.get("data") if isinstance(body, dict) and resp.status_code < 400 else None
    return str((data or {}).get("creator_username") or "") if isinstance(data, dict) else ""


def discover(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    base = api_base(PLATFORM, settings).rstrip("/")
    resp = call(
        client,
        "GET",
        f"{base}/v2/user/info/",
        PLATFORM,
        params={"fields": USER_FIELDS},
        headers={"Authorization": f"Bearer {tokens.access_token}"},
    )
    user = (json_body(PLATFORM, resp).get("data") or {}).get("user") or {}
    open_id = str(user.get("open_id") or tokens.subject or "")
    if not open_id:
        raise OAuthError("other", "unexpected_answer", "tiktok's user info has no open_id")
    username = (
        _creator_username(base, client, tokens.access_token) if "video.publish" in tokens.scopes else ""
    )
    return [
        Candidate(
            open_id,
            str(user.get("display_name") or username or "TikTok user"),
            username,
            "user",
            tokens.access_token,
            tokens.expires_at,
            tokens.refresh_token,
            tokens.refresh_expires_at,
            tokens.scopes,
        )
    ]


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    base = api_base(PLATFORM, settings).rstrip("/")
    return call(
        client,
        "GET",
        f"{base}/v2/user/info/",
        PLATFORM,
        params={"fields": "open_id"},
        headers={"Authorization": f"Bearer {token}"},
    )


def revoke(
    settings: Settings,
    client: httpx.Client,
    external_id: str,
    access_token: str,
    refresh_token: str | None,
    creds: InstanceCredentials | None = None,
) -> str:
    """`POST https://open.tiktokapis.com/v2/oauth/revoke/`, form-encoded `client_key`, `client_secret` and `token`
    (the user access token): an empty `{}` — the token is dead and socialpub's app leaves the user's connected apps
    (TikTok's "Revoke a User Access Token", developers.tiktok.com/docs/en/oauth-revoke-a-user-access-token, read
    2026-11-29). Needs socialpub's TikTok app configured (oauth_not_configured otherwise). Raises OAuthError."""
    resp = revocation(settings, client, PLATFORM, access_token, app_credentials=True)
    body = json_or_none(resp)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str) and error and resp.status_code < 500:  # an OAuth error, whatever the status
        said = str(body.get("error_description") or "") if isinstance(body, dict) else ""
        raise OAuthError(
            "other", error, f"TikTok refused the revocation: {error} {said}".strip(), resp.status_code
        )
    if resp.status_code == 200:
        return "the token was revoked at TikTok: socialpub left the user's connected apps"
    raise oauth.classify(PLATFORM, resp)


APP = OAuthApp(ENDPOINTS, discover, check, refusal, revoke=revoke)
