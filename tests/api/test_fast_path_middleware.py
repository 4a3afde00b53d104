"""FastPathMiddleware: a shortcut answers, or declines and the app gets the request untouched (body replayed,
chunk by chunk, and a body-limit error where it happened); a shortcut's exceptions are answered by the app's
own handlers, or reach ServerErrorMiddleware."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.testclient import TestClient
from starlette.responses import JSONResponse, Response

from backend.api.errors import install_error_handlers
from backend.api.middleware import BodyLimitMiddleware, FastPathMiddleware
from backend.errors import ApiError


def _app(shortcut) -> FastAPI:  # type: ignore[no-untyped-def]
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, Any]:
        body = await request.body()
        return {"declared": True, "length": len(body), "head": body[:10].decode()}

    app.add_middleware(FastPathMiddleware, routes={("POST", "/echo"): shortcut})
    app.add_middleware(BodyLimitMiddleware, default_limit=1000, limits={})
    return app


def test_a_shortcut_answers():
    async def shortcut(request: Request, raw: bytes) -> Response | None:
        return JSONResponse({"fast": True, "length": len(raw)}, status_code=202)

    with TestClient(_app(shortcut)) as c:
        r = c.post("/echo", content=b"x" * 10)
        assert r.status_code == 202 and r.json() == {"fast": True, "length": 10}
        assert c.get("/echo").status_code == 405  # other methods: the app as declared


def test_a_declined_request_reaches_the_app_with_its_body():
    seen = []

    async def shortcut(request: Request, raw: bytes) -> Response | None:
        seen.append(raw)
        return None

    def chunks():
        yield b"abc"
        yield b"def"

    with TestClient(_app(shortcut)) as c:
        r = c.post("/echo", content=b"0123456789abc")
        assert r.json() == {"declared": True, "length": 13, "head": "0123456789"}
        r = c.post("/echo", content=chunks())
        assert r.json() == {"declared": True, "length": 6, "head": "abcdef"}
        assert seen == [b"0123456789abc", b"abcdef"]


def test_a_body_over_the_limit_is_answered_as_without_the_shortcut():
    called = []

    async def shortcut(request: Request, raw: bytes) -> Response | None:
        called.append(raw)
        return None

    def chunks():
        for _ in range(20):
            yield b"x" * 100

    with TestClient(_app(shortcut)) as c:
        r = c.post("/echo", content=chunks())
        assert r.status_code == 413 and r.json()["error"] == "payload_too_large"
        r = c.post("/echo", content=b"x" * 2000)  # declared length: refused before anything reads it
        assert r.status_code == 413 and r.json()["error"] == "payload_too_large"
    assert called == []


def test_exceptions_of_a_shortcut_go_to_the_apps_handlers():
    async def shortcut(request: Request, raw: bytes) -> Response | None:
        if raw == b"api":
            raise ApiError(402, "subscription_required", "subscribe", [{"x": 1}], headers={"Retry-After": "3"})
        raise RuntimeError("boom")

    with TestClient(_app(shortcut), raise_server_exceptions=False) as c:
        r = c.post("/echo", content=b"api")
        assert r.status_code == 402 and r.headers["Retry-After"] == "3"
        assert r.json() == {"error": "subscription_required", "message": "subscribe", "details": [{"x": 1}]}
        r = c.post("/echo", content=b"other")
        assert r.status_code == 500 and r.json()["error"] == "internal_error"
