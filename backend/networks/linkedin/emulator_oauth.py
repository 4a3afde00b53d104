"""LinkedIn's OAuth side in its emulator: www.linkedin.com/oauth/v2/{authorization,accessToken,revoke} (refresh
only with the `refresh_enabled` switch), /v2/userinfo (OpenID), the organisations a member administers
(organizationAcls, organizations); and LinkedIn's error body, which its API answers share (emulator.py).

The emulated developer app (SandboxConfig.app("linkedin"), a new app by default) decides what LinkedIn grants
(issue 29; the fidelity table of docs.md): its products give its scopes (PRODUCTS; a new app holds the
self-serve "openid" and "share" only); a consent asking a scope the products do not give is refused with
`error=unauthorized_scope_error`; a web app (every app but a "native" one LinkedIn enabled PKCE for) that sends
PKCE at the code exchange is refused 401 `invalid_client`; the API versions served are those active on the
app's day (lifecycle.py), others 426 `NONEXISTENT_VERSION`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import httpx

from backend.networks.linkedin.lifecycle import LIFECYCLE, base_version, expanded
from backend.networks.sandbox.core import (
    Emulator,
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
    Auth,
    OAuthProvider,
    authenticate,
    find_credential,
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

# the products an app may hold (SOCIALPUB_SANDBOX_APPS {"linkedin": {"products": [...]}}, `sandbox serve linkedin
# --product P`) and the scopes each grants
PRODUCTS: dict[str, frozenset[str]] = {
    # "Sign In with LinkedIn using OpenID Connect" (self-serve)
    "openid": frozenset({"openid", "profile", "email"}),
    # "Share on LinkedIn" (self-serve)
    "share": frozenset({"w_member_social"}),
    # the Community Management API (access request; registered legal organisations, commercial use only)
    "community": frozenset(
        {
            "w_organization_social",
            "r_organization_social",
            "r_organization_admin",
            "rw_organization_admin",
            "w_member_social",
        }
    ),
    # r_member_social: "restricted and … available to approved users only" (an approved partner app)
    "partner": frozenset({"r_member_social"}),
}
NEW_APP_PRODUCTS = frozenset({"openid", "share"})


def app_products(emu: Emulator) -> frozenset[str]:
    """The products of the emulated app (a new app's when none are configured); ValueError for a name LinkedIn
    has no product of."""
    products = emu.config.app(emu.platform).products or NEW_APP_PRODUCTS
    unknown = products - set(PRODUCTS)
    if unknown:
        raise ValueError(
            f"unknown LinkedIn product(s) {', '.join(sorted(unknown))}: one of {', '.join(sorted(PRODUCTS))}"
        )
    return products


def app_scopes(emu: Emulator) -> frozenset[str]:
    """Every scope the emulated app's products grant."""
    return frozenset().union(*(PRODUCTS[p] for p in app_products(emu)))


def token_scopes(emu: Emulator, auth: Auth) -> frozenset[str]:
    """The scopes a call's token holds: its consent's, or (a sandbox account's own token) all the app holds."""
    if auth.grant is not None:
        return frozenset(auth.grant.scopes or [])
    return app_scopes(emu)


def registered_redirect(emu: Emulator) -> str | None:
    """The redirect URL registered on the emulated app (SOCIALPUB_LINKEDIN_REDIRECT_PORT: the CLI's loopback
    listener on that port); "" when none is and the emulator stands for the user's new app (`socialpub sandbox
    serve`: option `registered_redirects_only`), which has no authorised redirect URL, so every one is refused; None:
    any http(s) URL is taken (the in-process sandbox, which stands for no app of the user's)."""
    port = emu.option("redirect_port", None)
    if port:
        return f"http://127.0.0.1:{int(port)}/callback"
    return "" if emu.option("registered_redirects_only", False) else None


def app_today(emu: Emulator) -> date:
    """The day the emulated app's API versions are judged on: the app's `today`, else the sandbox clock's."""
    return emu.config.app(emu.platform).today or emu.now().date()


def version_refusal(emu: Emulator, request: Request) -> httpx.Response | None:
    """A `/rest` call's `LinkedIn-Version` (YYYYMM or YYYYMM.RR): missing → 400 VERSION_MISSING; a version not
    active on the app's day (sunset, not yet released, never released) → 426 NONEXISTENT_VERSION, the version
    named YYYYMM01 as LinkedIn does. None: served."""
    version = request.header("linkedin-version")
    if not version:
        return li_error(
            400,
            "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
            None,
            "VERSION_MISSING",
        )
    if re.fullmatch(r"\d{6}(\.\d{2})?", version) is None:
        return li_error(426, f"Requested version {version} is not active", None, "NONEXISTENT_VERSION")
    if base_version(version) not in LIFECYCLE.active_on(app_today(emu)):
        return li_error(
            426, f"Requested version {expanded(version)} is not active", None, "NONEXISTENT_VERSION"
        )
    return None


def denied_access(resource: str, version: str) -> httpx.Response:
    """LinkedIn's 403 for a call the token's scopes (the app's products) do not allow."""
    return li_error(
        403, f"Not enough permissions to access: {resource}.{expanded(version)}", 100, "ACCESS_DENIED"
    )


# The roles of an emulated member's organisations, in turn (its i-th organisation holds ORG_ROLES[(i-1) % 4]): the
# three that may post as the organisation (L-POSTS: "ADMINISTRATOR, DIRECT_SPONSORED_CONTENT_POSTER, CONTENT_ADMIN";
# L-ACL spells the last CONTENT_ADMINISTRATOR), then one that may not
ORG_ROLES = ("ADMINISTRATOR", "CONTENT_ADMINISTRATOR", "DIRECT_SPONSORED_CONTENT_POSTER", "ANALYST")


def org_role(acc: SandboxAccount) -> str:
    """The member's role on an emulated organisation (named "<member> Org <i>" by make_user)."""
    tail = acc.name.rsplit(" ", 1)[-1]
    return ORG_ROLES[(int(tail) - 1) % len(ORG_ROLES)] if tail.isdigit() else ORG_ROLES[0]


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

    def authorize(self, request: Request) -> httpx.Response:
        """Consent: a scope the app's products do not grant refuses the whole consent (LinkedIn lets the
        member consent to all the scopes asked or none), by redirect `error=unauthorized_scope_error` naming
        the first such scope."""
        p = request.query
        redirect_uri = str(p.get("redirect_uri") or "")
        registered = registered_redirect(self.emu)
        if registered is not None and redirect_uri != registered:
            # LinkedIn's error page, no redirect (belief: docs.md): not the app's registered URL, or none registered
            return httpx.Response(
                400,
                headers={"Content-Type": "text/html; charset=utf-8"},
                text="<html><body><h1>Bummer, something went wrong.</h1><p>The redirect_uri does not match "
                "the registered value</p></body></html>",
            )
        if p.get("client_id") and redirect_uri.startswith(("http://", "https://")):
            held = app_scopes(self.emu)
            asked = [s for s in str(p.get("scope") or "").replace(",", " ").split() if s]
            missing = [s for s in asked if s not in held]
            if missing:
                return redirect(
                    redirect_uri,
                    {
                        "error": "unauthorized_scope_error",
                        "error_description": f"Scope &quot;{missing[0]}&quot; is not authorized for your "
                        "application",
                        "state": p.get("state"),
                    },
                )
        return super().authorize(request)

    def _pkce_refused(self, params: dict[str, Any]) -> bool:
        """A web app's code exchange carrying PKCE (a verifier, or a code asked with a challenge): LinkedIn
        enables PKCE only for native apps, on request; a web app sending it fails client authentication."""
        if self.emu.config.app(self.platform).kind == "native":
            return False
        if params.get("code_verifier"):
            return True
        row = find_credential(params.get("code"), self.platform, "code")
        return bool(row is not None and (row.data or {}).get("code_challenge"))

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
            if self._pkce_refused(p):
                return self.grant_error("invalid_client", "Client authentication failed", 401)
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
        if "openid" not in token_scopes(self.emu, auth):
            return li_error(
                403, "Not enough permissions to access: userinfo.GET.NO_VERSION", 100, "ACCESS_DENIED"
            )
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
        refused = version_refusal(self.emu, request)
        if refused is not None:
            return refused
        if not token_scopes(self.emu, auth) & ORG_ADMIN_SCOPES:
            return denied_access("organizationAcls.FINDER-roleAssignee", request.header("linkedin-version"))
        member = auth.account.external_id
        role, state = request.params.get("role"), request.params.get("state")
        elements = [
            {
                "organization": a.external_id,
                "role": org_role(a),
                "state": "APPROVED",
                "roleAssignee": member,
            }
            for a in auth.accounts()
            if a.external_id.startswith("urn:li:organization:")
            and (not role or org_role(a) == role)  # the finder's optional filters
            and (not state or state == "APPROVED")
        ]
        return json_response(
            200, {"paging": {"count": len(elements), "start": 0, "links": []}, "elements": elements}
        )

    def _administered(self, request: Request) -> dict[str, SandboxAccount] | httpx.Response:
        """The organisations (by numeric id) the token's member administers and may read: the grant needs
        `r_organization_admin` or `rw_organization_admin` (else 403 ACCESS_DENIED, as LinkedIn refuses an
        organisation lookup without them), and an active `LinkedIn-Version`."""
        auth = authenticate(request.bearer(), self.platform)
        if auth.account is None or auth.problem:
            return api_error_linkedin(auth.problem, li_error)
        refused = version_refusal(self.emu, request)
        if refused is not None:
            return refused
        if not token_scopes(self.emu, auth) & ORG_ADMIN_SCOPES:
            return denied_access("organizations.GET", request.header("linkedin-version"))
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
        return denied_access("organizations.GET", request.header("linkedin-version"))

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


def api_error_linkedin(
    problem: str | None, li_error: Callable[[int, str, int, str], httpx.Response]
) -> httpx.Response:
    """LinkedIn's 401s: revoked 65601 REVOKED_ACCESS_TOKEN (seen live by third parties: docs.md); the expired
    case's serviceErrorCode is belief (the same 65601 family, code EXPIRED_ACCESS_TOKEN)."""
    if problem == "expired":
        return li_error(401, "The token used in the request has expired", 65601, "EXPIRED_ACCESS_TOKEN")
    if problem == "revoked":
        return li_error(
            401, "The token used in the request has been revoked by the user", 65601, "REVOKED_ACCESS_TOKEN"
        )
    return li_error(401, "Invalid access token", 65600, "INVALID_ACCESS_TOKEN")
