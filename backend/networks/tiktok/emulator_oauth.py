"""TikTok's OAuth side in its emulator (Login Kit): www.tiktok.com/v2/auth/authorize/ (the desktop PKCE variant
too), open.tiktokapis.com/v2/oauth/{token,revoke}/ (refresh tokens rotated), /v2/user/info/; and TikTok's
envelope `{data, error{code,message,log_id}}`, which its API answers share (emulator.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx

from backend.networks.sandbox.core import Request, b62, b64url, digits, json_response
from backend.networks.sandbox.oauth import (
    DAY,
    OAuthProvider,
    authenticate,
    expiry,
    find_credential,
    redirect,
    revoke_token,
    seconds_left,
)
from backend.networks.sandbox.store import SandboxGrant


def envelope(
    status: int, data: dict[str, Any] | None = None, code: str = "ok", message: str = ""
) -> httpx.Response:
    log_id = "2025" + digits(28, "0")
    return json_response(
        status, {"data": data or {}, "error": {"code": code, "message": message, "log_id": log_id}}
    )


def err(status: int, code: str, message: str) -> httpx.Response:
    return envelope(status, {}, code, message)


class TikTokOAuth(OAuthProvider):
    # ANCHORS: access 24 h (older pages 2 h), refresh 365 d, rotated on each refresh
    DEFAULTS: dict[str, Any] = {"access_ttl_s": DAY, "refresh_ttl_s": 365 * DAY, "rotate": True}
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
        return redirect(redirect_uri, {"code": code, "scopes": ",".join(scopes), "state": state})

    def denied(self, redirect_uri: str, state: str | None) -> httpx.Response:
        return redirect(
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
                "expires_in": seconds_left(at, 10 * 365 * DAY),
                "open_id": grant.subject,
                "refresh_expires_in": seconds_left(refresh_at, 10 * 365 * DAY),
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
            refresh_at = expiry(s["refresh_ttl_s"])
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
                refresh_at = find_credential(refresh, self.platform).expires_at  # type: ignore[union-attr]
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
