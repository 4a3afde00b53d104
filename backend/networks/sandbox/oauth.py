"""The emulators' OAuth side (issue 17 item 6): authorize with a scripted consent, token exchange with PKCE,
refresh (rotating where the network rotates), revoke, expiring tokens, and switches for a dead grant or a
transient failure of the token endpoint. docs/sandbox.md lists every endpoint and switch.

What is kept (store.py): a grant per consent (the user and the sandbox accounts it reaches), every credential
issued by its SHA-256 only (codes, access, refresh and page tokens), and the switches in `emulator_setting`, so
a standalone emulator (`socialpub sandbox serve`) and the tests driving it share them through the database.

The sandbox accounts the product connects with `accounts add-sandbox` keep their own never-expiring token
(SandboxAccount.token_hash); `expire_account_token` / `revoke_account_token` make one mortal for a test.
Lifetimes follow ../shared/ANCHORS.md ("OAuth and token life") and are switches too (`configure_oauth`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from backend.networks.sandbox.core import (
    _ACCOUNTS,
    Emulator,
    Request,
    account_for_token,
    b62,
    b64url,
    digits,
    empty_response,
    json_response,
    now,
    register_account,
    token_hash,
    write,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxSetting, SandboxToken

DAY = 86400
# per network: the lifetimes (seconds; None: never expires) and behaviours of the token endpoint
DEFAULTS: dict[str, dict[str, Any]] = {
    # ANCHORS: access 24 h (older pages 2 h), refresh 365 d, rotated on each refresh
    "tiktok": {"access_ttl_s": DAY, "refresh_ttl_s": 365 * DAY, "rotate": True},
    # a short-lived user token (~1-2 h) exchanged (fb_exchange_token) for a ~60 d one; page tokens from a
    # long-lived user token never expire
    "facebook": {"access_ttl_s": 3600, "long_ttl_s": 60 * DAY},
    "instagram": {"access_ttl_s": 3600, "long_ttl_s": 60 * DAY},
    # access 60 d; refresh (365 d from the first consent, never extended) only for approved partners
    "linkedin": {"access_ttl_s": 60 * DAY, "refresh_ttl_s": 365 * DAY, "refresh_enabled": False},
    # access 1 h; refresh long-lived (7 d for an app in testing mode: set refresh_ttl_s); re-issued on refresh
    "youtube": {"access_ttl_s": 3600, "refresh_ttl_s": None, "rotate": True},
}
COMMON: dict[str, Any] = {
    "code_ttl_s": 600,  # an authorization code is good for 10 minutes, once
    "consent": "grant",  # grant | deny: what the scripted user answers at the authorize endpoint
    "token_failure": None,  # None | "invalid_grant" (dead grant) | "server_error" (a 5xx, transient)
    "pages": 1,  # Facebook/Instagram: pages a new user manages; LinkedIn: organisations a new member administers
}
TOKEN_FAILURES = (None, "invalid_grant", "server_error")
SWITCHES = frozenset(COMMON) | {k for d in DEFAULTS.values() for k in d}


# --- switches ----------------------------------------------------------------------------------------------
def oauth_settings(platform: str) -> dict[str, Any]:
    """The OAuth switches of a network: defaults, overridden by what configure_oauth stored."""
    if platform not in DEFAULTS:
        raise ValueError(f"unknown network {platform!r}")
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"oauth:{platform}")
    return {**COMMON, **DEFAULTS[platform], **(row.value if row else {})}


def configure_oauth(platform: str, **changes: Any) -> dict[str, Any]:
    """Set OAuth switches of a network (kept in the sandbox database: a served emulator sees them at once).
    A value of None for a lifetime means "never expires"; reset=True first returns every switch to its default.
    Returns the switches now in force."""
    if platform not in DEFAULTS:
        raise ValueError(f"unknown network {platform!r}")
    reset = bool(changes.pop("reset", False))
    allowed = set(COMMON) | set(DEFAULTS[platform])
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(
            f"unknown OAuth switch(es) for {platform}: {', '.join(sorted(unknown))}; "
            f"one of {', '.join(sorted(allowed))}"
        )
    if changes.get("token_failure") not in TOKEN_FAILURES:
        raise ValueError("token_failure: null, invalid_grant or server_error")
    if changes.get("consent", "grant") not in ("grant", "deny"):
        raise ValueError("consent: grant or deny")
    for k, v in changes.items():
        if k.endswith("_ttl_s") and v is not None and (not isinstance(v, int | float) or v < 0):
            raise ValueError(f"{k}: seconds (>= 0) or null")
    key = f"oauth:{platform}"
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        value = {} if reset or row is None else dict(row.value)
        value.update(changes)
        if row is None:
            SandboxSetting.create(key=key, value=value)
        else:
            SandboxSetting.update(value=value).where(SandboxSetting.key == key).execute()
    return oauth_settings(platform)


def _expiry(ttl: float | None) -> datetime | None:
    return None if ttl is None else now() + timedelta(seconds=float(ttl))


def _seconds_left(at: datetime | None, default: int = 0) -> int:
    return default if at is None else max(0, int((at - now()).total_seconds()))


# --- credentials ---------------------------------------------------------------------------------------------
def _store(
    platform: str,
    token: str,
    kind: str,
    *,
    grant_id: str | None = None,
    account_id: str | None = None,
    expires_at: datetime | None = None,
    data: dict[str, Any] | None = None,
) -> str:
    with write():
        SandboxToken.create(
            id=token_hash(token),
            platform=platform,
            grant_id=grant_id,
            kind=kind,
            account_id=account_id,
            expires_at=expires_at,
            data=data or {},
            created_at=now(),
        )
    return token


def _find(token: str | None, platform: str, *kinds: str) -> SandboxToken | None:
    if not token:
        return None
    row = SandboxToken.get_or_none(SandboxToken.id == token_hash(token))
    if row is None or row.platform != platform or (kinds and row.kind not in kinds):
        return None
    return row


def _grant(row: SandboxToken) -> SandboxGrant | None:
    return SandboxGrant.get_or_none(SandboxGrant.id == row.grant_id) if row.grant_id else None


def _alive(row: SandboxToken, grant: SandboxGrant | None) -> str | None:
    """None when the credential is usable, else why not: revoked | expired | used."""
    if row.state == "revoked" or (grant is not None and grant.state == "revoked"):
        return "revoked"
    if row.state in ("used", "rotated"):
        return row.state
    if row.expires_at is not None and now() >= row.expires_at:
        return "expired"
    return None


@dataclass
class Auth:
    """Who an API call's token speaks for. problem: None, or invalid | expired | revoked."""

    account: SandboxAccount | None
    problem: str | None = None
    kind: str = "account"  # account (a sandbox account's own token) | access | user | page
    grant: SandboxGrant | None = None
    expires_at: datetime | None = None

    def accounts(self) -> list[SandboxAccount]:
        """Every account the token reaches (a grant may reach several: pages, organisations)."""
        if self.grant is None:
            return [self.account] if self.account is not None else []
        ids = list(self.grant.account_ids or [])
        rows = {a.id: a for a in SandboxAccount.select().where(SandboxAccount.id.in_(ids))}
        return [rows[i] for i in ids if i in rows]


