"""Threads' OAuth app (fidelity table TH-R1..R6, R9 of the research; docs.md): its own app ID and secret (the Threads
use case's, SOCIALPUB_THREADS_CLIENT_ID/SECRET), the Authorization Window on threads.com (threads.net answers 301),
the code exchanged by a form POST on graph.threads.net/oauth/access_token for a 1-hour token, at once exchanged
(`th_exchange_token`) for a 60-day one; the grant reaches one account, the user's own profile (`GET /me`).

Refresh: a long-lived token refreshes itself (`GET /refresh_access_token?grant_type=th_refresh_token`, when at least
24 h old and not expired): the account's refresh token IS its long-lived token, and `refresh` below is the one
token-refresh path's hook for it (backend/networks/tokens.py refresh_grant)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx

from backend.config import Settings
from backend.networks import oauth_apps
from backend.networks.base import NetworkError
from backend.networks.facebook.graph import classify
from backend.networks.oauth import Candidate, OAuthError, TokenSet, call, expires_in, json_body
from backend.networks.oauth_types import Endpoints, OAuthApp
from backend.networks.threads import NETWORK
from backend.networks.threads.lifecycle import DEFAULT
from backend.networks.tokens import GrantDead, RefreshRejected, RefreshTransient
from backend.outbound.watchdog import Watchdog

PLATFORM = NETWORK.name
AUTHORIZE = "https://threads.com/oauth/authorize"
TOKEN = "https://graph.threads.net/oauth/access_token"
# threads_basic: every endpoint, and the token exchange and refresh; threads_content_publish: publishing (TH-R2)
SCOPES = ("threads_basic", "threads_content_publish")

ENDPOINTS = Endpoints(
    AUTHORIZE,
    TOKEN,
    None,
    SCOPES,
    ",",
    pkce=False,  # the Threads Authorization Window documents no PKCE parameter
    refreshable=True,
)


def _base(settings: Settings) -> str:
    return oauth_apps.api_base(PLATFORM, settings).rstrip("/")


def _expiry(body: dict[str, Any], now: datetime) -> datetime | None:
    try:
        seconds = float(body.get("expires_in") or 0)
    except (TypeError, ValueError):
        return None
    return now + timedelta(seconds=seconds) if seconds > 0 else None


def discover(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    """The 1-hour token exchanged for a 60-day one (th_exchange_token, with the app's secret), then the profile it
    acts for (`GET /me?fields=id,username,name`)."""
    app = oauth_apps.app(PLATFORM, settings)
    base = _base(settings)
    resp = call(
        client,
        "GET",
        f"{base}/access_token",
        PLATFORM,
        params={
            "grant_type": "th_exchange_token",
            "client_secret": app.client_secret,
            "access_token": tokens.access_token,
        },
    )
    long = json_body(PLATFORM, resp)
    token = str(long.get("access_token") or tokens.access_token)
    expiry = expires_in(long.get("expires_in")) or tokens.expires_at
    me = json_body(
        PLATFORM,
        call(
            client,
            "GET",
            f"{base}/{DEFAULT}/me",
            PLATFORM,
            params={"fields": "id,username,name", "access_token": token},
        ),
    )
    username = str(me.get("username") or "")
    granted = _granted(client, base, token) or tokens.scopes
    return [
        Candidate(
            str(me["id"]),
            str(me.get("name") or username),
            username,
            "user",
            token,
            expiry,
            refresh_token=token,  # a long-lived token refreshes itself (th_refresh_token)
            refresh_expires_at=expiry,
            granted_scopes=granted,
        )
    ]


def _granted(client: httpx.Client, base: str, token: str) -> tuple[str, ...]:
    """The permissions the person granted, read from `GET /debug_token` (its `scopes`; TH-R18): neither the code
    exchange nor th_exchange_token says them, and a person may grant a subset. The caller's token must be a Threads
    tester's — every person who can grant a new app anything is one — so the token inspects itself. () when it
    cannot be read (a reviewed app's non-tester): the doctor then checks what it can."""
    try:
        resp = call(
            client,
            "GET",
            f"{base}/{DEFAULT}/debug_token",
            PLATFORM,
            params={"input_token": token, "access_token": token},
        )
        data = json_body(PLATFORM, resp).get("data")
    except OAuthError:
        return ()
    if not isinstance(data, dict) or not data.get("is_valid"):
        return ()
    return tuple(str(s) for s in data.get("scopes") or [] if isinstance(s, str))


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    return call(
        client,
        "GET",
        f"{_base(settings)}/{DEFAULT}/{external_id}/threads_publishing_limit",
        PLATFORM,
        params={"fields": "quota_usage", "access_token": token},
    )


def refusal(resp: httpx.Response) -> NetworkError:
    return classify(NETWORK.label, resp)


def refresh(
    settings: Settings,
    client: httpx.Client,
    refresh_token: str,
    now: datetime,
    watchdog: Watchdog | None = None,
) -> TokenSet:
    """`GET /refresh_access_token?grant_type=th_refresh_token&access_token=<long-lived token>` -> a token valid 60
    days from now (TH-R6). A dead token (code 190) is GrantDead: reconnect."""
    extensions = {"trace": watchdog.trace} if watchdog is not None else None
    try:
        resp = client.get(
            f"{_base(settings)}/refresh_access_token",
            params={"grant_type": "th_refresh_token", "access_token": refresh_token},
            extensions=extensions,
        )
    except httpx.HTTPError as exc:
        raise RefreshTransient(PLATFORM, "unreachable", f"no answer ({type(exc).__name__})") from None
    try:
        body = resp.json()
    except ValueError:
        body = {}
    if resp.status_code == 200 and isinstance(body, dict) and body.get("access_token"):
        expiry = _expiry(body, now)
        token = str(body["access_token"])
        return TokenSet(token, expiry, refresh_token=token, refresh_expires_at=expiry)
    err = classify(NETWORK.label, resp)
    if err.auth_refused:
        raise GrantDead(PLATFORM, err.code or "190", err.reason)
    if err.fail_type == "retriable":
        raise RefreshTransient(PLATFORM, err.code or "unavailable", err.reason, err.retry_after_s)
    raise RefreshRejected(PLATFORM, err.code or "refused", err.reason)


APP = OAuthApp(ENDPOINTS, discover, check, refusal, refresh=refresh)
