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
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from backend.networks.sandbox import errors  # the error switches (a switch per NETWORKS.md code)
from backend.networks.sandbox.core import (
    _ACCOUNTS,
    Emulator,
    Request,
    account_for_token,
    b62,
    b64url,
    emulator_type,
    json_response,
    now,
    register_account,
    token_hash,
    write,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxSetting, SandboxToken

DAY = 86400
# Each network's own switches and their defaults (its lifetimes, in seconds, None: never expires; the behaviours
# of its token endpoint) are its provider's DEFAULTS (its package's emulator_oauth.py); these every network has.
COMMON: dict[str, Any] = {
    "code_ttl_s": 600,  # an authorization code is good for 10 minutes, once
    "consent": "grant",  # grant | deny: what the scripted user answers at the authorize endpoint
    "token_failure": None,  # None | "invalid_grant" (dead grant) | "server_error" (a 5xx, transient)
    "pages": 1,  # the pages (organisations…) a new user manages, where the network has them
}
TOKEN_FAILURES = (None, "invalid_grant", "server_error")


# --- switches ----------------------------------------------------------------------------------------------
def defaults(platform: str) -> dict[str, Any]:
    """The network's own switches with their defaults (ValueError for a network without an OAuth side)."""
    provider = emulator_type(platform).OAUTH
    if provider is None:
        raise ValueError(f"{platform}'s emulator has no OAuth side")
    found: dict[str, Any] = provider.DEFAULTS
    return found


def oauth_settings(platform: str) -> dict[str, Any]:
    """The OAuth switches of a network: defaults, overridden by what configure_oauth stored."""
    own = defaults(platform)
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"oauth:{platform}")
    return {**COMMON, **own, **(row.value if row else {})}


def configure_oauth(platform: str, **changes: Any) -> dict[str, Any]:
    """Set OAuth switches of a network (kept in the sandbox database: a served emulator sees them at once).
    A value of None for a lifetime means "never expires"; reset=True first returns every switch to its default.
    Returns the switches now in force."""
    own = defaults(platform)
    reset = bool(changes.pop("reset", False))
    allowed = set(COMMON) | set(own)
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


def expiry(ttl: float | None) -> datetime | None:
    return None if ttl is None else now() + timedelta(seconds=float(ttl))


def seconds_left(at: datetime | None, default: int = 0) -> int:
    return default if at is None else max(0, int((at - now()).total_seconds()))