def authenticate(token: str | None, platform: str, owner: str | None = None) -> Auth:
    """The account an API call's token speaks for at `platform`, or the problem with the token. A sandbox
    account's own token (the product's sandbox accounts) never expires unless a test made it mortal; a token
    the OAuth endpoints issued expires and dies with its grant. owner: the external id the call acts on (the
    Graph API's /{id}/…), choosing among a user token's accounts."""
    acc = account_for_token(token)
    if acc is not None:
        return Auth(acc) if acc.platform == platform else Auth(None, "invalid")
    row = _find(token, platform, "access", "user", "page", "account")
    if row is None:
        return Auth(None, "invalid")
    grant = _grant(row)
    problem = _alive(row, grant)
    if problem:
        return Auth(None, problem, row.kind, grant, row.expires_at)
    auth = Auth(None, None, row.kind, grant, row.expires_at)
    if row.account_id:
        auth.account = SandboxAccount.get_or_none(SandboxAccount.id == row.account_id)
    else:
        mine = [a for a in auth.accounts() if a.platform == platform]
        chosen = [a for a in mine if a.external_id == owner] if owner else mine
        auth.account = chosen[0] if chosen else (mine[0] if mine else None)
    if auth.account is None:
        auth.problem = "invalid"
    return auth


def _mortal(acc: SandboxAccount, state: str, expires_at: datetime | None) -> None:
    """Move a sandbox account's own token into the issued credentials (so it can expire or be revoked)."""
    row = SandboxToken.get_or_none((SandboxToken.kind == "account") & (SandboxToken.account_id == acc.id))
    with write():
        if row is None:
            SandboxToken.create(
                id=acc.token_hash,
                platform=acc.platform,
                kind="account",
                account_id=acc.id,
                expires_at=expires_at,
                state=state,
                created_at=now(),
            )
            SandboxAccount.update(token_hash=token_hash("retired." + secrets.token_hex(16))).where(
                SandboxAccount.id == acc.id
            ).execute()
        else:
            SandboxToken.update(state=state, expires_at=expires_at).where(SandboxToken.id == row.id).execute()
    _ACCOUNTS.clear()


def expire_account_token(sandbox_account_id: str, in_s: float = 0.0) -> None:
    """Make a sandbox account's own token expire `in_s` seconds from now (tests: the clock moved past it)."""
    acc = SandboxAccount.get_by_id(sandbox_account_id)
    _mortal(acc, "active", now() + timedelta(seconds=in_s))


def revoke_account_token(sandbox_account_id: str) -> None:
    """Revoke a sandbox account's own token: its API calls then meet the network's revoked-token error."""
    acc = SandboxAccount.get_by_id(sandbox_account_id)
    _mortal(acc, "revoked", None)


def revoke_grant(grant_id: str) -> None:
    with write():
        SandboxGrant.update(state="revoked").where(SandboxGrant.id == grant_id).execute()
        SandboxToken.update(state="revoked").where(SandboxToken.grant_id == grant_id).execute()


def revoke_token(token: str, platform: str) -> bool:
    """Revoke what `token` belongs to: its whole grant (every access, refresh and page token of the consent),
    or a sandbox account's own token. False: the emulator does not know the token."""
    acc = account_for_token(token)
    if acc is not None and acc.platform == platform:
        revoke_account_token(acc.id)
        return True
    row = _find(token, platform)
    if row is None or row.kind == "code":
        return False
    if row.grant_id:
        revoke_grant(row.grant_id)
    else:
        with write():
            SandboxToken.update(state="revoked").where(SandboxToken.id == row.id).execute()
    return True


def grants(platform: str | None = None) -> list[SandboxGrant]:
    q = SandboxGrant.select().order_by(SandboxGrant.created_at)
    return list(q.where(SandboxGrant.platform == platform) if platform else q)


# --- PKCE ----------------------------------------------------------------------------------------------------
def pkce_ok(challenge: str, method: str, verifier: str | None, *, hex_too: bool = False) -> bool:
    """RFC 7636: S256 (BASE64URL(SHA256(verifier)) without padding) or plain. TikTok's desktop apps send the
    SHA-256 as hex instead (its documented variant): accepted where hex_too."""
    if not verifier:
        return False
    if (method or "plain").upper() == "PLAIN":
        return hmac.compare_digest(challenge, verifier)
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    if hmac.compare_digest(challenge, base64.urlsafe_b64encode(digest).decode().rstrip("=")):
        return True
    return hex_too and hmac.compare_digest(challenge.lower(), digest.hex())


def _redirect(uri: str, params: dict[str, Any], fragment: str = "") -> httpx.Response:
    sep = "&" if urlsplit(uri).query else "?"
    return httpx.Response(
        302,
        headers={
            "Location": uri + sep + urlencode({k: v for k, v in params.items() if v is not None}) + fragment
        },
    )


