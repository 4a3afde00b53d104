"""The routers are included on first use (backend/api/app.py `Routers`): each module's routes lie under the path
the registry gives it, and every answer is the one the whole app gives."""

from __future__ import annotations

import importlib

from backend.api.routers import HOST_ROUTERS, ROUTERS
from tests.conftest import key_headers


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def test_every_route_lies_under_its_modules_path_and_no_two_modules_share_one() -> None:
    prefixes = list(ROUTERS.values()) + list(HOST_ROUTERS.values())
    assert len(set(prefixes)) == len(prefixes)
    for prefix in prefixes:  # none is under another (a path would belong to two modules)
        assert not any(other != prefix and _under(prefix, other) for other in prefixes)
    for module, prefix in [*ROUTERS.items(), *HOST_ROUTERS.items()]:
        imported = importlib.import_module(module)
        router = imported.router if module in ROUTERS else imported.host_router
        paths = [("/v1" if module in ROUTERS else "") + route.path for route in router.routes]
        assert paths and all(_under(path, prefix) for path in paths), (module, paths)


def test_a_router_is_included_on_the_first_request_under_its_path(app, client, owner) -> None:
    from backend.api.app import IncludeRouters

    def pending() -> set[str]:
        stack = app.middleware_stack
        while not isinstance(stack, IncludeRouters):
            stack = stack.app
        return set(stack.routers.pending)

    assert client.get("/v1/posts", headers=key_headers(owner.api_key)).status_code == 200
    assert "backend.api.routers.posts" not in pending() and "backend.api.routers.media" in pending()
    assert client.get("/v1/media", headers=key_headers(owner.api_key)).status_code == 200
    assert "backend.api.routers.media" not in pending()
    # a path no router holds: every router is included first, so the answer is the whole app's (404)
    r = client.get("/v1/nothing-here", headers=key_headers(owner.api_key))
    assert r.status_code == 404 and r.json()["error"] == "not_found" and not pending()


def test_a_wrong_method_is_405_on_a_router_not_included_yet(client, owner) -> None:
    r = client.put("/v1/workspace", headers=key_headers(owner.api_key))
    assert r.status_code == 405 and "GET" in r.headers["allow"]


def test_the_openapi_document_describes_every_router(app) -> None:
    paths = app.openapi()["paths"]
    assert {
        "/v1/posts",
        "/v1/api-keys",
        "/v1/workspace",
        "/v1/media",
        "/v1/accounts",
        "/v1/sandbox/published",
        "/v1/activity",
        "/v1/auth/login",
        "/v1/health",
    } <= set(paths)
    assert any(p.startswith("/v1/publish/tiktok/") for p in paths) and any(
        p.startswith("/media/") for p in paths
    )
