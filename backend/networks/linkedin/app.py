"""LinkedIn's OAuth app: www.linkedin.com/oauth/v2/authorization and …/accessToken (refresh only for apps given
refresh tokens); the grant reaches the member (OpenID userinfo) and, when organisation posting is configured
(SOCIALPUB_LINKEDIN_ORGANIZATIONS), the organisations it administers.

Connect asks `openid profile w_member_social` (the self-serve products a new app holds); organisation posting
adds the Community Management scopes, which LinkedIn grants only to apps approved for that product (others are
refused at consent). No PKCE: LinkedIn's web flow fails client authentication when it is sent (docs.md).
"""

from __future__ import annotations

import httpx

from backend.config import Settings
from backend.networks.http import json_or_none
from backend.networks.linkedin import NETWORK
from backend.networks.linkedin.adapter import classify
from backend.networks.linkedin.settings import MEMBER_SCOPES, LinkedInSettings
from backend.networks.oauth import Candidate, OAuthError, TokenSet, call, json_body, origin
from backend.networks.oauth_apps import network_settings
from backend.networks.oauth_types import Endpoints, OAuthApp

PLATFORM = NETWORK.name
# the organisation roles that may create posts as it (w_organization_social, Posts API page: "ADMINISTRATOR,
# DIRECT_SPONSORED_CONTENT_POSTER, CONTENT_ADMIN"; the access-control page names the role CONTENT_ADMINISTRATOR)
POSTING_ROLES = frozenset(
    {"ADMINISTRATOR", "DIRECT_SPONSORED_CONTENT_POSTER", "CONTENT_ADMIN", "CONTENT_ADMINISTRATOR"}
)
LINKEDIN_HEADERS = {"X-Restli-Protocol-Version": "2.0.0"}

ENDPOINTS = Endpoints(
    "https://www.linkedin.com/oauth/v2/authorization",
    "https://www.linkedin.com/oauth/v2/accessToken",
    "https://www.linkedin.com/oauth/v2/revoke",
    MEMBER_SCOPES,  # the configuration's own: scopes() below
    " ",
    pkce=False,
    refreshable=True,
)


def _own(settings: Settings) -> LinkedInSettings:
    own = network_settings(PLATFORM, settings)
    assert isinstance(own, LinkedInSettings)
    return own


def scopes(settings: Settings) -> tuple[str, ...]:
    """The scopes connect asks under this configuration (the organisations' only when configured)."""
    return _own(settings).scopes()


def _api(settings: Settings) -> tuple[str, dict[str, str]]:
    """The API base, and the headers of its versioned calls (SOCIALPUB_LINKEDIN_VERSION)."""
    own = _own(settings)
    return own.api_base.rstrip("/"), LINKEDIN_HEADERS | {"LinkedIn-Version": own.version}


def discover(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    base, versioned = _api(settings)
    auth = {"Authorization": f"Bearer {tokens.access_token}"}
    me = json_body(PLATFORM, call(client, "GET", origin(base) + "/v2/userinfo", PLATFORM, headers=auth))

    def candidate(external_id: str, shown: str, kind: str) -> Candidate:
        """An account the member may connect, holding the grant's tokens."""
        return Candidate(
            external_id,
            shown,
            "",
            kind,
            tokens.access_token,
            expires_at=tokens.expires_at,
            refresh_token=tokens.refresh_token,
            refresh_expires_at=tokens.refresh_expires_at,
        )

    name = str(
        me.get("name") or " ".join(str(me.get(k) or "") for k in ("given_name", "family_name")).strip()
    )
    out = [candidate(f"urn:li:person:{me['sub']}", name or "LinkedIn member", "member")]
    if not _own(settings).organizations:  # organisation posting not configured: not asked, not looked up
        return out
    resp = call(  # every role (the finder's `role` takes one): those that may post are kept below
        client,
        "GET",
        f"{base}/organizationAcls",
        PLATFORM,
        params={"q": "roleAssignee", "state": "APPROVED"},
        headers=auth | versioned,
    )
    if resp.status_code == 403:  # the member granted no r_organization_admin: the member only
        return out
    # any other refusal is connect's error, as the adapter words it (a 426: the version to set)
    orgs = [
        str(el.get("organization") or "")
        for el in json_body(PLATFORM, resp).get("elements") or []
        if el.get("role") in POSTING_ROLES
    ]
    orgs = list(dict.fromkeys(o for o in orgs if o.startswith("urn:li:organization:")))
    names = _organization_names(settings, client, tokens.access_token, [o.rsplit(":", 1)[-1] for o in orgs])
    for org in orgs:
        num = org.rsplit(":", 1)[-1]
        out.append(candidate(org, names.get(num) or f"{name} · organization {num}", "organization"))
    return out


def _organization_names(
    settings: Settings, client: httpx.Client, token: str, ids: list[str]
) -> dict[str, str]:
    """The organisations' `localizedName`s by id, in one batch call (`GET /rest/organizations?ids=List(…)`). The
    names only label the candidates: a refused lookup (403 without r_organization_admin, any other error) gives
    {} or leaves an id out, and discovery keeps its own label."""
    if not ids:
        return {}
    base, versioned = _api(settings)
    try:
        resp = call(
            client,
            "GET",
            f"{base}/organizations?ids=List({','.join(ids)})",
            PLATFORM,
            headers={"Authorization": f"Bearer {token}"} | versioned,
        )
    except OAuthError:
        return {}
    body = json_or_none(resp) if resp.status_code == 200 else None
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, dict):
        return {}
    names: dict[str, str] = {}
    for key, org in results.items():
        if (
            isinstance(org, dict)
            and isinstance(org.get("localizedName"), str)
            and org["localizedName"].strip()
        ):
            names[str(key)] = org["localizedName"].strip()
    return names


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    base, versioned = _api(settings)
    bearer = {"Authorization": f"Bearer {token}"}
    if external_id.startswith("urn:li:organization:"):
        return call(
            client,
            "GET",
            f"{base}/organizationAcls",
            PLATFORM,
            params={"q": "roleAssignee", "state": "APPROVED"},
            headers=bearer | versioned,
        )
    return call(client, "GET", origin(base) + "/v2/userinfo", PLATFORM, headers=bearer)


APP = OAuthApp(ENDPOINTS, discover, check, classify, scopes=scopes)