# --- the providers -------------------------------------------------------------------------------------------
class OAuthProvider:
    """A network's OAuth endpoints, installed into its emulator. Subclasses give the paths, parameter names,
    token formats and error bodies of their network."""

    client_param = "client_id"
    scope_sep = " "
    hex_pkce = False

    def __init__(self, emulator: Emulator) -> None:
        self.emu = emulator
        self.platform = emulator.platform

    def settings(self) -> dict[str, Any]:
        return oauth_settings(self.platform)

    # error bodies (overridden per network)
    def grant_error(self, error: str, description: str, status: int = 400) -> httpx.Response:
        return json_response(status, {"error": error, "error_description": description})

    def server_error(self) -> httpx.Response:
        return json_response(
            503,
            {
                "error": "server_error",
                "error_description": "The server is temporarily "
                "unavailable (sandbox switch token_failure=server_error).",
            },
        )

    def switched_failure(self) -> httpx.Response | None:
        failure = self.settings().get("token_failure")
        if failure == "server_error":
            return self.server_error()
        if failure == "invalid_grant":
            return self.grant_error(
                "invalid_grant",
                "The grant is invalid, expired or revoked (sandbox switch token_failure=invalid_grant).",
            )
        return None

    def denied(self, redirect_uri: str, state: str | None) -> httpx.Response:
        return _redirect(
            redirect_uri,
            {"error": "access_denied", "error_description": "The user denied the request.", "state": state},
        )

    def granted(self, redirect_uri: str, code: str, state: str | None, scopes: list[str]) -> httpx.Response:
        return _redirect(redirect_uri, {"code": code, "state": state})

    # identities
    def new_code(self) -> str:
        return b64url(43)

    def new_access(self) -> str:
        return "at." + b62(60)

    def new_refresh(self) -> str:
        return "rt." + b62(60)

    def user(self, name: str, n: int) -> tuple[str, list[str]]:
        """(subject, account ids) of the scripted user `name`, created with its accounts on first consent and
        the same ever after (a sandbox account of the same name, e.g. one `accounts add-sandbox` made, is it)."""
        key = f"oauth:{self.platform}:user:{name}"
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        if row is not None:
            return row.value["subject"], list(row.value["accounts"])
        with write():  # two first consents at once make one user
            row = SandboxSetting.get_or_none(SandboxSetting.key == key)
            if row is not None:
                return row.value["subject"], list(row.value["accounts"])
            subject, accounts = self.make_user(name, max(1, min(10, int(n))))
            SandboxSetting.create(key=key, value={"subject": subject, "accounts": accounts})
        return subject, accounts

    def make_user(self, name: str, n: int) -> tuple[str, list[str]]:
        acc = SandboxAccount.get_or_none(
            (SandboxAccount.platform == self.platform) & (SandboxAccount.name == name)
        )
        if acc is None:
            acc = SandboxAccount.get_by_id(register_account(self.platform, name).sandbox_account_id)
        return acc.external_id, [acc.id]

    # endpoints
    def authorize(self, request: Request) -> httpx.Response:
        p = request.query
        client_id, redirect_uri = p.get(self.client_param), p.get("redirect_uri")
        if not client_id or not redirect_uri or not redirect_uri.startswith(("http://", "https://")):
            return self.grant_error(
                "invalid_request", f"{self.client_param} and an http(s) redirect_uri are required."
            )
        if p.get("response_type", "code") != "code":
            return _redirect(redirect_uri, {"error": "unsupported_response_type", "state": p.get("state")})
        settings = self.settings()
        if p.get("sandbox_consent") == "deny" or (
            settings["consent"] == "deny" and p.get("sandbox_consent") != "grant"
        ):
            return self.denied(redirect_uri, p.get("state"))
        try:
            n = int(p.get("sandbox_pages") or settings["pages"])
        except ValueError:
            n = 1
        subject, accounts = self.user(p.get("sandbox_user") or "Sandbox user", n)
        scopes = [s for s in p.get("scope", "").replace(",", " ").split() if s]
        code = self.new_code()
        _store(
            self.platform,
            code,
            "code",
            expires_at=_expiry(settings["code_ttl_s"]),
            data={
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "scopes": scopes,
                "subject": subject,
                "accounts": accounts,
                "code_challenge": p.get("code_challenge"),
                "code_challenge_method": p.get("code_challenge_method")
                or "plain",  # RFC 7636: absent means plain
                "access_type": p.get("access_type"),
            },
        )
        return self.granted(redirect_uri, code, p.get("state"), scopes)

    def redeem(self, params: dict[str, Any]) -> SandboxGrant | httpx.Response:
        """Checks an authorization code exchange; returns the new grant (the code is then used)."""
        failure = self.switched_failure()
        if failure:
            return failure
        client_id = params.get(self.client_param)
        if not client_id or not params.get("client_secret"):
            return self.grant_error(
                "invalid_client", f"{self.client_param} and client_secret are required.", 401
            )
        row = _find(params.get("code"), self.platform, "code")
        if row is None:
            return self.grant_error("invalid_grant", "The authorization code is invalid.")
        problem = _alive(row, None)
        if problem:
            return self.grant_error("invalid_grant", f"The authorization code is {problem}.")
        data = row.data or {}
        if data.get("client_id") != client_id:
            return self.grant_error("invalid_grant", "The authorization code was issued to another client.")
        if params.get("redirect_uri") != data.get("redirect_uri"):
            return self.grant_error("invalid_grant", "redirect_uri does not match the authorization request.")
        if data.get("code_challenge") and not pkce_ok(
            data["code_challenge"],
            data.get("code_challenge_method") or "",
            params.get("code_verifier"),
            hex_too=self.hex_pkce,
        ):
            return self.pkce_error()
        settings = self.settings()
        grant_id = "grt_" + secrets.token_hex(10)
        with write():
            SandboxToken.update(state="used").where(SandboxToken.id == row.id).execute()
            grant = SandboxGrant.create(
                id=grant_id,
                platform=self.platform,
                subject=data.get("subject", ""),
                account_ids=data.get("accounts", []),
                client_id=client_id,
                scopes=data.get("scopes", []),
                created_at=now(),
                refresh_expires_at=_expiry(settings.get("refresh_ttl_s")),
            )
        grant.access_type = data.get("access_type")  # type: ignore[attr-defined]
        return grant

    def pkce_error(self) -> httpx.Response:
        return self.grant_error("invalid_grant", "The code_verifier does not match the code_challenge.")

    def refreshable(self, token: str | None) -> tuple[SandboxToken, SandboxGrant] | httpx.Response:
        failure = self.switched_failure()
        if failure:
            return failure
        row = _find(token, self.platform, "refresh")
        grant = _grant(row) if row is not None else None
        if row is None or grant is None:
            return self.grant_error("invalid_grant", "The refresh token is invalid.")
        problem = _alive(row, grant)
        if problem:
            return self.grant_error("invalid_grant", f"The refresh token is {problem}.")
        return row, grant

    def issue_access(
        self, grant: SandboxGrant, ttl: float | None, kind: str = "access"
    ) -> tuple[str, datetime | None]:
        at = _expiry(ttl)
        return _store(self.platform, self.new_access(), kind, grant_id=grant.id, expires_at=at), at

    def issue_refresh(self, grant: SandboxGrant, expires_at: datetime | None) -> str:
        return _store(self.platform, self.new_refresh(), "refresh", grant_id=grant.id, expires_at=expires_at)

    def rotate(self, old: SandboxToken, grant: SandboxGrant, ttl: float | None) -> str:
        with write():
            SandboxToken.update(state="rotated").where(SandboxToken.id == old.id).execute()
            return self.issue_refresh(grant, _expiry(ttl))