# --- credentials ---------------------------------------------------------------------------------------------
def store_credential(
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


def find_credential(token: str | None, platform: str, *kinds: str) -> SandboxToken | None:
    if not token:
        return None
    row = SandboxToken.get_or_none(SandboxToken.id == token_hash(token))
    if row is None or row.platform != platform or (kinds and row.kind not in kinds):
        return None
    return row


def grant_of(row: SandboxToken) -> SandboxGrant | None:
    return SandboxGrant.get_or_none(SandboxGrant.id == row.grant_id) if row.grant_id else None


def alive(row: SandboxToken, grant: SandboxGrant | None) -> str | None:
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
    row = find_credential(token, platform, "access", "user", "page", "account")
    if row is None:
        return Auth(None, "invalid")
    grant = grant_of(row)
    problem = alive(row, grant)
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
    row = find_credential(token, platform)
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
def pkce_ok(challenge: str, method: str, verifier: str | None, *, encoding: str = "base64url") -> bool:
    """RFC 7636: S256 (BASE64URL(SHA256(verifier)) without padding) or plain. encoding="hex": the network takes
    S256 only, written as the SHA-256 in hex (TikTok's Login Kit), and nothing else."""
    if not verifier:
        return False
    if encoding == "hex":
        digest = hashlib.sha256(verifier.encode("ascii", "replace")).hexdigest()
        return (method or "").upper() == "S256" and hmac.compare_digest(challenge.lower(), digest)
    if (method or "plain").upper() == "PLAIN":
        return hmac.compare_digest(challenge, verifier)
    digest_b = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return hmac.compare_digest(challenge, base64.urlsafe_b64encode(digest_b).decode().rstrip("="))


def redirect(uri: str, params: dict[str, Any], fragment: str = "") -> httpx.Response:
    sep = "&" if urlsplit(uri).query else "?"
    return httpx.Response(
        302,
        headers={
            "Location": uri + sep + urlencode({k: v for k, v in params.items() if v is not None}) + fragment
        },
    )


# --- the providers -------------------------------------------------------------------------------------------
class OAuthProvider:
    """A network's OAuth endpoints, installed into its emulator (its class's OAUTH). Subclasses give the paths
    (`install`), parameter names, token formats, error bodies and switch defaults (DEFAULTS) of their network."""

    DEFAULTS: dict[str, Any] = {}
    client_param = "client_id"
    scope_sep = " "
    pkce_encoding = "base64url"  # TikTok: "hex" (its S256 challenge written in hex, nothing else accepted)

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
        return redirect(
            redirect_uri,
            {"error": "access_denied", "error_description": "The user denied the request.", "state": state},
        )

    def granted(self, redirect_uri: str, code: str, state: str | None, scopes: list[str]) -> httpx.Response:
        return redirect(redirect_uri, {"code": code, "state": state})

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
            return redirect(redirect_uri, {"error": "unsupported_response_type", "state": p.get("state")})
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
        store_credential(
            self.platform,
            code,
            "code",
            expires_at=expiry(settings["code_ttl_s"]),
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

    def install(self) -> None:
        """Route the network's OAuth endpoints to this provider's methods (each network's own paths)."""
        raise NotImplementedError

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
        row = find_credential(params.get("code"), self.platform, "code")
        if row is None:
            return self.grant_error("invalid_grant", "The authorization code is invalid.")
        problem = alive(row, None)
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
            encoding=self.pkce_encoding,
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
                refresh_expires_at=expiry(settings.get("refresh_ttl_s")),
            )
        grant.access_type = data.get("access_type")  # type: ignore[attr-defined]  # not a column: Google's access_type of the authorize step, read once (getattr) by the YouTube emulator's token answer
        return grant

    def pkce_error(self) -> httpx.Response:
        return self.grant_error("invalid_grant", "The code_verifier does not match the code_challenge.")

    def refreshable(self, token: str | None) -> tuple[SandboxToken, SandboxGrant] | httpx.Response:
        failure = self.switched_failure()
        if failure:
            return failure
        row = find_credential(token, self.platform, "refresh")
        grant = grant_of(row) if row is not None else None
        if row is None or grant is None:
            return self.grant_error("invalid_grant", "The refresh token is invalid.")
        problem = alive(row, grant)
        if problem:
            return self.grant_error("invalid_grant", f"The refresh token is {problem}.")
        return row, grant

    def issue_access(
        self, grant: SandboxGrant, ttl: float | None, kind: str = "access"
    ) -> tuple[str, datetime | None]:
        at = expiry(ttl)
        return store_credential(self.platform, self.new_access(), kind, grant_id=grant.id, expires_at=at), at

    def issue_refresh(self, grant: SandboxGrant, expires_at: datetime | None) -> str:
        return store_credential(
            self.platform, self.new_refresh(), "refresh", grant_id=grant.id, expires_at=expires_at
        )

    def rotate(self, old: SandboxToken, grant: SandboxGrant, ttl: float | None) -> str:
        with write():
            SandboxToken.update(state="rotated").where(SandboxToken.id == old.id).execute()
            return self.issue_refresh(grant, expiry(ttl))


def install(emulator: Emulator) -> OAuthProvider:
    """Add the network's OAuth endpoints and the sandbox's control endpoints (`/_sandbox/oauth`, `/_sandbox/errors`)
    to its emulator."""
    provider_class = type(emulator).OAUTH
    if provider_class is None:
        raise TypeError(f"{type(emulator).__name__} has no OAuth side (OAUTH) to install")
    provider: OAuthProvider = provider_class(emulator)
    provider.install()
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
