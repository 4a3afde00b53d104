"""LinkedIn's strict emulator configured like a developer app (issue 29), for the package's tests."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.networks.sandbox.developer_app import EmulatedApp
from backend.services.adapters import sandbox_emulators

TODAY = date(2026, 11, 28)  # the day the research read LinkedIn's pages
REDIRECT = "http://127.0.0.1:53682/callback"
POST = {
    "commentary": "hello",
    "visibility": "PUBLIC",
    "lifecycleState": "PUBLISHED",
    "distribution": {
        "feedDistribution": "MAIN_FEED",
        "targetEntities": [],
        "thirdPartyDistributionChannels": [],
    },
}


def sandbox(tmp_path: Path, *products: str, kind: str = "", today: date | None = TODAY) -> Sandbox:
    """A sandbox whose LinkedIn app holds `products` (none: a new app), activated."""
    app = EmulatedApp(products=frozenset(products), kind=kind, today=today)
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            apps=(("linkedin", app),),
        )
    ).activate()


def client(sb: Sandbox) -> httpx.Client:
    return httpx.Client(transport=sb.transport("linkedin"), base_url="https://api.linkedin.sandbox.invalid")


def headers(token: str, version: str = "202603") -> dict[str, str]:
    return {
        "Authorization": f"Bearer {token}",
        "LinkedIn-Version": version,
        "X-Restli-Protocol-Version": "2.0.0",
    }


def authorize(c: httpx.Client, scope: str, **extra: str) -> dict[str, str]:
    """The consent's redirect parameters (a code, or LinkedIn's error)."""
    params = {
        "client_id": "app-1",
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "state": "st",
        "scope": scope,
        **extra,
    }
    r = c.get("/oauth/v2/authorization", params=params)
    assert r.status_code == 302, r.text
    assert r.headers["location"].startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"]).query).items()}


def exchange(c: httpx.Client, code: str, **extra: str) -> httpx.Response:
    form = {
        "client_id": "app-1",
        "client_secret": "s3cret",
        "code": code,
        "redirect_uri": REDIRECT,
        "grant_type": "authorization_code",
        **extra,
    }
    return c.post("/oauth/v2/accessToken", data=form)


def token_for(c: httpx.Client, scope: str, **extra: str) -> str:
    r = exchange(c, authorize(c, scope, **extra)["code"])
    assert r.status_code == 200, r.text
    token: str = r.json()["access_token"]
    return token


def member_post(c: httpx.Client, token: str, author: str, **kw: Any) -> httpx.Response:
    return c.post("/rest/posts", json={**POST, "author": author, **kw}, headers=headers(token))