# --- TikTok: www.tiktok.com/v2/auth/authorize/, open.tiktokapis.com/v2/oauth/{token,revoke}/ -----------------
class TikTokOAuth(OAuthProvider):
    client_param = "client_key"
    scope_sep = ","
    hex_pkce = True

    def install(self) -> None:
        self.emu.route("GET", r"/v2/auth/authorize", self.authorize)
        self.emu.route("POST", r"/v2/oauth/token", self.token)
        self.emu.route("POST", r"/v2/oauth/revoke", self.revoke)
        self.emu.route("GET", r"/v2/user/info", self.user_info)

    def grant_error(self, error: str, description: str, status: int = 400) -> httpx.Response:
        return json_response(
            status, {"error": error, "error_description": description, "log_id": "2025" + digits(28, "0")}
        )

    def server_error(self) -> httpx.Response:
        return self.grant_error(
            "server_error", "Internal server error (sandbox switch token_failure=server_error).", 500
        )

    def granted(self, redirect_uri: str, code: str, state: str | None, scopes: list[str]) -> httpx.Response:
        return _redirect(redirect_uri, {"code": code, "scopes": ",".join(scopes), "state": state})

    def denied(self, redirect_uri: str, state: str | None) -> httpx.Response:
        return _redirect(
            redirect_uri,
            {
                "error": "access_denied",
                "error_description": "The user denied the authorization.",
                "state": state,
            },
        )

    def new_code(self) -> str:
        return b64url(60) + "*0!" + digits(4)

    def new_access(self) -> str:
        return "act." + b62(60) + "!" + digits(4)

    def new_refresh(self) -> str:
        return "rft." + b62(60) + "!" + digits(4)

    def _answer(
        self, grant: SandboxGrant, access: str, at: datetime | None, refresh: str, refresh_at: datetime | None
    ) -> httpx.Response:
        return json_response(
            200,
            {
                "access_token": access,
                "expires_in": _seconds_left(at, 10 * 365 * DAY),
                "open_id": grant.subject,
                "refresh_expires_in": _seconds_left(refresh_at, 10 * 365 * DAY),
                "refresh_token": refresh,
                "scope": ",".join(grant.scopes or []),
                "token_type": "Bearer",
            },
        )

    def token(self, request: Request) -> httpx.Response:
        p = request.form
        s = self.settings()
        if p.get("grant_type") == "authorization_code":
            grant = self.redeem(p)
            if isinstance(grant, httpx.Response):
                return grant
            access, at = self.issue_access(grant, s["access_ttl_s"])
            refresh_at = _expiry(s["refresh_ttl_s"])
            return self._answer(grant, access, at, self.issue_refresh(grant, refresh_at), refresh_at)
        if p.get("grant_type") == "refresh_token":
            if not p.get("client_key") or not p.get("client_secret"):
                return self.grant_error("invalid_client", "client_key and client_secret are required.", 401)
            found = self.refreshable(p.get("refresh_token"))
            if isinstance(found, httpx.Response):
                return found
            old, grant = found
            access, at = self.issue_access(grant, s["access_ttl_s"])
            if s["rotate"]:
                refresh = self.rotate(old, grant, s["refresh_ttl_s"])
                refresh_at = _find(refresh, self.platform).expires_at  # type: ignore[union-attr]
            else:
                refresh, refresh_at = str(p.get("refresh_token")), old.expires_at
            return self._answer(grant, access, at, refresh, refresh_at)
        return self.grant_error("invalid_request", "grant_type must be authorization_code or refresh_token.")

    def revoke(self, request: Request) -> httpx.Response:
        p = request.form
        if not p.get("client_key") or not p.get("client_secret"):
            return self.grant_error("invalid_client", "client_key and client_secret are required.", 401)
        if not revoke_token(p.get("token", ""), self.platform):
            return self.grant_error("invalid_request", "The token is invalid.")
        return json_response(200, {})

    def user_info(self, request: Request) -> httpx.Response:
        from backend.networks.tiktok.emulator import envelope, err

        auth = authenticate(request.bearer(), self.platform)
        if auth.account is None or auth.problem:
            return err(401, "access_token_invalid", api_auth_message(auth.problem))
        acc = auth.account
        user = {
            "open_id": acc.external_id,
            "union_id": "u" + acc.external_id[4:],
            "display_name": acc.display_name,
            "username": acc.username,
            "avatar_url": f"https://p16-sign.tiktokcdn.sandbox.invalid/{acc.username}.jpeg",
        }
        fields = [f for f in request.query.get("fields", "").split(",") if f]
        return envelope(200, {"user": {k: v for k, v in user.items() if not fields or k in fields}})


def api_auth_message(problem: str | None) -> str:
    if problem == "expired":
        return "The access token has expired."
    if problem == "revoked":
        return "The access token has been revoked: the user removed the app's access."
    return "The access token is invalid or not found in the request."


