"""LinkedIn's OAuth side in its emulator: www.linkedin.com/oauth/v2/{authorization,accessToken,revoke} (refresh
only with the `refresh_enabled` switch), /v2/userinfo (OpenID), the organisations a member administers
(organizationAcls, organizations); and LinkedIn's error body, which its API answers share (emulator.py)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import httpx

from backend.networks.sandbox.core import (
    Request,
    b64url,
    digits,
    empty_response,
    json_response,
    register_account,
    write,
)
from backend.networks.sandbox.oauth import (
    DAY,
    OAuthProvider,
    authenticate,
    redirect,
    revoke_token,
    seconds_left,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxGrant


def li_error(
    status: int, message: str, service_code: int | None = None, code: str | None = None
) -> httpx.Response:
    body: dict[str, Any] = {"message": message, "status": status}
    if service_code is not None:
        body["serviceErrorCode"] = service_code
    if code:
        body["code"] = code
    return json_response(status, body)


ORG_ADMIN_SCOPES = {"r_organization_admin", "rw_organization_admin"}


class LinkedInOAuth(OAuthProvider):
    # access 60 d; refresh (365 d from the first consent, never extended) only for approved partners
    DEFAULTS: dict[str, Any] = {
        "access_ttl_s": 60 * DAY,
        "refresh_ttl_s": 365 * DAY,
        "refresh_enabled": False,
    }

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
        return redirect(
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
            "expires_in": seconds_left(at, 10 * 365 * DAY),
            "scope": ",".join(grant.scopes or []),
        }
        if refresh:
            body["refresh_token"] = refresh
            body["refresh_token_expires_in"] = seconds_left(grant.refresh_expires_at, 10 * 365 * DAY)
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
