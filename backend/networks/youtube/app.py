"""YouTube's OAuth app (Google): accounts.google.com/o/oauth2/v2/auth (offline access, consent prompted, so a
refresh token comes), oauth2.googleapis.com/token; the grant reaches the user's channels."""

from __future__ import annotations

import httpx

from backend.config import Settings
from backend.networks import oauth
from backend.networks.http import json_or_none
from backend.networks.oauth import Candidate, TokenSet, call, json_body, revocation
from backend.networks.oauth_apps import api_base
from backend.networks.oauth_types import Endpoints, InstanceCredentials, OAuthApp
from backend.networks.youtube import NETWORK
from backend.networks.youtube.adapter import classify

PLATFORM = NETWORK.name

ENDPOINTS = Endpoints(
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
)


def discover(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    base = api_base(PLATFORM, settings).rstrip("/")
    resp = call(
        client,
        "GET",
        f"{base}/channels",
        PLATFORM,
        params={"part": "id,snippet", "mine": "true"},
        headers={"Authorization": f"Bearer {tokens.access_token}"},
    )
    out = []
    for item in json_body(PLATFORM, resp).get("items") or []:
        snippet = item.get("snippet") or {}
        out.append(
            Candidate(
                str(item["id"]),
                str(snippet.get("title") or f"YouTube channel {item['id']}"),
                str(snippet.get("customUrl") or ""),
                "channel",
                tokens.access_token,
                tokens.expires_at,
                tokens.refresh_token,
                tokens.refresh_expires_at,
            )
        )
    return out


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    base = api_base(PLATFORM, settings).rstrip("/")
    return call(
        client,
        "GET",
        f"{base}/channels",
        PLATFORM,
        params={"part": "id", "mine": "true"},
        headers={"Authorization": f"Bearer {token}"},
    )


def revoke(
    settings: Settings,
    client: httpx.Client,
    external_id: str,
    access_token: str,
    refresh_token: str | None,
    creds: InstanceCredentials | None = None,
) -> str | None:
    """`POST https://oauth2.googleapis.com/revoke` with `token` form-encoded, the refresh token preferred (revoking
    it ends the whole grant; an access token with a refresh token takes that with it too): 200 — the grant is gone,
    its refresh answers `invalid_grant` and its access token 401. No app credentials (Google's "Revoking a token",
    developers.google.com/identity/protocols/oauth2/web-server#tokenrevoke, read 2026-11-29). A token Google no
    longer knows (the user removed the app, the grant expired): 400 `invalid_token` — nothing left to revoke, None.
    Raises OAuthError (refused otherwise, unreachable)."""
    resp = revocation(settings, client, PLATFORM, refresh_token or access_token, app_credentials=False)
    if resp.status_code == 200:
        return "the grant was revoked at Google (its refresh and access tokens)"
    body = json_or_none(resp)
    if resp.status_code == 400 and isinstance(body, dict) and body.get("error") == "invalid_token":
        return None
    raise oauth.classify(PLATFORM, resp)


APP = OAuthApp(ENDPOINTS, discover, check, classify, revoke=revoke)