# --- Facebook Login (Facebook, and Instagram through the linked page) ---------------------------------------
class GraphOAuth(OAuthProvider):
    """www.facebook.com/v21.0/dialog/oauth; graph.facebook.com/v21.0/oauth/access_token (code, and
    grant_type=fb_exchange_token for a long-lived token); /me, /me/accounts (page tokens; Instagram: each page's
    instagram_business_account); DELETE /me/permissions; /debug_token; Instagram Login's refresh_access_token."""

    scope_sep = ","

    def install(self) -> None:
        self.emu.route("GET", r"/dialog/oauth", self.authorize)
        self.emu.route("GET", r"/oauth/access_token", self.token)
        self.emu.route("POST", r"/oauth/access_token", self.token)
        self.emu.route("GET", r"/(?P<user>me|\d+)/accounts", self.accounts)
        self.emu.route("GET", r"/me", self.me)
        self.emu.route("DELETE", r"/(?P<user>me|\d+)/permissions", self.deauthorize)
        self.emu.route("GET", r"/debug_token", self.debug_token)
        if self.platform == "instagram":
            self.emu.route("GET", r"/refresh_access_token", self.ig_refresh)

    def error(
        self, status: int, code: int, message: str, subcode: int | None = None, transient: bool | None = None
    ) -> httpx.Response:
        from backend.networks.facebook.emulator_graph import graph_error

        return graph_error(status, code, message, subcode=subcode, transient=transient)

    def grant_error(self, error: str, description: str, status: int = 400) -> httpx.Response:
        if error == "invalid_grant":  # a dead grant: the user's session or the app's authorization is gone
            return self.error(
                400,
                190,
                "Error validating access token: The user has not authorized application "
                f"or the session was invalidated. ({description})",
                458,
            )
        if error == "invalid_client":
            return self.error(400, 101, "Error validating application. Invalid application ID or secret.")
        return self.error(400, 100, description)

    def server_error(self) -> httpx.Response:
        return self.error(
            500,
            2,
            "Service temporarily unavailable (sandbox switch token_failure=server_error)",
            transient=True,
        )

    def pkce_error(self) -> httpx.Response:
        return self.error(400, 100, "Invalid code verifier.", 36008)

    def granted(self, redirect_uri: str, code: str, state: str | None, scopes: list[str]) -> httpx.Response:
        return _redirect(redirect_uri, {"code": code, "state": state}, "#_=_")

    def denied(self, redirect_uri: str, state: str | None) -> httpx.Response:
        return _redirect(
            redirect_uri,
            {
                "error": "access_denied",
                "error_code": 200,
                "error_description": "Permissions error",
                "error_reason": "user_denied",
                "state": state,
            },
            "#_=_",
        )

    def new_code(self) -> str:
        return "AQ" + b64url(180)

    def new_access(self) -> str:
        return "EAAG" + b62(150)

    def make_user(self, name: str, n: int) -> tuple[str, list[str]]:
        """A Facebook user managing n pages (Facebook: the pages are the sandbox accounts; Instagram: each page
        links one Instagram professional account, the sandbox account)."""
        subject = digits(15, "1")
        accounts: list[str] = []
        for i in range(n):
            label = name if n == 1 else f"{name} {i + 1}"
            ident = register_account(self.platform, label)
            accounts.append(ident.sandbox_account_id)
            if self.platform == "instagram":  # the linked page: an id and a name of its own
                with write():
                    SandboxSetting.create(
                        key=f"oauth:instagram:page:{ident.sandbox_account_id}",
                        value={"id": digits(15, "1"), "name": f"{label} (Page)"},
                    )
        return subject, accounts

    def token(self, request: Request) -> httpx.Response:
        p = request.params
        s = self.settings()
        if p.get("grant_type") == "fb_exchange_token":
            failure = self.switched_failure()
            if failure:
                return failure
            if not p.get("client_id") or not p.get("client_secret"):
                return self.grant_error("invalid_client", "")
            row = _find(p.get("fb_exchange_token"), self.platform, "user")
            grant = _grant(row) if row is not None else None
            if row is None or grant is None:
                return self.error(400, 190, "Invalid OAuth access token - Cannot parse access token")
            problem = _alive(row, grant)
            if problem:
                return self.api_error(problem)
            token, at = self.issue_access(grant, s["long_ttl_s"], "user")
            with write():
                SandboxToken.update(data={"long_lived": True}).where(
                    SandboxToken.id == token_hash(token)
                ).execute()
            return self._answer(token, at)
        grant = self.redeem(p)
        if isinstance(grant, httpx.Response):
            return grant
        token, at = self.issue_access(grant, s["access_ttl_s"], "user")
        return self._answer(token, at)

    def _answer(self, token: str, at: datetime | None) -> httpx.Response:
        body: dict[str, Any] = {"access_token": token, "token_type": "bearer"}
        if at is not None:
            body["expires_in"] = _seconds_left(at)
        return json_response(200, body)

    def api_error(self, problem: str | None) -> httpx.Response:
        if problem == "expired":
            return self.error(
                400,
                190,
                f"Error validating access token: Session has expired on {now():%A, %d-%b-%y %H:%M:%S} PST.",
                463,
            )
        if problem == "revoked":
            return self.error(
                400, 190, "Error validating access token: The user has not authorized application.", 458
            )
        return self.error(400, 190, "Invalid OAuth access token - Cannot parse access token")

    def _user(self, request: Request, user: str = "me") -> tuple[SandboxToken, SandboxGrant] | httpx.Response:
        row = _find(request.token(), self.platform, "user")
        grant = _grant(row) if row is not None else None
        if row is None or grant is None:
            if authenticate(request.token(), self.platform).account is not None:  # a page or account token
                return self.error(
                    400, 100, "(#100) Tried accessing nonexisting field (accounts) on node type (Page)"
                )
            return self.api_error("invalid")
        problem = _alive(row, grant)
        if problem:
            return self.api_error(problem)
        if user not in ("me", grant.subject):
            return self.error(400, 100, f"(#100) Unsupported request for object {user}", 33)
        return row, grant

    def me(self, request: Request) -> httpx.Response:
        found = self._user(request)
        if isinstance(found, httpx.Response):
            return found
        grant = found[1]
        name = SandboxAccount.get_or_none(SandboxAccount.id == (grant.account_ids or [""])[0])
        return json_response(200, {"id": grant.subject, "name": name.name if name else "Sandbox user"})

    def accounts(self, request: Request, user: str) -> httpx.Response:
        """The pages the user manages, each with a Page access token (never expiring when the user token is
        long-lived; else expiring with it); Instagram: each page's linked instagram_business_account."""
        found = self._user(request, user)
        if isinstance(found, httpx.Response):
            return found
        row, grant = found
        long_lived = bool((row.data or {}).get("long_lived"))
        data = []
        for acc in Auth(None, grant=grant).accounts():
            page_token = _store(
                self.platform,
                self.new_access(),
                "page",
                grant_id=grant.id,
                account_id=acc.id,
                expires_at=None if long_lived else row.expires_at,
            )
            if self.platform == "instagram":
                info = SandboxSetting.get_or_none(SandboxSetting.key == f"oauth:instagram:page:{acc.id}")
                page = info.value if info else {"id": digits(15, "1"), "name": acc.name}
                data.append(
                    {
                        "access_token": page_token,
                        "category": "Brand",
                        "name": page["name"],
                        "id": page["id"],
                        "tasks": [
                            "ADVERTISE",
                            "ANALYZE",
                            "CREATE_CONTENT",
                            "MESSAGING",
                            "MODERATE",
                            "MANAGE",
                        ],
                        "instagram_business_account": {"id": acc.external_id, "username": acc.username},
                    }
                )
            else:
                data.append(
                    {
                        "access_token": page_token,
                        "category": "Brand",
                        "name": acc.name,
                        "id": acc.external_id,
                        "tasks": [
                            "ADVERTISE",
                            "ANALYZE",
                            "CREATE_CONTENT",
                            "MESSAGING",
                            "MODERATE",
                            "MANAGE",
                        ],
                    }
                )
        return json_response(
            200, {"data": data, "paging": {"cursors": {"before": "QVFIUk", "after": "QVFIUk"}}}
        )

    def deauthorize(self, request: Request, user: str) -> httpx.Response:
        found = self._user(request, user)
        if isinstance(found, httpx.Response):
            return found
        revoke_grant(found[1].id)
        return json_response(200, {"success": True})

    def debug_token(self, request: Request) -> httpx.Response:
        token = request.params.get("input_token")
        row = _find(token, self.platform, "user", "page", "account")
        acc = account_for_token(token)
        if row is None and acc is None:
            return self.error(400, 190, "Invalid OAuth access token - Cannot parse access token")
        if row is None:
            return json_response(
                200,
                {
                    "data": {
                        "type": "PAGE",
                        "is_valid": True,
                        "expires_at": 0,
                        "profile_id": acc.external_id if acc else None,
                    }
                },
            )
        grant = _grant(row)
        problem = _alive(row, grant)
        body: dict[str, Any] = {
            "app_id": grant.client_id if grant else "",
            "type": "USER" if row.kind == "user" else "PAGE",
            "is_valid": problem is None,
            "expires_at": int(row.expires_at.timestamp()) if row.expires_at else 0,
            "scopes": list(grant.scopes or []) if grant else [],
            "user_id": grant.subject if grant else None,
        }
        if problem:
            body["error"] = {
                "code": 190,
                "subcode": 463 if problem == "expired" else 458,
                "message": f"The token is {problem}.",
            }
        return json_response(200, {"data": body})

    def ig_refresh(self, request: Request) -> httpx.Response:
        """Instagram Login: a long-lived token (at least 24 h old, not expired) -> a new one for 60 days."""
        if request.params.get("grant_type") != "ig_refresh_token":
            return self.error(400, 100, "grant_type must be ig_refresh_token")
        failure = self.switched_failure()
        if failure:
            return failure
        row = _find(request.params.get("access_token"), self.platform, "user")
        grant = _grant(row) if row is not None else None
        if row is None or grant is None:
            return self.api_error("invalid")
        problem = _alive(row, grant)
        if problem:
            return self.api_error(problem)
        if not (row.data or {}).get("long_lived") or now() - row.created_at < timedelta(days=1):
            return self.error(
                400, 190, "The access token must be long-lived and at least 24 hours old to be refreshed."
            )
        token, at = self.issue_access(grant, self.settings()["long_ttl_s"], "user")
        with write():
            SandboxToken.update(data={"long_lived": True}).where(
                SandboxToken.id == token_hash(token)
            ).execute()
        return self._answer(token, at)


