"""The OAuth flows of the networks (issue 17 items 1 and 5), knowing no store: PKCE, the authorize URL, the code
exchange, the discovery of the accounts a grant reaches, and the health check of one account's token.

The apps and endpoints are backend/networks/oauth_apps.py; the networks' answers are those docs/sandbox.md lists
for the emulators. Every failure is an OAuthError classified `dead` (the grant or token is revoked, expired or
invalid: reconnect), `transient` (timeout, 5xx, rate limit: try again) or `other`. Tokens never appear in a
message, a repr or a log line.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx

from backend import clock
from backend.config import Settings
from backend.networks import oauth_apps
from backend.networks.base import NetworkError
from backend.networks.facebook import graph
from backend.networks.http import json_or_none, send
from backend.networks.linkedin import adapter as linkedin
from backend.networks.oauth_apps import App
from backend.networks.tiktok import adapter as tiktok
from backend.networks.youtube import adapter as youtube

LINKEDIN_HEADERS = {"X-Restli-Protocol-Version": "2.0.0"}


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
    subject: str | None = None  # TikTok's open_id


@dataclass(frozen=True)
class Candidate:
    """One account a grant reaches, with the token to store for it."""

    external_id: str
    name: str
    username: str
    type: str  # page | instagram_account | member | organization | user | channel
    access_token: str = field(repr=False)
    expires_at: datetime | None = None
    refresh_token: str | None = field(default=None, repr=False)
    refresh_expires_at: datetime | None = None

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
def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge), RFC 7636: 64 unreserved characters and BASE64URL(SHA256(verifier))."""
    verifier = secrets.token_urlsafe(48)  # 64 characters of [A-Za-z0-9_-]
    return verifier, challenge_of(verifier)


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).decode().rstrip("=")


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
def _call(client: httpx.Client, method: str, url: str, platform: str, **kw: Any) -> httpx.Response:
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
    if isinstance(body, dict) and isinstance(body.get("error"), str):  # OAuth token endpoints
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


def api_refusal(platform: str, resp: httpx.Response) -> NetworkError:
    """An API call's refusal, classified by the network's adapter module."""
    if platform in ("facebook", "instagram"):
        return graph.classify(platform.capitalize(), resp)
    if platform == "linkedin":
        return linkedin.classify(resp)
    if platform == "youtube":
        return youtube.classify(resp)
    body = json_or_none(resp)
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    return tiktok.classify(
        str(err.get("code") or f"http_{resp.status_code}"), str(err.get("message") or ""), resp.status_code
    )


