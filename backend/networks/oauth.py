"""The OAuth flows of the networks (issue 17 items 1 and 5), knowing no store: PKCE, the authorize URL, the code
exchange, the discovery of the accounts a grant reaches, and the health check of one account's token.

Each network's OAuth app (its package's app.py: backend/networks/oauth_apps.py `OAuthApp`) gives its endpoints,
its discovery, its health check's call and how its API refuses; the networks' answers are those docs/sandbox.md
lists for the emulators. Every failure is an OAuthError classified `dead` (the grant or token is revoked, expired
or invalid: reconnect), `transient` (timeout, 5xx, rate limit: try again) or `other`. Tokens never appear in a
message, a repr or a log line.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx

from backend import clock
from backend.config import Settings
from backend.networks import oauth_apps, registry
from backend.networks.base import NetworkError
from backend.networks.http import json_or_none, send
from backend.networks.oauth_types import App


class OAuthError(Exception):
    """A refused or failed OAuth or API call. kind: `dead` (reconnect), `transient` (retry) or `other`."""

    def __init__(self, kind: str, code: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True)
class TokenSet:
    access_token: str = field(repr=False)
    expires_at: datetime | None = None
    refresh_token: str | None = field(default=None, repr=False)
    refresh_expires_at: datetime | None = None
    scopes: tuple[str, ...] = ()
    subject: str | None = None  # the network's id of the user, when the token endpoint gives it


@dataclass(frozen=True)
class Candidate:
    """One account a grant reaches, with the token to store for it."""

    external_id: str
    name: str
    username: str
    type: str  # the network's word for it: page, member, organization, user, channel…
    access_token: str = field(repr=False)
    expires_at: datetime | None = None
    refresh_token: str | None = field(default=None, repr=False)
    refresh_expires_at: datetime | None = None
    # what the network granted (the token answer's, unless discovery knows better)
    granted_scopes: tuple[str, ...] = ()

    def public(self) -> dict[str, str]:
        return {
            "externalId": self.external_id,
            "name": self.name,
            "username": self.username,
            "type": self.type,
        }


@dataclass(frozen=True)
class Health:
    """ok, or the token's problem: status `ok` | `dead` | `transient` | `other`, with the network's code."""

    status: str
    code: str | None = None
    message: str | None = None


# --- PKCE and the authorize URL ---------------------------------------------------------------------------------
def pkce_pair(encoding: str = "base64url") -> tuple[str, str]:
    """(verifier, S256 challenge), RFC 7636: 64 unreserved characters and BASE64URL(SHA256(verifier)) — or the
    SHA-256 in lowercase hex where the network wants it (`Endpoints.pkce_encoding`, TikTok)."""
    verifier = secrets.token_urlsafe(48)  # 64 characters of [A-Za-z0-9_-]
    return verifier, challenge_of(verifier, encoding)


def challenge_of(verifier: str, encoding: str = "base64url") -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    if encoding == "hex":
        return digest.hex()
    if encoding != "base64url":
        raise ValueError(f"unknown PKCE challenge encoding {encoding!r}: base64url or hex")
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def authorize_url(app: App, redirect_uri: str, state: str, code_challenge: str | None) -> str:
    ep = app.endpoints
    params: list[tuple[str, str]] = [
        (ep.client_id_param, app.client_id),
        ("redirect_uri", redirect_uri),
        ("response_type", "code"),
        ("scope", ep.scope_separator.join(ep.scopes)),
        ("state", state),
    ]
    if ep.pkce and code_challenge:
        params += [("code_challenge", code_challenge), ("code_challenge_method", "S256")]
    params += list(ep.extra_authorize)
    sep = "&" if urlsplit(ep.authorize).query else "?"
    return ep.authorize + sep + urlencode(params, quote_via=quote)


# --- calls and their failures -----------------------------------------------------------------------------------
def call(client: httpx.Client, method: str, url: str, platform: str, **kw: Any) -> httpx.Response:
    """One call of an OAuth flow: a transport failure is a transient OAuthError."""
    try:
        return send(client, method, url, network=platform, **kw)
    except NetworkError as exc:
        raise OAuthError("transient", exc.code or "transport_error", exc.reason) from exc


def classify(platform: str, resp: httpx.Response) -> OAuthError:
    """The network's refusal as an OAuthError (never with a token in it). A token endpoint's OAuth error
    (`{"error": "invalid_grant", …}`) is read here; an API call's refusal is read by the network's adapter
    (`api_refusal`), the one classification of its codes: dead when it says the authorisation is gone
    (auth_refused), transient when retriable, else other."""
    body = json_or_none(resp)
    status = resp.status_code
    try:
        oauth_bodies = oauth_apps.oauth_app(platform).oauth_error_bodies
    except oauth_apps.NotConfigured:
        oauth_bodies = True
    if oauth_bodies and isinstance(body, dict) and _oauth_code(body.get("error")):  # OAuth token endpoints
        error = body["error"]
        desc = str(body.get("error_description") or "")
        if (
            status >= 500
            or status == 429
            or error in ("server_error", "temporarily_unavailable", "internal_failure")
        ):
            return OAuthError(
                "transient", error, f"{platform}'s token endpoint is unavailable: {desc}", status
            )
        if error in ("invalid_grant", "invalid_token"):
            return OAuthError("dead", error, f"{platform} refused the grant: {desc}", status)
        return OAuthError("other", error, f"{platform} refused: {error} {desc}".strip(), status)
    refused = api_refusal(platform, resp)
    kind = "dead" if refused.auth_refused else "transient" if refused.fail_type == "retriable" else "other"
    detail = _network_message(body)
    message = refused.reason if not detail or detail in refused.reason else f"{refused.reason} ({detail})"
    return OAuthError(kind, refused.code or str(status), message, status)


def revocation(
    settings: Settings, client: httpx.Client, platform: str, token: str, *, app_credentials: bool
) -> httpx.Response:
    """POST `token` to the network's revocation endpoint (its Endpoints.revoke, as this configuration reaches it),
    form-encoded; with app_credentials, the configured app's client id (under the network's own name for it) and
    secret too. The answer is the caller's to read (its network's package). Raises OAuthError: the app is not
    configured here (`oauth_not_configured`), the network offers no endpoint, a transport failure."""
    try:
        if app_credentials:
            configured = oauth_apps.app(platform, settings)
            ends = configured.endpoints
            form = {
                ends.client_id_param: configured.client_id,
                "client_secret": configured.client_secret,
                "token": token,
            }
        else:
            ends = oauth_apps.endpoints(platform, settings)
            form = {"token": token}
    except oauth_apps.NotConfigured:
        p, label = platform.upper(), registry.get(platform).label
        raise OAuthError(
            "other",
            "oauth_not_configured",
            f"socialpub's {label} app is not configured here (SOCIALPUB_{p}_CLIENT_ID, SOCIALPUB_{p}_CLIENT_SECRET): "
            f"the token was not revoked; remove socialpub's access in {label}'s settings",
        ) from None
    if not ends.revoke:
        raise OAuthError("other", "not_offered", f"{platform} has no revocation endpoint")
    return call(client, "POST", ends.revoke, platform, data=form)


# an OAuth error code (RFC 6749 5.2 and the registered extensions): `invalid_grant`, `temporarily_unavailable`…
_OAUTH_CODE = re.compile(r"^[a-z][a-z0-9_]*$")


def _oauth_code(error: Any) -> bool:
    """Whether a body's `error` is an OAuth error code, not an API's sentence under the same key (Mastodon's
    `{"error": "The access token is invalid"}`, docs.joinmastodon.org/entities/Error/): a sentence is read by the
    network's `refusal`, by its status first — never as an unknown OAuth code."""
    return isinstance(error, str) and bool(_OAUTH_CODE.match(error))


