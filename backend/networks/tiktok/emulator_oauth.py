"""TikTok's OAuth side in its emulator (Login Kit): www.tiktok.com/v2/auth/authorize/ (the desktop PKCE variant
too), open.tiktokapis.com/v2/oauth/{token,revoke}/ (refresh tokens rotated), /v2/user/info/; and TikTok's
envelope `{data, error{code,message,log_id}}`, which its API answers share (emulator.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from backend.networks.sandbox.core import Request, b62, b64url, digits, json_response
from backend.networks.sandbox.developer_app import EmulatedApp
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

# The products an emulated TikTok app may hold (`SOCIALPUB_SANDBOX_APPS`' "products", `sandbox serve tiktok
# --product P`) and the scopes each lets the app ask (docs.md, "The emulated app"). A new app: Login Kit and the
# Content Posting API with Direct Post — not the profile or stats scopes, not the Display API's video.list.
PRODUCTS: dict[str, tuple[str, ...]] = {
    "login_kit": ("user.info.basic",),
    "content_posting": ("video.publish", "video.upload"),
    "user_profile": ("user.info.profile",),
    "user_stats": ("user.info.stats",),
    "display": ("video.list",),
}
NEW_APP_PRODUCTS: tuple[str, ...] = ("login_kit", "content_posting")
APP_KINDS = ("desktop", "web")
# /v2/user/info/'s fields and the scope each needs (developers.tiktok.com/doc/tiktok-api-v2-get-user-info)
FIELD_SCOPES: dict[str, str] = {
    "open_id": "user.info.basic",
    "union_id": "user.info.basic",
    "avatar_url": "user.info.basic",
    "avatar_url_100": "user.info.basic",
    "avatar_large_url": "user.info.basic",
    "display_name": "user.info.basic",
    "username": "user.info.profile",
    "bio_description": "user.info.profile",
    "profile_deep_link": "user.info.profile",
    "is_verified": "user.info.profile",
    "follower_count": "user.info.stats",
    "following_count": "user.info.stats",
    "likes_count": "user.info.stats",
    "video_count": "user.info.stats",
}
LOOPBACK_HOSTS = ("localhost", "127.0.0.1")


def app_products(app: EmulatedApp) -> frozenset[str]:
    unknown = set(app.products) - set(PRODUCTS)
    if unknown:
        raise ValueError(
            f"unknown TikTok product(s) {', '.join(sorted(unknown))}: one of {', '.join(PRODUCTS)}"
        )
    return frozenset(app.products or NEW_APP_PRODUCTS) | {"login_kit"}


def app_scopes(app: EmulatedApp) -> frozenset[str]:
    """The scopes the emulated app may ask (user.info.basic always: Login Kit adds it to every app)."""
    return frozenset(s for p in app_products(app) for s in PRODUCTS[p])


def app_kind(app: EmulatedApp) -> str:
    kind = app.kind or "desktop"
    if kind not in APP_KINDS:
        raise ValueError(f"unknown TikTok app kind {kind!r}: desktop or web")
    return kind


def redirect_allowed(kind: str, uri: str) -> bool:
    """Login Kit's redirect URI rules: desktop — http(s) on localhost or 127.0.0.1 with a port, static (no query,
    no fragment); web — https, static, not a loopback host (login-kit-desktop, login-kit-web)."""
    parts = urlsplit(uri)
    if parts.query or parts.fragment or "#" in uri:
        return False
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        return False
    if kind == "desktop":
        return parts.scheme in ("http", "https") and host in LOOPBACK_HOSTS and port is not None
    return parts.scheme == "https" and bool(host) and host not in LOOPBACK_HOSTS and host != "[::1]"


def error_page(param: str) -> httpx.Response:
    """TikTok's authorize-time refusal: a page on www.tiktok.com (HTTP 200), never a redirect to the app."""
    return httpx.Response(
        200,
        headers={"Content-Type": "text/html; charset=utf-8"},
        text=(
            "<!doctype html><html><body><h1>Something went wrong</h1><p>We couldn't log in with TikTok. This may "
            "be due to specific app settings.</p><p>If you're a developer, correct the following and try again: "
            f"<code>{param}</code></p></body></html>"
        ),
    )


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
    # oauth-user-access-token-management (2026-11-05): access 2 h, refresh 180 days; rotated on each refresh
    DEFAULTS: dict[str, Any] = {"access_ttl_s": 2 * 3600, "refresh_ttl_s": 180 * DAY, "rotate": True}
    client_param = "client_key"
    scope_sep = ","
    pkce_encoding = "hex"

    def app(self) -> EmulatedApp:
        return self.emu.config.app(self.platform)

    def authorize(self, request: Request) -> httpx.Response:
        """Login Kit's checks before the consent screen, each refused with TikTok's error page naming the
        parameter: the redirect URI for the app's kind, the PKCE challenge (S256 only; required), the scopes
        the app holds. Then the scripted consent (OAuthProvider.authorize)."""
        p = request.query
        app = self.app()
        if not p.get(self.client_param):
            return error_page("client_key")
        if not redirect_allowed(app_kind(app), p.get("redirect_uri") or ""):
            return error_page("redirect_uri")
        if not p.get("code_challenge") or p.get("code_challenge_method") != "S256":
            return error_page("code_challenge")
        asked = [s for s in p.get("scope", "").split(",") if s]
        if not asked or set(asked) - app_scopes(app):
            return error_page("scope")
        return super().authorize(request)

    def pkce_error(self) -> httpx.Response:
        # the words real clients report for a base64url challenge (docs.md, rule pkce-hex)
        return self.grant_error("invalid_request", "Code verifier or code challenge is invalid.")

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
                refresh_at = find_credential(refresh, self.platform).expires_at  # type: ignore[union-attr]  # the credential was stored by rotate() just above: it exists
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
        fields = [f for f in request.query.get("fields", "").split(",") if f]
        if not fields:
            return err(400, "invalid_params", "fields is required.")
        unknown = [f for f in fields if f not in FIELD_SCOPES]
        if unknown:
            return err(400, "invalid_params", f"Unknown field(s): {', '.join(unknown)}.")
        held = set(auth.grant.scopes or []) if auth.grant is not None else set(FIELD_SCOPES.values())
        if any(FIELD_SCOPES[f] not in held for f in fields):
            return err(
                400, "scope_permission_missed", "Access token is invalid, some fields need additional scopes."
            )
        user = {
            "open_id": acc.external_id,
            "union_id": "u" + acc.external_id[4:],
            "display_name": acc.display_name,
            "username": acc.username,
            "avatar_url": f"https://p16-sign.tiktokcdn.sandbox.invalid/{acc.username}.jpeg",
        }
        return envelope(200, {"user": {k: v for k, v in user.items() if k in fields}})


def api_auth_message(problem: str | None) -> str:
    if problem == "expired":
        return "The access token has expired."
    if problem == "revoked":
        return "The access token has been revoked: the user removed the app's access."
    return "The access token is invalid or not found in the request."