def _network_message(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    err = body.get("error")
    if isinstance(err, dict):
        return str(err.get("message") or "").strip()
    return str(body.get("message") or "").strip()


def _json(platform: str, resp: httpx.Response) -> dict[str, Any]:
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


def _at(seconds: Any) -> datetime | None:
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
    if app.platform in ("facebook", "instagram"):
        resp = _call(client, "GET", ep.token, app.platform, params=form)
    else:
        form["grant_type"] = "authorization_code"
        resp = _call(
            client,
            "POST",
            ep.token,
            app.platform,
            data=form,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    return token_set(_json(app.platform, resp))


def token_set(body: dict[str, Any]) -> TokenSet:
    if not body.get("access_token"):
        raise OAuthError("other", "unexpected_answer", "the token endpoint answered without an access_token")
    scope = str(body.get("scope") or "")
    return TokenSet(
        str(body["access_token"]),
        _at(body.get("expires_in")),
        body.get("refresh_token") or None,
        _at(body.get("refresh_expires_in") or body.get("refresh_token_expires_in")),
        tuple(s for s in scope.replace(",", " ").split() if s),
        body.get("open_id"),
    )


# --- discovery: the accounts a grant reaches --------------------------------------------------------------------
def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _long_lived(settings: Settings, client: httpx.Client, platform: str, token: str) -> TokenSet | None:
    """Graph: the user token exchanged for a long-lived one (fb_exchange_token); None when the app is not
    configured (a token from elsewhere is then used as it is)."""
    try:
        app = oauth_apps.app(platform, settings)
    except oauth_apps.NotConfigured:
        return None
    resp = _call(
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
    return token_set(_json(platform, resp))


def _graph(settings: Settings, client: httpx.Client, platform: str, tokens: TokenSet) -> list[Candidate]:
    long = _long_lived(settings, client, platform, tokens.access_token)
    user_token = long.access_token if long else tokens.access_token
    user_expiry = long.expires_at if long else tokens.expires_at
    base = oauth_apps.api_base(platform, settings).rstrip("/")
    fields = "id,name,access_token" + (
        ",instagram_business_account{id,username}" if platform == "instagram" else ""
    )
    resp = _call(
        client,
        "GET",
        f"{base}/me/accounts",
        platform,
        params={"fields": fields, "limit": "100", "access_token": user_token},
    )
    out: list[Candidate] = []
    for page in _json(platform, resp).get("data") or []:
        page_token = str(page.get("access_token") or "")
        # a Page token got with a long-lived user token never expires; else it dies with the user token
        expiry = None if long else user_expiry
        if platform == "facebook":
            out.append(
                Candidate(str(page["id"]), str(page.get("name") or ""), "", "page", page_token, expiry)
            )
        else:
            ig = page.get("instagram_business_account")
            if isinstance(ig, dict) and ig.get("id"):
                username = str(ig.get("username") or "")
                out.append(
                    Candidate(
                        str(ig["id"]),
                        username or str(page.get("name") or ""),
                        username,
                        "instagram_account",
                        page_token or user_token,
                        expiry,
                    )
                )
    return out


def _linkedin(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    base = oauth_apps.api_base("linkedin", settings).rstrip("/")
    auth = {"Authorization": f"Bearer {tokens.access_token}"}
    me = _json("linkedin", _call(client, "GET", _origin(base) + "/v2/userinfo", "linkedin", headers=auth))
    keep = {
        "expires_at": tokens.expires_at,
        "refresh_token": tokens.refresh_token,
        "refresh_expires_at": tokens.refresh_expires_at,
    }
    name = str(
        me.get("name") or " ".join(str(me.get(k) or "") for k in ("given_name", "family_name")).strip()
    )
    out = [
        Candidate(
            f"urn:li:person:{me['sub']}", name or "LinkedIn member", "", "member", tokens.access_token, **keep
        )
    ]
    resp = _call(
        client,
        "GET",
        f"{base}/organizationAcls",
        "linkedin",
        params={"q": "roleAssignee", "role": "ADMINISTRATOR", "state": "APPROVED"},
        headers=auth | LINKEDIN_HEADERS | {"LinkedIn-Version": settings.linkedin_version},
    )
    if resp.status_code == 403:  # no r_organization_admin: the member only
        return out
    orgs = [str(el.get("organization") or "") for el in _json("linkedin", resp).get("elements") or []]
    orgs = list(dict.fromkeys(o for o in orgs if o.startswith("urn:li:organization:")))
    names = _organization_names(settings, client, tokens.access_token, [o.rsplit(":", 1)[-1] for o in orgs])
    for org in orgs:
        num = org.rsplit(":", 1)[-1]
        out.append(
            Candidate(
                org,
                names.get(num) or f"{name} · organization {num}",
                "",
                "organization",
                tokens.access_token,
                **keep,
            )
        )
    return out


def _organization_names(
    settings: Settings, client: httpx.Client, token: str, ids: list[str]
) -> dict[str, str]:
    """The organisations' `localizedName`s by id, in one batch call (`GET /rest/organizations?ids=List(…)`). The
    names only label the candidates: a refused lookup (403 without r_organization_admin, any other error) gives
    {} or leaves an id out, and discovery keeps its own label."""
    if not ids:
        return {}
    base = oauth_apps.api_base("linkedin", settings).rstrip("/")
    try:
        resp = _call(
            client,
            "GET",
            f"{base}/organizations?ids=List({','.join(ids)})",
            "linkedin",
            headers={"Authorization": f"Bearer {token}"}
            | LINKEDIN_HEADERS
            | {"LinkedIn-Version": settings.linkedin_version},
        )
    except OAuthError:
        return {}
    body = json_or_none(resp) if resp.status_code == 200 else None
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, dict):
        return {}
    names: dict[str, str] = {}
    for key, org in results.items():
        if (
            isinstance(org, dict)
            and isinstance(org.get("localizedName"), str)
            and org["localizedName"].strip()
        ):
            names[str(key)] = org["localizedName"].strip()
    return names


def _tiktok(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    base = oauth_apps.api_base("tiktok", settings).rstrip("/")
    resp = _call(
        client,
        "GET",
        f"{base}/v2/user/info/",
        "tiktok",
        params={"fields": "open_id,display_name,username"},
        headers={"Authorization": f"Bearer {tokens.access_token}"},
    )
    user = (_json("tiktok", resp).get("data") or {}).get("user") or {}
    open_id = str(user.get("open_id") or tokens.subject or "")
    if not open_id:
        raise OAuthError("other", "unexpected_answer", "tiktok's user info has no open_id")
    return [
        Candidate(
            open_id,
            str(user.get("display_name") or user.get("username") or "TikTok user"),
            str(user.get("username") or ""),
            "user",
            tokens.access_token,
            tokens.expires_at,
            tokens.refresh_token,
            tokens.refresh_expires_at,
        )
    ]


def _youtube(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    base = oauth_apps.api_base("youtube", settings).rstrip("/")
    resp = _call(
        client,
        "GET",
        f"{base}/channels",
        "youtube",
        params={"part": "id,snippet", "mine": "true"},
        headers={"Authorization": f"Bearer {tokens.access_token}"},
    )
    out = []
    for item in _json("youtube", resp).get("items") or []:
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


def discover(platform: str, settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    """The accounts the grant reaches, each with the token to store for it."""
    try:
        return _discover(platform, settings, client, tokens)
    except (KeyError, TypeError, AttributeError) as exc:  # an answer of an unexpected shape
        raise OAuthError(
            "other",
            "unexpected_answer",
            f"{platform} answered in an unexpected shape ({type(exc).__name__}: {exc})",
        ) from None


def _discover(platform: str, settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    if platform in ("facebook", "instagram"):
        return _graph(settings, client, platform, tokens)
    if platform == "linkedin":
        return _linkedin(settings, client, tokens)
    if platform == "tiktok":
        return _tiktok(settings, client, tokens)
    if platform == "youtube":
        return _youtube(settings, client, tokens)
    raise ValueError(f"unknown network {platform!r}")


# --- health -----------------------------------------------------------------------------------------------------
def check(platform: str, settings: Settings, client: httpx.Client, external_id: str, token: str) -> Health:
    """The account's cheapest authenticated call: ok, or why not (dead: reconnect; transient: try later)."""
    base = oauth_apps.api_base(platform, settings).rstrip("/")
    bearer = {"Authorization": f"Bearer {token}"}
    try:
        if platform == "facebook":
            resp = _call(
                client,
                "GET",
                f"{base}/{external_id}/published_posts",
                platform,
                params={"limit": "1", "fields": "id", "access_token": token},
            )
        elif platform == "instagram":
            resp = _call(
                client,
                "GET",
                f"{base}/{external_id}/media",
                platform,
                params={"limit": "1", "fields": "id", "access_token": token},
            )
        elif platform == "tiktok":
            resp = _call(
                client, "GET", f"{base}/v2/user/info/", platform, params={"fields": "open_id"}, headers=bearer
            )
        elif platform == "linkedin":
            if external_id.startswith("urn:li:organization:"):
                resp = _call(
                    client,
                    "GET",
                    f"{base}/organizationAcls",
                    platform,
                    params={"q": "roleAssignee", "role": "ADMINISTRATOR", "state": "APPROVED"},
                    headers=bearer | LINKEDIN_HEADERS | {"LinkedIn-Version": settings.linkedin_version},
                )
            else:
                resp = _call(client, "GET", _origin(base) + "/v2/userinfo", platform, headers=bearer)
        elif platform == "youtube":
            resp = _call(
                client,
                "GET",
                f"{base}/channels",
                platform,
                params={"part": "id", "mine": "true"},
                headers=bearer,
            )
        else:
            raise ValueError(f"unknown network {platform!r}")
        _json(platform, resp)
    except OAuthError as exc:
        return Health(exc.kind, exc.code, exc.message)
    return Health("ok")
