"""Scopes (spec 5.4): every route guarded by a scope is found by walking the app, then checked with
keys holding / lacking that scope, in every key state. New routers are covered automatically."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from fastapi.routing import APIRoute

from backend import clock
from backend.services import keys as keys_service
from backend.services.scopes import ALL_SCOPES, IMPLIED_BY
from tests.conftest import key_headers


def _walk(routes):
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):  # FastAPI's included routers
            yield from _walk(route.original_router.routes)
        elif hasattr(route, "routes"):
            yield from _walk(route.routes)


def guarded_routes(app) -> list[tuple[str, str, str]]:
    """(scope, method, full path) for every route whose dependencies require a scope."""
    paths = list(app.openapi()["paths"])
    out = []
    for route in _walk(app.routes):
        for dep in route.dependant.dependencies:
            scope = getattr(dep.call, "required_scope", None)
            if scope:
                plain = re.sub(r":[^}]+\}", "}", route.path)  # `{account_id:account_id}`: a convertor's name
                full = min((p for p in paths if p.endswith(plain)), key=len)
                for method in sorted(route.methods - {"HEAD", "OPTIONS"}):
                    out.append((scope, method, full))
    return out


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "zz_unknown_id", path)


def call(client, method, path, headers):
    kwargs = {"headers": headers}
    if method in ("POST", "PATCH", "PUT"):
        kwargs["json"] = {}
    return client.request(method, concrete(path), **kwargs)


def test_the_walk_finds_routes(app):
    scopes = {s for s, _, _ in guarded_routes(app)}
    assert "workspace:read" in scopes


def test_each_scope_on_each_route_it_guards(app, client, owner):
    routes = guarded_routes(app)
    for scope, method, path in routes:
        lacking = [s for s in ALL_SCOPES if s != scope and s not in IMPLIED_BY.get(scope, ())]
        _, without = keys_service.create(owner.workspace_id, "without", None, lacking)
        _, with_ = keys_service.create(owner.workspace_id, "with", None, [scope])
        r = call(client, method, path, key_headers(without))
        assert r.status_code == 403, (scope, method, path, r.text)
        assert r.json()["error"] == "insufficient_scope"
        r = call(client, method, path, key_headers(with_))
        assert r.status_code not in (401, 403), (scope, method, path, r.text)
        assert r.status_code < 500


@pytest.mark.parametrize("state", ["unknown", "revoked", "expired"])
def test_each_key_state_on_a_route_of_each_scope(app, client, owner, state):
    per_scope: dict[str, tuple[str, str]] = {}
    for scope, method, path in guarded_routes(app):
        per_scope.setdefault(scope, (method, path))
    key_row, full = keys_service.create(owner.workspace_id, state, 30)
    expected = {"unknown": "invalid_api_key", "revoked": "api_key_revoked", "expired": "api_key_expired"}[
        state
    ]
    if state == "unknown":
        full = full[:-4] + "AAAA"
    if state == "revoked":
        keys_service.revoke(owner.workspace_id, key_row.id)
    travel = clock.now() + timedelta(days=31) if state == "expired" else clock.now()
    with time_machine.travel(travel, tick=False):
        for _scope, (method, path) in per_scope.items():
            r = call(client, method, path, key_headers(full))
            assert r.status_code == 401, (method, path, r.text)
            assert r.json()["error"] == expected


@pytest.mark.parametrize("scope", ["media:write", "publish:posts", "workspace:read"])
def test_implied_workspace_read(client, owner, scope):
    _, key = keys_service.create(owner.workspace_id, "k", None, [scope])
    assert client.get("/v1/workspace", headers=key_headers(key)).status_code == 200


@pytest.mark.parametrize("scope", ["publish:tiktok", "accounts:read", "generations:write", "videos:read"])
def test_no_implied_workspace_read(client, owner, scope):
    _, key = keys_service.create(owner.workspace_id, "k", None, [scope])
    r = client.get("/v1/workspace", headers=key_headers(key))
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"


def test_generations_write_implies_videos_read():
    from backend.services.scopes import satisfies

    assert satisfies(["generations:write"], "videos:read")
    assert not satisfies(["videos:read"], "generations:write")
