"""Instagram's OAuth app: Facebook Login (Facebook's package: the same endpoints and token exchange) with the
Instagram scopes; the grant reaches each managed page's linked Instagram professional account
(`instagram_business_account`), acted on with the page's token."""

from __future__ import annotations

from typing import Any

import httpx

from backend.config import Settings
from backend.networks.base import NetworkError
from backend.networks.facebook.app import AUTHORIZE, TOKEN, graph_base, graph_discover
from backend.networks.facebook.graph import classify
from backend.networks.instagram import NETWORK
from backend.networks.oauth import Candidate, TokenSet, call
from backend.networks.oauth_types import Endpoints, OAuthApp

PLATFORM = NETWORK.name

ENDPOINTS = Endpoints(
    AUTHORIZE,
    TOKEN,
    None,
    # business_management: the IG User Media reference needs it (or ads_management) when the person's Page role
    # comes through a Business Manager (docs.md, fidelity table)
    (
        "instagram_basic",
        "instagram_content_publish",
        "pages_show_list",
        "pages_read_engagement",
        "business_management",
    ),
    ",",
    token_method="GET",
)


def _account(page: dict[str, Any], page_token: str, user_token: str, expiry: Any) -> Candidate | None:
    ig = page.get("instagram_business_account")
    if not isinstance(ig, dict) or not ig.get("id"):
        return None  # a page without a linked professional account
    username = str(ig.get("username") or "")
    return Candidate(
        str(ig["id"]),
        username or str(page.get("name") or ""),
        username,
        "instagram_account",
        page_token or user_token,
        expiry,
    )


def discover(settings: Settings, client: httpx.Client, tokens: TokenSet) -> list[Candidate]:
    fields = "id,name,access_token,instagram_business_account{id,username}"
    return graph_discover(PLATFORM, settings, client, tokens, fields, _account)


def check(settings: Settings, client: httpx.Client, external_id: str, token: str) -> httpx.Response:
    base = graph_base(PLATFORM, settings)
    return call(
        client,
        "GET",
        f"{base}/{external_id}/media",
        PLATFORM,
        params={"limit": "1", "fields": "id", "access_token": token},
    )


def refusal(resp: httpx.Response) -> NetworkError:
    return classify(NETWORK.label, resp)


APP = OAuthApp(ENDPOINTS, discover, check, refusal)
