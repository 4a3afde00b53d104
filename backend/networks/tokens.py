"""Refreshing a network's access token with its refresh token (issue 17 item 3). No store here: the caller
(backend/services/tokens.py) stores what `refresh` returns, and decides what a failure does to the account.

Which networks refresh (backend/networks/oauth_apps.py `refreshable`, `rotates_refresh`):
- TikTok: `POST /v2/oauth/token/` with `client_key`, `client_secret`, `grant_type=refresh_token`: a new access
  token (2 h: read from expires_in) AND a new refresh token; the old refresh token is dead from then on (rotation).
- YouTube (Google): `POST /token` with `client_id`, `client_secret`: a new access token (1 h); a new refresh
  token only sometimes (kept otherwise).
- LinkedIn: `POST /oauth/v2/accessToken`, only for apps given refresh tokens (approved partners): the same
  refresh token, its life not extended.
- Facebook and Instagram: page tokens from a long-lived user token do not expire, and a user token cannot be
  refreshed in the background (`fb_exchange_token` needs a valid short-lived one): `NotRefreshable`. Instagram
  Login's `refresh_access_token` is not used: socialpub reaches Instagram through the Facebook page that owns it.

Every failure is classified from the answer (docs/sandbox.md "Errors"): `GrantDead` (the grant is gone:
`invalid_grant`, Graph code 190; reconnect), `RefreshTransient` (timeout, connection error, 5xx, 429: try again
later, the grant is fine), `RefreshRejected` (anything else, e.g. `invalid_client`: the app's configuration is
wrong; the grant may be fine).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx

from backend.config import Settings
from backend.networks import oauth_apps
from backend.networks.oauth import TokenSet  # the one token set: a code exchange and a refresh both give it
from backend.networks.oauth_types import App
from backend.outbound.watchdog import Watchdog


class RefreshError(Exception):
    """A refresh failed; `code` is the network's error code (or the HTTP status), `detail` its words."""

    def __init__(self, platform: str, code: str, detail: str) -> None:
        super().__init__(f"{platform}: {code}: {detail}")
        self.platform = platform
        self.code = code
        self.detail = detail


class GrantDead(RefreshError):
    """The grant is gone (revoked, expired, rotated away, or the user removed the app): reconnect."""


class RefreshTransient(RefreshError):
    """A timeout, a connection error, a 5xx or a 429: the grant is fine, try again later."""

    def __init__(self, platform: str, code: str, detail: str, retry_after_s: float | None = None) -> None:
        super().__init__(platform, code, detail)
        self.retry_after_s = retry_after_s


class RefreshRejected(RefreshError):
    """Refused for another reason (the app's credentials, a malformed request): not the grant's fault."""


class NotRefreshable(RefreshError):
    """The network (or this grant) has no refresh: the token lives until it expires, then reconnect."""


DEAD_CODES = frozenset({"invalid_grant", "190"})  # OAuth 2.0's dead grant; Graph's OAuthException 190


def can_refresh(app: App, refresh_token: str | None) -> bool:
    return bool(refresh_token) and app.endpoints.refreshable


def refresh(
    app: App,
    client: httpx.Client,
    refresh_token: str | None,
    *,
    now: datetime,
    watchdog: Watchdog | None = None,
) -> TokenSet:
    """Ask the network for a new access token with `refresh_token`. Raises GrantDead, RefreshTransient,
    RefreshRejected or NotRefreshable; never logs a token. `watchdog` (started by the caller) bounds the whole
    exchange: when it fires, the connection is shut down and the refresh fails `timeout` (transient)."""
    platform = app.platform
    if not can_refresh(app, refresh_token):
        raise NotRefreshable(
            platform,
            "not_refreshable",
            f"{platform} tokens cannot be refreshed"
            + ("" if app.endpoints.refreshable else " by this network")
            + ": reconnect the account before its token expires",
        )
    form = {
        app.endpoints.client_id_param: app.client_id,
        "client_secret": app.client_secret,
        "grant_type": "refresh_token",
        "refresh_token": str(refresh_token),
    }
    extensions = {"trace": watchdog.trace} if watchdog is not None else None
    try:
        r = client.post(
            app.endpoints.token, data=form, headers={"Accept": "application/json"}, extensions=extensions
        )
    except httpx.HTTPError as exc:
        if watchdog is not None and watchdog.fired:
            raise RefreshTransient(
                platform, "timeout", f"the token endpoint did not answer within {watchdog.seconds:g} s"
            ) from None
        if isinstance(exc, httpx.TimeoutException):
            raise RefreshTransient(
                platform, "timeout", f"the token endpoint did not answer ({type(exc).__name__})"
            ) from None
        raise RefreshTransient(
            platform, "unreachable", f"could not reach the token endpoint ({type(exc).__name__})"
        ) from None
    return _answer(platform, r, str(refresh_token), now)


def refresh_grant(
    platform: str,
    settings: Settings,
    client: httpx.Client,
    refresh_token: str | None,
    *,
    now: datetime,
    watchdog: Watchdog | None = None,
) -> TokenSet:
    """THE refresh of a network's grant: its OAuth app's own `refresh` when it has one (no app credentials:
    Bluesky), else the OAuth refresh grant with the configured app (`refresh`; NotConfigured without one)."""
    own = oauth_apps.oauth_app(platform)
    if own.refresh is not None:
        if not refresh_token:
            raise NotRefreshable(
                platform, "not_refreshable", "this account has no refresh token: reconnect it"
            )
        token_set: TokenSet = own.refresh(settings, client, refresh_token, now, watchdog)
        return token_set
    return refresh(oauth_apps.app(platform, settings), client, refresh_token, now=now, watchdog=watchdog)


def _json(r: httpx.Response) -> dict[str, Any]:
    try:
        body = r.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _retry_after(r: httpx.Response) -> float | None:
    try:
        return float(r.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _error(platform: str, r: httpx.Response, body: dict[str, Any]) -> RefreshError:
    """The error an answer means: an OAuth body {error, error_description} or a Graph body {error: {code…}}."""
    err = body.get("error")
    if isinstance(err, dict):  # Graph
        code = str(err.get("code", r.status_code))
        detail = str(err.get("message", ""))
        if err.get("is_transient") or r.status_code >= 500:
            return RefreshTransient(platform, code, detail, _retry_after(r))
    else:
        code = str(err or r.status_code)
        detail = str(body.get("error_description") or body.get("message") or r.reason_phrase or "")
    if (
        r.status_code >= 500
        or r.status_code == 429
        or code in ("server_error", "temporarily_unavailable", "internal_failure", "rate_limit_exceeded")
    ):
        return RefreshTransient(platform, code, detail or f"HTTP {r.status_code}", _retry_after(r))
    if code in DEAD_CODES:
        return GrantDead(platform, code, detail)
    return RefreshRejected(platform, code, detail or f"HTTP {r.status_code}")


def _at(now: datetime, seconds: Any) -> datetime | None:
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        return None
    return now + timedelta(seconds=s) if s > 0 else None


def _answer(platform: str, r: httpx.Response, sent: str, now: datetime) -> TokenSet:
    body = _json(r)
    if r.status_code != 200 or not body.get("access_token") or body.get("error"):
        raise _error(platform, r, body)
    new_refresh = body.get("refresh_token") or None
    refresh_at = _at(now, body.get("refresh_expires_in") or body.get("refresh_token_expires_in"))
    return TokenSet(
        access_token=str(body["access_token"]),
        expires_at=_at(now, body.get("expires_in")),
        refresh_token=str(new_refresh) if new_refresh else sent,
        refresh_expires_at=refresh_at,
    )