# --- LinkedIn: www.linkedin.com/oauth/v2/{authorization,accessToken,revoke} ----------------------------------
ORG_ADMIN_SCOPES = {"r_organization_admin", "rw_organization_admin"}


class LinkedInOAuth(OAuthProvider):
    def install(self) -> None:
        self.emu.route("GET", r"/oauth/v2/authorization", self.authorize)
        self.emu.route("POST", r"/oauth/v2/accessToken", self.token)
        self.emu.route("POST", r"/oauth/v2/revoke", self.revoke)
        self.emu.route("GET", r"/v2/userinfo", self.userinfo)
        self.emu.route("GET", r"/rest/organizationAcls", self.organization_acls)
        self.emu.route("GET", r"/rest/organizations/(?P<org_id>\d+)", self.organization)
        self.emu.route("GET", r"/rest/organizations", self.organizations)

    def server_error(self) -> httpx.Response:
        return json_response(
            500,
            {
                "error": "server_error",
                "error_description": "Internal Server Error (sandbox switch token_failure=server_error)",
            },
        )

    def pkce_error(self) -> httpx.Response:
        return self.grant_error(
            "invalid_request",
            "Unable to retrieve access token: appid/redirect uri/code "
            "verifier does not match authorization code. Or authorization code expired.",
        )

    def denied(self, redirect_uri: str, state: str | None) -> httpx.Response:
        return _redirect(
            redirect_uri,
            {
                "error": "user_cancelled_authorize",
                "error_description": "The user cancelled the authorization",
                "state": state,
            },
        )

    def new_code(self) -> str:
        return "AQT" + b64url(150)

    def new_access(self) -> str:
        return "AQV" + b64url(150)

    def new_refresh(self) -> str:
        return "AQX" + b64url(150)

    def make_user(self, name: str, n: int) -> tuple[str, list[str]]:
        """A member; with the `pages` switch above 1 (or sandbox_pages=N), also N-1 organisations it
        administers (posting as them with the member's token, author urn:li:organization:…)."""
        subject, accounts = super().make_user(name, 1)
        for i in range(1, n):
            ident = register_account(self.platform, f"{name} Org {i}")
            org = "urn:li:organization:" + digits(8)
            with write():
                SandboxAccount.update(external_id=org).where(
                    SandboxAccount.id == ident.sandbox_account_id
                ).execute()
            accounts.append(ident.sandbox_account_id)
        return subject, accounts

    def _answer(
        self, grant: SandboxGrant, access: str, at: datetime | None, refresh: str | None
    ) -> httpx.Response:
        body: dict[str, Any] = {
            "access_token": access,
            "expires_in": _seconds_left(at, 10 * 365 * DAY),
            "scope": ",".join(grant.scopes or []),
        }
        if refresh:
            body["refresh_token"] = refresh
            body["refresh_token_expires_in"] = _seconds_left(grant.refresh_expires_at, 10 * 365 * DAY)
        return json_response(200, body)

    def token(self, request: Request) -> httpx.Response:
        p = request.form
        s = self.settings()
        if p.get("grant_type") == "authorization_code":
            grant = self.redeem(p)
            if isinstance(grant, httpx.Response):
                return grant
            access, at = self.issue_access(grant, s["access_ttl_s"])
            refresh = self.issue_refresh(grant, grant.refresh_expires_at) if s["refresh_enabled"] else None
            return self._answer(grant, access, at, refresh)
        if p.get("grant_type") == "refresh_token":
            if not p.get("client_id") or not p.get("client_secret"):
                return self.grant_error("invalid_client", "Client authentication failed", 401)
            found = self.refreshable(p.get("refresh_token"))
            if isinstance(found, httpx.Response):
                return found
            if not s["refresh_enabled"]:
                return self.grant_error(
                    "invalid_grant", "Programmatic refresh is not enabled for this application."
                )
            _old, grant = found
            access, at = self.issue_access(grant, s["access_ttl_s"])
            return self._answer(grant, access, at, str(p.get("refresh_token")))  # the same refresh token
        return self.grant_error("invalid_request", "grant_type must be authorization_code or refresh_token")

    def revoke(self, request: Request) -> httpx.Response:
        p = request.form
        if not p.get("client_id") or not p.get("client_secret"):
            return self.grant_error("invalid_client", "Client authentication failed", 401)
        if not revoke_token(p.get("token", ""), self.platform):
            return self.grant_error("invalid_request", "Invalid token")
        return empty_response(200)

    def userinfo(self, request: Request) -> httpx.Response:
        from backend.networks.linkedin.emulator import li_error

        auth = authenticate(request.bearer(), self.platform)
        if auth.account is None or auth.problem:
            return api_error_linkedin(auth.problem, li_error)
        member = auth.accounts()[0] if auth.grant else auth.account
        return json_response(
            200,
            {
                "sub": member.external_id.rsplit(":", 1)[-1],
                "name": member.display_name,
                "given_name": member.display_name.split(" ")[0],
                "email_verified": True,
                "locale": {"country": "US", "language": "en"},
            },
        )

    def organization_acls(self, request: Request) -> httpx.Response:
        """`q=roleAssignee`: the organisations the member administers (through this grant)."""
        from backend.networks.linkedin.emulator import li_error

        auth = authenticate(request.bearer(), self.platform)
        if auth.account is None or auth.problem:
            return api_error_linkedin(auth.problem, li_error)
        member = auth.account.external_id
        elements = [
            {
                "organization": a.external_id,
                "role": "ADMINISTRATOR",
                "state": "APPROVED",
                "roleAssignee": member,
            }
            for a in auth.accounts()
            if a.external_id.startswith("urn:li:organization:")
        ]
        return json_response(
            200, {"paging": {"count": len(elements), "start": 0, "links": []}, "elements": elements}
        )

    def _administered(self, request: Request) -> dict[str, SandboxAccount] | httpx.Response:
        """The organisations (by numeric id) the token's member administers and may read: the grant needs
        `r_organization_admin` or `rw_organization_admin` (else 403 ACCESS_DENIED, as LinkedIn refuses an
        organisation lookup without them; UNCONFIRMED: the exact scope list)."""
        from backend.networks.linkedin.emulator import li_error

        auth = authenticate(request.bearer(), self.platform)
        if auth.account is None or auth.problem:
            return api_error_linkedin(auth.problem, li_error)
        if auth.grant is not None and not set(auth.grant.scopes or []) & ORG_ADMIN_SCOPES:
            return li_error(
                403, "Not enough permissions to access: organizations.GET.NO_VERSION", 100, "ACCESS_DENIED"
            )
        return {
            a.external_id.rsplit(":", 1)[-1]: a
            for a in auth.accounts()
            if a.external_id.startswith("urn:li:organization:")
        }

    @staticmethod
    def _organization(org_id: str, acc: SandboxAccount) -> dict[str, Any]:
        vanity = "".join(ch for ch in acc.display_name.lower().replace(" ", "-") if ch.isalnum() or ch == "-")
        return {
            "id": int(org_id),
            "$URN": f"urn:li:organization:{org_id}",
            "localizedName": acc.display_name,
            "vanityName": vanity,
            "name": {
                "localized": {"en_US": acc.display_name},
                "preferredLocale": {"country": "US", "language": "en"},
            },
        }

    def organization(self, request: Request, org_id: str) -> httpx.Response:
        """`GET /rest/organizations/{id}`: an organisation the member administers (its `localizedName`); another
        one is 403 ACCESS_DENIED (the sandbox knows no public organisation data), an unknown id 404."""
        from backend.networks.linkedin.emulator import li_error

        mine = self._administered(request)
        if isinstance(mine, httpx.Response):
            return mine
        if org_id in mine:
            return json_response(200, self._organization(org_id, mine[org_id]))
        known = SandboxAccount.get_or_none(
            (SandboxAccount.platform == self.platform)
            & (SandboxAccount.external_id == f"urn:li:organization:{org_id}")
        )
        if known is None:
            return li_error(404, f"Organization {org_id} not found", None, "NOT_FOUND")
        return li_error(
            403, "Not enough permissions to access: organizations.GET.NO_VERSION", 100, "ACCESS_DENIED"
        )

    def organizations(self, request: Request) -> httpx.Response:
        """The batch form `GET /rest/organizations?ids=List(1,2)`: `{"results": {id: organisation}, "statuses",
        "errors"}`, an id the member does not administer under `errors` (403)."""
        from backend.networks.linkedin.emulator import li_error

        m = re.fullmatch(r"List\(([\d,\s]*)\)", str(request.query.get("ids") or ""))
        if m is None:
            return li_error(400, "ids must be List(id1,id2,…)", None, "ILLEGAL_ARGUMENT")
        mine = self._administered(request)
        if isinstance(mine, httpx.Response):
            return mine
        ids = [i.strip() for i in m.group(1).split(",") if i.strip()]
        results = {i: self._organization(i, mine[i]) for i in ids if i in mine}
        errors = {
            i: {"status": 403, "code": "ACCESS_DENIED", "message": "Not enough permissions to access"}
            for i in ids
            if i not in mine
        }
        return json_response(
            200,
            {"results": results, "statuses": {i: 200 if i in mine else 403 for i in ids}, "errors": errors},
        )


