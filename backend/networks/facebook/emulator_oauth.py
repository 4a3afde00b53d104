"""The Graph API's OAuth side in the Facebook emulator — Facebook Login, which Instagram's emulator shares (through
the page linked to an Instagram professional account): www.facebook.com/vNN.0/dialog/oauth, oauth/access_token
(and fb_exchange_token), /me, /me/accounts, DELETE /me/permissions, /debug_token, Instagram Login's
refresh_access_token; and the Graph API's error body, which its API answers share (emulator_graph.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx

from backend.networks.sandbox.core import (
    Request,
    account_for_token,
    b62,
    b64url,
    digits,
    json_response,
    now,
    register_account,
    token_hash,
    write,
)
from backend.networks.sandbox.oauth import (
    DAY,
    Auth,
    OAuthProvider,
    alive,
    authenticate,
    find_credential,
    grant_of,
    redirect,
    revoke_grant,
    seconds_left,
    store_credential,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant, SandboxToken


def graph_error(
    status: int,
    code: int,
    message: str,
    *,
    subcode: int | None = None,
    transient: bool | None = None,
    user_title: str | None = None,
    user_msg: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    err: dict[str, Any] = {
        "message": message,
        "type": "OAuthException",
        "code": code,
        "fbtrace_id": "A" + b64url(22),
    }
    if subcode is not None:
        err["error_subcode"] = subcode
    if transient is not None:
        err["is_transient"] = transient
    if user_title:
        err["error_user_title"] = user_title
    if user_msg:
        err["error_user_msg"] = user_msg
    return json_response(status, {"error": err}, headers=headers)


# What a NEW Meta app holds (SandboxConfig.app: EmulatedApp.products are permission names; empty = this set):
# Standard Access to the permissions of the "Manage everything on your Page" and Instagram use cases and
# business_management; not publish_video (the Pages video docs do not list it: strictest reading). Standard Access
# means only people with a role on the app can grant them (Graph API access levels; App Review); `audited` stands
# for Advanced Access after App Review, when anyone can.
NEW_APP_PERMISSIONS = frozenset(
    {
        "pages_show_list",
        "pages_manage_posts",
        "pages_read_engagement",
        "pages_read_user_engagement",
        "pages_manage_engagement",
        "business_management",
        "instagram_basic",
        "instagram_content_publish",
    }
)
URL_BLOCKED = (
    "URL Blocked: This redirect failed because the redirect URI is not whitelisted in the app’s Client OAuth "
    "Settings. Make sure Client and Web OAuth Login are on and add all your app domains as Valid OAuth Redirect URIs."
)
APP_NOT_ACTIVE = (
    "App not active: This app is not accessible right now and the app developer is aware of the issue. "
    "You will be able to log in when the app is reactivated."
)

PAGE_TASKS = ["ADVERTISE", "ANALYZE", "CREATE_CONTENT", "MESSAGING", "MODERATE", "MANAGE"]


class GraphOAuth(OAuthProvider):
    """www.facebook.com/vNN.0/dialog/oauth; graph.facebook.com/vNN.0/oauth/access_token (code, and
    grant_type=fb_exchange_token for a long-lived token); /me, /me/accounts (page tokens); DELETE /me/permissions;
    /debug_token. A network built on Facebook Login (Instagram) subclasses it: `account_made`, `page_entry` and
    `extra_routes` are its hooks."""

    # a short-lived user token (~1-2 h) exchanged (fb_exchange_token) for a ~60 d one; page tokens from a
    # long-lived user token never expire
    DEFAULTS: dict[str, Any] = {"access_ttl_s": 3600, "long_ttl_s": 60 * DAY}
    scope_sep = ","

    def install(self) -> None:
        self.emu.route("GET", r"/dialog/oauth", self.authorize)
        self.emu.route("GET", r"/oauth/access_token", self.token)
        self.emu.route("POST", r"/oauth/access_token", self.token)
        self.emu.route("GET", r"/(?P<user>me|\d+)/accounts", self.accounts)
        self.emu.route("GET", r"/me", self.me)
        self.emu.route("DELETE", r"/(?P<user>me|\d+)/permissions", self.deauthorize)
        self.emu.route("GET", r"/(?P<user>me|\d+)/permissions", self.permissions)
        self.emu.route("GET", r"/debug_token", self.debug_token)
        self.extra_routes()

    def extra_routes(self) -> None:
        """Routes of a network built on Facebook Login (none for Facebook)."""

    def account_made(self, sandbox_account_id: str, label: str) -> None:
        """A new user's account was made (Facebook: the account is the page itself)."""

    def page_entry(self, acc: SandboxAccount, page_token: str) -> dict[str, Any]:
        """One page of /me/accounts: the sandbox account is the page."""
        return {
            "access_token": page_token,
            "category": "Brand",
            "name": acc.name,
            "id": acc.external_id,
            "tasks": PAGE_TASKS,
        }

    def error(
        self, status: int, code: int, message: str, subcode: int | None = None, transient: bool | None = None
    ) -> httpx.Response:
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
        return redirect(redirect_uri, {"code": code, "state": state}, "#_=_")

    def denied(self, redirect_uri: str, state: str | None) -> httpx.Response:
        return redirect(
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
        """A Facebook user managing n pages (the sandbox accounts; `account_made` for what else comes with one)."""
        subject = digits(15, "1")
        accounts: list[str] = []
        for i in range(n):
            label = name if n == 1 else f"{name} {i + 1}"
            ident = register_account(self.platform, label)
            accounts.append(ident.sandbox_account_id)
            self.account_made(ident.sandbox_account_id, label)
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
            row = find_credential(p.get("fb_exchange_token"), self.platform, "user")
            grant = grant_of(row) if row is not None else None
            if row is None or grant is None:
                return self.error(400, 190, "Invalid OAuth access token - Cannot parse access token")
            problem = alive(row, grant)
            if problem:
                return self.api_error(problem)
            token, at = self.issue_access(grant, s["long_ttl_s"], "user")
            with write():
                SandboxToken.update(data={"long_lived": True}).where(
                    SandboxToken.id == token_hash(token)
                ).execute()
            return self._answer(token, at)
        redeemed = self.redeem(p)
        if isinstance(redeemed, httpx.Response):
            return redeemed
        token, at = self.issue_access(redeemed, s["access_ttl_s"], "user")
        return self._answer(token, at)

    def _answer(self, token: str, at: datetime | None) -> httpx.Response:
        body: dict[str, Any] = {"access_token": token, "token_type": "bearer"}
        if at is not None:
            body["expires_in"] = seconds_left(at)
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
        row = find_credential(request.token(), self.platform, "user")
        grant = grant_of(row) if row is not None else None
        if row is None or grant is None:
            if authenticate(request.token(), self.platform).account is not None:  # a page or account token
                return self.error(
                    400, 100, "(#100) Tried accessing nonexisting field (accounts) on node type (Page)"
                )
            return self.api_error("invalid")
        problem = alive(row, grant)
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
        long-lived; else expiring with it), as `page_entry` describes it."""
        found = self._user(request, user)
        if isinstance(found, httpx.Response):
            return found
        row, grant = found
        long_lived = bool((row.data or {}).get("long_lived"))
        data = []
        for acc in Auth(None, grant=grant).accounts():
            page_token = store_credential(
                self.platform,
                self.new_access(),
                "page",
                grant_id=grant.id,
                account_id=acc.id,
                expires_at=None if long_lived else row.expires_at,
            )
            data.append(self.page_entry(acc, page_token))
        return json_response(
            200, {"data": data, "paging": {"cursors": {"before": "QVFIUk", "after": "QVFIUk"}}}
        )

    def held(self) -> frozenset[str]:
        app = self.emu.config.app(self.emu.platform)
        return app.products or NEW_APP_PERMISSIONS

    def authorize(self, request: Request) -> httpx.Response:
        """The login dialog as a Meta app sees it: a person without a role on an app without Advanced Access
        (`sandbox_role=none`; by default the person connecting is the app's admin) gets "App not active" and no
        redirect; the grant is the asked permissions the app holds (one it does not hold is left out: Meta shows
        "Invalid Scopes" to the app's developers only). With a registered redirect URI (SOCIALPUB_FACEBOOK_/
        INSTAGRAM_REDIRECT_PORT: the CLI's loopback listener on that port) any other one is "URL Blocked", no
        redirect (Strict Mode); none configured and served, every one is (a new app registers none); the in-process
        sandbox takes any."""
        app = self.emu.config.app(self.emu.platform)
        if request.query.get("sandbox_role") == "none" and not app.audited:
            return httpx.Response(
                200,
                headers={"content-type": "text/html; charset=utf-8"},
                text=f"<html><body><h1>App not active</h1><p>{APP_NOT_ACTIVE}</p></body></html>",
            )
        port = self.emu.option("redirect_port", None)
        # none registered, served (`socialpub sandbox serve`: option `registered_redirects_only`): a new app has no
        # Valid OAuth Redirect URI and Strict Mode refuses every one; the in-process sandbox takes any
        registered = f"http://127.0.0.1:{int(port)}/callback" if port else None
        if registered is None and self.emu.option("registered_redirects_only", False):
            registered = ""
        if registered is not None and request.query.get("redirect_uri") != registered:
            # Strict Mode: the redirect URI must be one of the app's Valid OAuth Redirect URIs, exactly; the dialog
            # shows "URL Blocked" and sends nobody back
            return httpx.Response(
                200,
                headers={"content-type": "text/html; charset=utf-8"},
                text=f"<html><body><h1>URL Blocked</h1><p>{URL_BLOCKED}</p></body></html>",
            )
        asked = [s for s in request.query.get("scope", "").replace(",", " ").split() if s]
        held = self.held()
        request.query["scope"] = ",".join(s for s in asked if s in held)
        return super().authorize(request)

    def permissions(self, request: Request, user: str) -> httpx.Response:
        """GET /me/permissions: the grant, {"data": [{"permission", "status": "granted"}]}."""
        found = self._user(request, user)
        if isinstance(found, httpx.Response):
            return found
        data = [{"permission": p, "status": "granted"} for p in found[1].scopes or []]
        return json_response(200, {"data": data})

    def deauthorize(self, request: Request, user: str) -> httpx.Response:
        found = self._user(request, user)
        if isinstance(found, httpx.Response):
            return found
        revoke_grant(found[1].id)
        return json_response(200, {"success": True})

    def debug_token(self, request: Request) -> httpx.Response:
        token = request.params.get("input_token")
        row = find_credential(token, self.platform, "user", "page", "account")
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
        grant = grant_of(row)
        problem = alive(row, grant)
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
