"""The emulators' OAuth side (issue 17 item 6): authorize with a scripted consent, token exchange with PKCE,
refresh (rotating where the network rotates), revoke, expiring tokens, and switches for a dead grant or a
transient failure of the token endpoint. docs/sandbox.md lists every endpoint and switch.

What is kept (store.py): a grant per consent (the user and the sandbox accounts it reaches), every credential
issued by its SHA-256 only (codes, access, refresh and page tokens), and the switches in `emulator_setting`, so
a standalone emulator (`socialpub sandbox serve`) and the tests driving it share them through the database.

The state behind them — switches, credentials, who a token speaks for, revocation — is credentials.py's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from backend.networks.sandbox import errors  # the error switches (a switch per NETWORKS.md code)
from backend.networks.sandbox.core import (
    Emulator,
    Request,
    b62,
    b64url,
    json_response,
    now,
    register_account,
    write,
)
from backend.networks.sandbox.credentials import (
    alive,
    configure_oauth,
    expiry,
    find_credential,
    grant_of,
    grants,
    oauth_settings,
    revoke_grant,
    store_credential,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxSetting, SandboxToken


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
