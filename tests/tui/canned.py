"""A backend with fixed answers, for snapshot tests: the same pixels on every run need the same ids, texts and
times, which a live embedded backend (random ids) cannot give. Pilot tests of behaviour use the real embedded
backend (`tui_app` in conftest); snapshots use `canned_app`.

    routes = {("GET", "/v1/posts"): {"items": [...], "nextCursor": None},
              ("GET", "/v1/posts/post_1"): lambda request: httpx.Response(200, json={...})}
    app = canned_app(routes)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from backend.services.networks import catalogue
from tests.tui.conftest import FIXED_NOW, ZONE

Answer = Any | Callable[[httpx.Request], httpx.Response]


# What every app asks for as it starts (the posts screen is the home screen: its list and its account filter),
# answered empty unless a test gives its own answer — a test of another screen needs not know about them.
DEFAULTS: dict[tuple[str, str], Answer] = {
    ("GET", "/v1/posts"): {"items": [], "nextCursor": None},
    ("GET", "/v1/accounts"): {"items": [], "limit": 5, "used": 0},
    ("GET", "/v1/networks"): {"items": catalogue()},  # the app reads the server's networks as it starts
}


def canned_transport(routes: Mapping[tuple[str, str], Answer]) -> httpx.MockTransport:
    """(method, path) -> JSON body (200) or a function of the request; GET /v1/posts and /v1/accounts answer
    empty lists unless given. Anything else: 404 `not_found`."""

    def handle(request: httpx.Request) -> httpx.Response:
        answer = routes.get(
            (request.method, request.url.path), DEFAULTS.get((request.method, request.url.path))
        )
        if answer is None:
            return httpx.Response(
                404,
                json={
                    "error": "not_found",
                    "message": f"no canned answer for {request.method} {request.url.path}",
                    "details": [],
                },
            )
        if callable(answer):
            return answer(request)
        return httpx.Response(200, json=answer)

    return httpx.MockTransport(handle)


def canned_app(
    routes: Mapping[tuple[str, str], Answer], *, now: datetime = FIXED_NOW, zone: str = ZONE
) -> Any:
    from socialpub_tui.app import SocialpubApp
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.times import DisplayZone

    client = AsyncClient(
        "http://canned.socialpub", api_key="sk_test_canned", transport=canned_transport(routes)
    )
    return SocialpubApp(client, clock=lambda: now, zone=DisplayZone(zone), backend_label="canned backend")


def ts(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> str:
    """An API timestamp (UTC, `Z`)."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
