"""Rate limit (spec 8): more than N requests a minute with one key → 429, counted in the store."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from fastapi.testclient import TestClient

from backend import clock
from backend.api.app import create_app
from tests.conftest import key_headers


def _freeze_at_window_start():
    now = clock.now()
    start = now.replace(second=1, microsecond=0) + timedelta(minutes=1)
    return time_machine.travel(start, tick=False)


def test_31st_request_in_a_minute_is_429_with_headers(client, owner):
    h = key_headers(owner.api_key)
    with _freeze_at_window_start():
        for i in range(30):
            r = client.get("/v1/workspace", headers=h)
            assert r.status_code == 200, i
            assert r.headers["RateLimit-Policy"] == '"per-key";q=30;w=60'
        assert r.headers["RateLimit"].startswith('"per-key";r=0;')
        r = client.get("/v1/workspace", headers=h)
        assert r.status_code == 429
        assert r.json()["error"] == "rate_limit_exceeded"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
        assert "RateLimit" in r.headers and "RateLimit-Policy" in r.headers
    with time_machine.travel(clock.now() + timedelta(minutes=2), tick=False):
        assert client.get("/v1/workspace", headers=h).status_code == 200


def test_budget_is_per_key(client, owner):
    from backend.services import keys

    _, other = keys.create(owner.workspace_id, "second", None)
    with _freeze_at_window_start():
        for _ in range(31):
            client.get("/v1/workspace", headers=key_headers(owner.api_key))
        assert client.get("/v1/workspace", headers=key_headers(other)).status_code == 200


def test_two_app_instances_share_one_budget(settings, owner):
    a, b = create_app(settings), create_app(settings)
    h = key_headers(owner.api_key)
    with TestClient(a) as ca, TestClient(b) as cb, _freeze_at_window_start():
        statuses = [(ca if i % 2 else cb).get("/v1/workspace", headers=h).status_code for i in range(31)]
    assert statuses[:30] == [200] * 30
    assert statuses[30] == 429


def test_limit_is_configurable(settings, owner):
    settings.rate_limit_per_minute = 3
    with TestClient(create_app(settings)) as c, _freeze_at_window_start():
        codes = [c.get("/v1/workspace", headers=key_headers(owner.api_key)).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_headers_on_routes_that_return_a_response_object(settings, client, owner):
    from backend.services import accounts

    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    h = key_headers(owner.api_key)
    r = client.post("/v1/posts", json={"targets": ["facebook"], "content": "hi"}, headers=h)
    assert r.status_code == 202 and "RateLimit" in r.headers and "RateLimit-Policy" in r.headers
    r = client.get(f"/v1/posts/{r.json()['id']}", headers=h)
    assert r.status_code == 200 and r.headers["RateLimit"].startswith('"per-key";r=')
    r = client.get("/v1/posts/post_nope", headers=h)
    assert r.status_code == 404 and "RateLimit" in r.headers