def api_refusal(platform: str, resp: httpx.Response) -> NetworkError:
    """An API call's refusal, classified by the network (its OAuth app's `refusal`: the adapter's reading)."""
    return oauth_apps.oauth_app(platform).refusal(resp)


def _network_message(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    err = body.get("error")
    if isinstance(err, dict):
        return str(err.get("message") or "").strip()
    if isinstance(err, str) and not _oauth_code(err):  # the API's sentence (Mastodon)
        return err.strip()
    return str(body.get("message") or "").strip()


def json_body(platform: str, resp: httpx.Response) -> dict[str, Any]:
    """The answer's JSON object; its refusal (classify) or a non-JSON answer as an OAuthError."""
    if resp.status_code >= 400:
        raise classify(platform, resp)
    body = json_or_none(resp)
    if not isinstance(body, dict):
        raise OAuthError(
            "other",
            "unexpected_answer",
            f"{platform} answered {resp.status_code} without JSON",
            resp.status_code,
        )
    return body


def expires_in(seconds: Any) -> datetime | None:
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        return None
    return clock.now() + timedelta(seconds=s) if s > 0 else None


# --- the code exchange ------------------------------------------------------------------------------------------
def exchange_code(
    app: App, client: httpx.Client, code: str, redirect_uri: str, verifier: str | None
) -> TokenSet:
    """The authorization code for the grant's tokens (the Graph API: a short-lived user token)."""
    ep = app.endpoints
    form = {
        ep.client_id_param: app.client_id,
        "client_secret": app.client_secret,
        "code": code,
        "redirect_uri": redirect_uri,
    }
    if verifier and ep.pkce:
        form["code_verifier"] = verifier
    if ep.token_method == "GET":  # the Graph API takes the exchange as a query
        resp = call(client, "GET", ep.token, app.platform, params=form)
    else:
        form["grant_type"] = "authorization_code"
        resp = call(
            client,
            "POST",
            ep.token,
            app.platform,
            data=form,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    body = json_body(app.platform, resp)
    if isinstance(body.get("error"), str) and body["error"] and not body.get("access_token"):
        raise classify(app.platform, resp)  # an OAuth error answered with HTTP 200 (TikTok does)
    return token_set(body)


def token_set(body: dict[str, Any]) -> TokenSet:
    if not body.get("access_token"):
        raise OAuthError("other", "unexpected_answer", "the token endpoint answered without an access_token")
    scope = str(body.get("scope") or "")
    return TokenSet(
        str(body["access_token"]),
        expires_in(body.get("expires_in")),
        body.get("refresh_token") or None,
        expires_in(body.get("refresh_expires_in") or body.get("refresh_token_expires_in")),
        tuple(s for s in scope.replace(",", " ").split() if s),
        body.get("open_id"),
    )


# --- discovery: the accounts a grant reaches --------------------------------------------------------------------
def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def discover(platform: str, settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    """The accounts the grant reaches, each with the token to store for it and the scopes the grant holds
    (the network's OAuth app's discovery)."""
    app = oauth_apps.oauth_app(platform)
    try:
        found = app.discover(settings, client, tokens)
    except (KeyError, TypeError, AttributeError) as exc:  # an answer of an unexpected shape
        raise OAuthError(
            "other",
            "unexpected_answer",
            f"{platform} answered in an unexpected shape ({type(exc).__name__}: {exc})",
        ) from None
    return [c if c.granted_scopes else replace(c, granted_scopes=tokens.scopes) for c in found]


# --- health -----------------------------------------------------------------------------------------------------
def check(platform: str, settings: Settings, client: httpx.Client, external_id: str, token: str) -> Health:
    """The account's cheapest authenticated call (the network's OAuth app's `check`): ok, or why not (dead:
    reconnect; transient: try later)."""
    found = oauth_apps.oauth_app(platform)
    try:
        json_body(platform, found.check(settings, client, external_id, token))
    except OAuthError as exc:
        return Health(exc.kind, exc.code, exc.message)
    return Health("ok")
