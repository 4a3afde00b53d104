"""The emulators' OAuth side (issue 17 item 6): authorize with a scripted consent, token exchange with PKCE,
refresh (rotating where the network rotates), revoke, expiring tokens, and switches for a dead grant or a
transient failure of the token endpoint. docs/sandbox.md lists every endpoint and switch.

This module holds the provider (`OAuthProvider`: the endpoints a network's emulator_oauth.py subclasses) and
`install`, which routes them and the control endpoints into an emulator. Beside it, in this package: the
switches and lifetimes (oauth_switches.py), the credential store (credentials.py), who a token speaks for and
revoking (token_auth.py), PKCE and the redirect (oauth_wire.py), the control endpoints (oauth_control.py).

What is kept (store.py): a grant per consent (the user and the sandbox accounts it reaches), every credential
issued by its SHA-256 only (codes, access, refresh and page tokens), and the switches in `emulator_setting`, so
a standalone emulator (`socialpub sandbox serve`) and the tests driving it share them through the database.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

import httpx

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
from backend.networks.sandbox.credentials import alive, find_credential, grant_of, store_credential
from backend.networks.sandbox.oauth_control import route_controls
from backend.networks.sandbox.oauth_switches import expiry, oauth_settings
from backend.networks.sandbox.oauth_wire import pkce_ok, redirect
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxSetting, SandboxToken


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
    route_controls(emulator)
    return provider