def api_error_linkedin(problem: str | None, li_error: Any) -> httpx.Response:
    """LinkedIn's 401s. UNCONFIRMED: the serviceErrorCode of the expired (65601) and revoked (65602) cases."""
    if problem == "expired":
        return li_error(401, "The token used in the request has expired", 65601, "EXPIRED_ACCESS_TOKEN")
    if problem == "revoked":
        return li_error(
            401, "The token used in the request has been revoked by the user", 65602, "REVOKED_ACCESS_TOKEN"
        )
    return li_error(401, "Invalid access token", 65600, "INVALID_ACCESS_TOKEN")


# --- Google (YouTube): accounts.google.com/o/oauth2/v2/auth, oauth2.googleapis.com/{token,revoke} -----------
class GoogleOAuth(OAuthProvider):
    def install(self) -> None:
        self.emu.route("GET", r"/o/oauth2/v2/auth", self.authorize)
        self.emu.route("POST", r"/token", self.token)
        self.emu.route("POST", r"/revoke", self.revoke)

    def server_error(self) -> httpx.Response:
        return json_response(
            503,
            {
                "error": "internal_failure",
                "error_description": "Backend Error (sandbox switch token_failure=server_error)",
            },
        )

    def grant_error(self, error: str, description: str, status: int = 400) -> httpx.Response:
        return json_response(status, {"error": error, "error_description": description})

    def granted(self, redirect_uri: str, code: str, state: str | None, scopes: list[str]) -> httpx.Response:
        return _redirect(redirect_uri, {"state": state, "code": code, "scope": " ".join(scopes)})

    def new_code(self) -> str:
        return "4/0A" + b64url(70)

    def new_access(self) -> str:
        return "ya29.a0" + b64url(150)

    def new_refresh(self) -> str:
        return "1//0" + b64url(100)

    def _answer(
        self, grant: SandboxGrant, access: str, at: datetime | None, refresh: str | None
    ) -> httpx.Response:
        body: dict[str, Any] = {
            "access_token": access,
            "expires_in": _seconds_left(at, 10 * 365 * DAY),
            "scope": " ".join(grant.scopes or []),
            "token_type": "Bearer",
        }
        if refresh:
            body["refresh_token"] = refresh
            if grant.refresh_expires_at is not None:  # testing-mode apps: refresh_token_expires_in
                body["refresh_token_expires_in"] = _seconds_left(grant.refresh_expires_at)
        return json_response(200, body)

    def token(self, request: Request) -> httpx.Response:
        p = request.form
        s = self.settings()
        if p.get("grant_type") == "authorization_code":
            grant = self.redeem(p)
            if isinstance(grant, httpx.Response):
                return grant
            access, at = self.issue_access(grant, s["access_ttl_s"])
            offline = (
                getattr(grant, "access_type", None) == "offline"
            )  # a refresh token only for offline access
            return self._answer(
                grant, access, at, self.issue_refresh(grant, grant.refresh_expires_at) if offline else None
            )
        if p.get("grant_type") == "refresh_token":
            if not p.get("client_id") or not p.get("client_secret"):
                return self.grant_error("invalid_client", "Unauthorized", 401)
            found = self.refreshable(p.get("refresh_token"))
            if isinstance(found, httpx.Response):
                if found.status_code == 400:
                    return self.grant_error("invalid_grant", "Token has been expired or revoked.")
                return found
            old, grant = found
            access, at = self.issue_access(grant, s["access_ttl_s"])
            refresh = self.rotate(old, grant, s["refresh_ttl_s"]) if s["rotate"] else None
            return self._answer(grant, access, at, refresh)
        return self.grant_error("unsupported_grant_type", "Invalid grant_type: " + str(p.get("grant_type")))

    def revoke(self, request: Request) -> httpx.Response:
        token = request.params.get("token", "")
        if not revoke_token(token, self.platform):
            return self.grant_error("invalid_token", "Token expired or revoked")
        return json_response(200, {})


