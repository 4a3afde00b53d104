"""Fixed webhook endpoints and failed deliveries (docs/webhooks.md) for the activity screen's webhooks panel:
one healthy endpoint, one failing since a 500, one disabled by a 410 Gone (canned backend, tests/tui/canned.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.tui.canned import ts


def endpoint(
    wid: str,
    url: str,
    *,
    enabled: bool = True,
    failing: bool = False,
    code: int | None = 200,
    disabled_reason: str | None = None,
    failing_since: str | None = None,
) -> dict[str, Any]:
    return {
        "id": wid,
        "url": url,
        "events": [],
        "description": None,
        "enabled": enabled,
        "disabledReason": disabled_reason,
        "failing": failing,
        "failingSince": failing_since,
        "lastDeliveryAt": ts(2027, 1, 15, 7, 0),
        "lastStatusCode": code,
        "secretRotatedAt": None,
        "createdAt": ts(2027, 1, 2),
        "updatedAt": ts(2027, 1, 15, 7, 0),
    }


def delivery(
    did: str, wid: str, eid: str, event_type: str, code: int | None, error: str, at: str
) -> dict[str, Any]:
    return {
        "id": did,
        "endpointId": wid,
        "eventId": eid,
        "eventType": event_type,
        "status": "failed",
        "attempts": 10,
        "nextAttemptAt": None,
        "createdAt": at,
        "completedAt": at,
        "lastStatusCode": code,
        "lastError": error,
        "attemptLog": [{"at": at, "statusCode": code, "durationMs": 41, "error": error}],
    }


OK = endpoint("we_ok", "https://hooks.example.com/socialpub")
FAILING = endpoint(
    "we_fail",
    "https://ops.example.org/webhooks/socialpub",
    failing=True,
    code=500,
    failing_since=ts(2027, 1, 14, 16, 5),
)
GONE = endpoint(
    "we_gone",
    "https://old.example.net/hook",
    enabled=False,
    code=410,
    disabled_reason="the receiver answered 410 Gone",
)

DELIVERIES: dict[str, list[dict[str, Any]]] = {
    "we_ok": [
        delivery(
            "whd_ok1",
            "we_ok",
            "evt_0004",
            "generation.failed",
            None,
            "connection refused",
            ts(2027, 1, 13, 9, 30),
        )
    ],
    "we_fail": [
        delivery("whd_f2", "we_fail", "evt_0007", "publish.failed", 500, "HTTP 500", ts(2027, 1, 15, 6, 40)),
        delivery(
            "whd_f1",
            "we_fail",
            "evt_0005",
            "publish.completed",
            503,
            "HTTP 503 (Retry-After: 120)",
            ts(2027, 1, 14, 16, 5),
        ),
    ],
    "we_gone": [
        delivery(
            "whd_g1",
            "we_gone",
            "evt_0006",
            "tiktok.publish.inbox_delivered",
            410,
            "HTTP 410",
            ts(2027, 1, 14, 11, 0),
        )
    ],
}


def routes(
    endpoints: list[dict[str, Any]] | None = None, calls: list[tuple[str, str, Any]] | None = None
) -> dict[tuple[str, str], Any]:
    """GET /v1/webhooks, each endpoint's failed deliveries, POST /v1/events/:id/redeliver and PATCH
    /v1/webhooks/:id; every request is appended to `calls` as (method, path, JSON body or query)."""
    endpoints = [OK, FAILING, GONE] if endpoints is None else endpoints
    seen = calls if calls is not None else []

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        body = json.loads(request.content) if request.content else None
        seen.append((request.method, path, body if body is not None else dict(request.url.params)))
        if request.method == "GET" and path == "/v1/webhooks":
            return httpx.Response(200, json={"items": endpoints})
        if request.method == "GET" and path.endswith("/deliveries"):
            wid = path.split("/")[3]
            assert request.url.params.get("status") == "failed"
            return httpx.Response(200, json={"items": DELIVERIES.get(wid, []), "nextCursor": None})
        if request.method == "POST" and path.endswith("/redeliver"):
            eid = path.split("/")[3]
            return httpx.Response(202, json={"eventId": eid, "deliveries": ["whd_again"]})
        if request.method == "PATCH":
            wid = path.split("/")[3]
            found = next(e for e in endpoints if e["id"] == wid)
            return httpx.Response(
                200, json=found | {"enabled": True, "disabledReason": None, "failing": False}
            )
        return httpx.Response(404, json={"error": "not_found", "message": "no such route", "details": []})

    table: dict[tuple[str, str], Any] = {("GET", "/v1/webhooks"): answer}
    for e in endpoints:
        table[("GET", f"/v1/webhooks/{e['id']}/deliveries")] = answer
        table[("PATCH", f"/v1/webhooks/{e['id']}")] = answer
    for page in DELIVERIES.values():
        for d in page:
            table[("POST", f"/v1/events/{d['eventId']}/redeliver")] = answer
    return table
