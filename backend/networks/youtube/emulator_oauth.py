"""YouTube's OAuth side in its emulator (Google): accounts.google.com/o/oauth2/v2/auth (a refresh token for offline
access), oauth2.googleapis.com/{token,revoke}.

Per emulated app (SandboxConfig.app("youtube")): a new project's consent screen is in Testing, so its refresh
tokens expire 7 days after consent (G-OAUTH, Y16), answered with `refresh_token_expires_in`; the product
`in-production` (the app published) lifts that. A refresh answers no new refresh token (Y18, belief: Google's
sample answers have none); the `rotate` switch re-issues one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx

from backend.networks.sandbox.core import Request, b64url, json_response
from backend.networks.sandbox.credentials import (
    DAY,
    alive,
    find_credential,
    grant_of,
    revoke_token,
    seconds_left,
)
from backend.networks.sandbox.oauth import OAuthProvider, redirect
from backend.networks.sandbox.store import SandboxGrant

TESTING_REFRESH_TTL_S = 7 * DAY  # a Testing app's refresh tokens (External user type, YouTube's scopes)
IN_PRODUCTION = "in-production"  # the emulated app's product name: its consent screen is published


class GoogleOAuth(OAuthProvider):
    # access 1 h; refresh: 7 days for an app in Testing (the default: a new app), else long-lived (None) unless
    # the refresh_ttl_s switch says otherwise; not re-issued on refresh unless `rotate`
    DEFAULTS: dict[str, Any] = {"access_ttl_s": 3600, "refresh_ttl_s": None, "rotate": False}

    def settings(self) -> dict[str, Any]:
        s = super().settings()
        if s.get("refresh_ttl_s") is None and not self.emu.config.app(self.platform).holds(IN_PRODUCTION):
            s = {**s, "refresh_ttl_s": TESTING_REFRESH_TTL_S}
        return s

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
        return redirect(redirect_uri, {"state": state, "code": code, "scope": " ".join(scopes)})

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
            "expires_in": seconds_left(at, 10 * 365 * DAY),
            "scope": " ".join(grant.scopes or []),
            "token_type": "Bearer",
        }
        if refresh:
            body["refresh_token"] = refresh
            if grant.refresh_expires_at is not None:  # testing-mode apps: refresh_token_expires_in
                body["refresh_token_expires_in"] = seconds_left(grant.refresh_expires_at)
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
        """Google's revoke (the token as a form or query parameter, no app credentials): 200 `{}`, the whole grant
        gone; a token it does not know, or no longer (revoked, expired): 400 `invalid_token` "Token expired or
        revoked"."""
        token = request.params.get("token", "")
        known = find_credential(token, self.platform)
        if known is not None and alive(known, grant_of(known)) in ("revoked", "expired"):
            return self.grant_error("invalid_token", "Token expired or revoked")
        if not revoke_token(token, self.platform):
            return self.grant_error("invalid_token", "Token expired or revoked")
        return json_response(200, {})