PROVIDERS: dict[str, type[OAuthProvider]] = {
    "tiktok": TikTokOAuth,
    "facebook": GraphOAuth,
    "instagram": GraphOAuth,
    "linkedin": LinkedInOAuth,
    "youtube": GoogleOAuth,
}


def install(emulator: Emulator) -> OAuthProvider:
    """Add the network's OAuth endpoints and the sandbox's control endpoints (`/_sandbox/oauth`, `/_sandbox/errors`)
    to its emulator."""
    provider = PROVIDERS[emulator.platform](emulator)
    provider.install()  # type: ignore[attr-defined]
    emulator.route(
        "GET", r"/_sandbox/oauth", lambda request: json_response(200, oauth_settings(emulator.platform))
    )
    emulator.route("POST", r"/_sandbox/oauth", lambda request: _control(emulator.platform, request))
    emulator.route(
        "GET",
        r"/_sandbox/grants",
        lambda request: json_response(200, {"grants": [_grant_view(g) for g in grants(emulator.platform)]}),
    )
    emulator.route(
        "POST",
        r"/_sandbox/grants/(?P<grant_id>[^/]+)/revoke",
        lambda request, grant_id: _revoke_control(emulator.platform, grant_id),
    )
    from backend.networks.sandbox import errors  # the error switches (a switch per NETWORKS.md code)

    for method in ("GET", "POST"):
        emulator.route(
            method,
            r"/_sandbox/errors",
            lambda request: errors.control(emulator.platform, request.method, request.json),
        )
    return provider


def _grant_view(g: SandboxGrant) -> dict[str, Any]:
    """A consent as the user sees it in the network's "connected apps" settings."""
    return {
        "id": g.id,
        "clientId": g.client_id,
        "subject": g.subject,
        "scopes": list(g.scopes or []),
        "accounts": [
            a.name
            for a in SandboxAccount.select(SandboxAccount.name).where(
                SandboxAccount.id.in_(list(g.account_ids or []))
            )
        ],
        "state": g.state,
        "createdAt": g.created_at.isoformat(),
    }


def _revoke_control(platform: str, grant_id: str) -> httpx.Response:
    """POST /_sandbox/grants/{id}/revoke: the user removes the app in the network's settings (not a real
    endpoint): every token of that consent is then refused."""
    g = SandboxGrant.get_or_none((SandboxGrant.id == grant_id) & (SandboxGrant.platform == platform))
    if g is None:
        return json_response(
            404, {"error": "not_found", "error_description": f"no {platform} grant {grant_id}"}
        )
    revoke_grant(grant_id)
    return json_response(200, _grant_view(SandboxGrant.get_by_id(grant_id)))


def _control(platform: str, request: Request) -> httpx.Response:
    """POST /_sandbox/oauth {switch: value, …}: set switches of a served emulator (not a real endpoint)."""
    body = request.json if isinstance(request.json, dict) else {}
    try:
        return json_response(200, configure_oauth(platform, **body))
    except (TypeError, ValueError) as exc:
        return json_response(400, {"error": "invalid_request", "error_description": str(exc)})
