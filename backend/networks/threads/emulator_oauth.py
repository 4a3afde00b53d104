"""Threads' OAuth side in its emulator (fidelity table: docs.md), built on the Graph emulator's (Facebook's
package): the Authorization Window `GET /oauth/authorize` (threads.com), the code exchange `POST
/oauth/access_token` (graph.threads.net; `{"access_token", "user_id"}`, 1 h), `GET /access_token`
(`th_exchange_token`: 60 days), `GET /refresh_access_token` (`th_refresh_token`: a long-lived token at least 24 h old,
not expired, -> 60 days from now), `GET /me`. The user is the account (no pages).

A new Threads app (the default emulated app): its permissions threads_basic and threads_content_publish are
"Ready for testing" — only Threads testers who accepted the invite can authorize (`sandbox_role=none` plays a person
who is not one: Meta's JSON refusal 1349245, no redirect) until App Review (`audited`); a redirect URI must be HTTPS
(a belief from Meta's own sample app's issue tracker: http ones cannot be registered — refused 1349168, no
redirect)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from backend.networks.facebook.emulator_oauth import GraphOAuth
from backend.networks.sandbox.core import Request, b62, json_response, now, token_hash, write
from backend.networks.sandbox.oauth import DAY, alive, find_credential, grant_of, redirect
from backend.networks.sandbox.store import SandboxAccount, SandboxToken

# what a new Threads app holds (EmulatedApp.products, empty = this set): the Threads use case's permissions
NEW_APP_PERMISSIONS = frozenset({"threads_basic", "threads_content_publish"})
NOT_A_TESTER = {
    "error_message": "Invalid Request: The  user has not accepted the invite to test the app",
    "error_code": 1349245,
}
URL_BLOCKED = {
    "error_message": "URL Blocked: This redirect failed because the redirect URI is not whitelisted in the app’s "
    "Client OAuth Settings. Make sure Client and Web OAuth Login are on and add all your app domains as Valid "
    "OAuth Redirect URIs.",
    "error_code": 1349168,
}


class ThreadsOAuth(GraphOAuth):
    DEFAULTS: dict[str, Any] = {"access_ttl_s": 3600, "long_ttl_s": 60 * DAY}

    def install(self) -> None:
        self.emu.route("GET", r"/oauth/authorize", self.authorize)
        self.emu.route("POST", r"/oauth/access_token", self.token)
        self.emu.route("GET", r"/access_token", self.exchange)
        self.emu.route("GET", r"/refresh_access_token", self.th_refresh)
        self.emu.route("GET", r"/me", self.me)
        self.emu.route("GET", r"/debug_token", self.debug_token)

    def new_access(self) -> str:
        return "THAA" + b62(150)

    def make_user(self, name: str, n: int) -> tuple[str, list[str]]:
        """A Threads user is their one profile: the sandbox account."""
        subject, accounts = super(GraphOAuth, self).make_user(name, 1)
        return subject, accounts

    def held(self) -> frozenset[str]:
        app = self.emu.config.app(self.emu.platform)
        return app.products or NEW_APP_PERMISSIONS

    def authorize(self, request: Request) -> httpx.Response:
        app = self.emu.config.app(self.emu.platform)
        if request.query.get("sandbox_role") == "none" and not app.audited:
            return json_response(400, NOT_A_TESTER)
        uri = request.query.get("redirect_uri") or ""
        if uri and not uri.startswith("https://"):
            return json_response(400, URL_BLOCKED)
        asked = [s for s in request.query.get("scope", "").replace(",", " ").split() if s]
        if "threads_basic" not in asked:
            return json_response(400, {"error_message": "threads_basic is required", "error_code": 1349187})
        held = self.held()
        request.query["scope"] = ",".join(s for s in asked if s in held)
        return super(GraphOAuth, self).authorize(request)

    def granted(self, redirect_uri: str, code: str, state: str | None, scopes: list[str]) -> httpx.Response:
        return redirect(redirect_uri, {"code": code, "state": state}, "#_")

    def token(self, request: Request) -> httpx.Response:
        """The code exchange: `{"access_token", "user_id"}`, a 1-hour token."""
        if request.params.get("grant_type") != "authorization_code":
            return self.error(400, 100, "grant_type must be authorization_code")
        grant = self.redeem(request.params)
        if isinstance(grant, httpx.Response):
            return grant
        token, _at = self.issue_access(grant, self.settings()["access_ttl_s"], "user")
        return json_response(200, {"access_token": token, "user_id": grant.subject})

    def _long(self, grant: Any) -> httpx.Response:
        token, at = self.issue_access(grant, self.settings()["long_ttl_s"], "user")
        with write():
            SandboxToken.update(data={"long_lived": True}).where(
                SandboxToken.id == token_hash(token)
            ).execute()
        return self._answer(token, at)

    def exchange(self, request: Request) -> httpx.Response:
        """th_exchange_token: a valid short-lived token and the app's secret -> a 60-day token."""
        p = request.params
        if p.get("grant_type") != "th_exchange_token":
            return self.error(400, 100, "grant_type must be th_exchange_token")
        failure = self.switched_failure()
        if failure:
            return failure
        if not p.get("client_secret"):
            return self.grant_error("invalid_client", "")
        row = find_credential(p.get("access_token"), self.platform, "user")
        grant = grant_of(row) if row is not None else None
        if row is None or grant is None:
            return self.api_error("invalid")
        problem = alive(row, grant)
        if problem:
            return self.api_error(problem)
        return self._long(grant)

    def th_refresh(self, request: Request) -> httpx.Response:
        """th_refresh_token: a long-lived token at least 24 h old and not expired -> a new one for 60 days."""
        if request.params.get("grant_type") != "th_refresh_token":
            return self.error(400, 100, "grant_type must be th_refresh_token")
        failure = self.switched_failure()
        if failure:
            return failure
        row = find_credential(request.params.get("access_token"), self.platform, "user")
        grant = grant_of(row) if row is not None else None
        if row is None or grant is None:
            return self.api_error("invalid")
        problem = alive(row, grant)
        if problem:
            return self.api_error(problem)
        if not (row.data or {}).get("long_lived") or now() - row.created_at < timedelta(days=1):
            # the words and code are a belief (no page gives them): not 190, the grant itself is fine
            return self.error(
                400, 100, "The access token must be long-lived and at least 24 hours old to be refreshed."
            )
        return self._long(grant)

    def me(self, request: Request) -> httpx.Response:
        found = self._user(request)
        if isinstance(found, httpx.Response):
            return found
        acc = SandboxAccount.get_or_none(SandboxAccount.id == (found[1].account_ids or [""])[0])
        if acc is None:
            return self.api_error("invalid")
        return json_response(200, {"id": acc.external_id, "username": acc.username, "name": acc.name})

    def debug_token(self, request: Request) -> httpx.Response:
        """`GET /debug_token?input_token=…&access_token=…` (TH-R18): the caller's token a valid user token of this
        app (a Threads tester's: the only people a new app's grant reaches), the inspected one of the same app ->
        `{"data": {type, application, expires_at, is_valid, issued_at, scopes, user_id}}`; an inspected token that
        is not valid: `is_valid: false` with its error (Graph's shape; a belief for Threads)."""
        found = self._user(request)
        if isinstance(found, httpx.Response):
            return found
        _caller, caller_grant = found
        row = find_credential(request.params.get("input_token"), self.platform, "user")
        grant = grant_of(row) if row is not None else None
        if row is None or grant is None or grant.client_id != caller_grant.client_id:
            return json_response(
                200,
                {
                    "data": {
                        "is_valid": False,
                        "scopes": [],
                        "error": {"code": 190, "message": "Invalid OAuth access token"},
                    }
                },
            )
        problem = alive(row, grant)
        data: dict[str, Any] = {
            "type": "USER",
            "application": "socialpub sandbox app",
            "is_valid": problem is None,
            "issued_at": int(row.created_at.timestamp()),
            "scopes": list(grant.scopes) if problem is None else [],
            "user_id": grant.subject,
        }
        if row.expires_at is not None:
            data["expires_at"] = int(row.expires_at.timestamp())
        return json_response(200, {"data": data})
