"""Pure-ASGI middleware: request body size limits, enforced while streaming (never buffered whole); the rate-limit
headers; shortcuts for the busiest routes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _TooLarge(HTTPException):
    """An HTTPException so that FastAPI's body parsing re-raises it untouched."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=f"request body is over the limit of {limit} bytes")
        self.limit = limit


async def _send_413(send: Send, limit: int) -> None:
    body = json.dumps(
        {
            "error": "payload_too_large",
            "message": f"request body is over the limit of {limit} bytes",
            "details": [{"limit": limit}],
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimitMiddleware:
    """413 `payload_too_large` when Content-Length or the streamed body passes the route's limit."""

    def __init__(self, app: ASGIApp, default_limit: int, limits: dict[str, int]) -> None:
        self.app = app
        self.default_limit = default_limit
        self.limits = limits  # path prefix -> limit

    def limit_for(self, path: str) -> int:
        for prefix, limit in self.limits.items():
            if path == prefix or path.startswith(prefix + "/"):
                return limit
        return self.default_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope.get("path", ""))
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _send_413(send, limit)
                    return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge(limit)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _send_413(send, limit)


class RateLimitHeadersMiddleware:
    """Adds the RateLimit / RateLimit-Policy headers computed by the auth dependency to the response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = (scope.get("state") or {}).get("ratelimit_headers")
                if extra:
                    present = {name.lower() for name, _ in message.get("headers", [])}
                    headers = list(message.get("headers", []))
                    for name, value in extra.items():
                        if name.lower().encode() not in present:
                            headers.append((name.lower().encode(), value.encode()))
                    message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


FastHandler = Callable[[Request, bytes], Awaitable[Response | None]]


class FastPathMiddleware:
    """Shortcuts for the busiest exact routes, ahead of FastAPI's routing, per-route wrappers and dependency
    resolution (POST /v1/posts: ~115 us of the API's CPU a request).

    A shortcut gets the request and its whole body (it must not read the body from the request), and answers a Response, or None to decline — only before
    anything with a side effect. A declined request goes on through the app as declared, with the body (and
    whatever receiving it ended with, e.g. a body-limit error) replayed, so it is answered exactly as without
    the shortcut. An exception from a shortcut is answered by the app's own exception handler for it (the one
    ExceptionMiddleware would use); one without a handler propagates to ServerErrorMiddleware, as from a route.
    Sits inside the body-limit and rate-limit-header middlewares, so both apply to shortcuts too.
    """

    def __init__(self, app: ASGIApp, routes: dict[tuple[str, str], FastHandler]) -> None:
        self.app = app
        self.routes = routes  # (method, path) -> shortcut

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        shortcut = self.routes.get((scope.get("method"), scope.get("path"))) if scope["type"] == "http" else None
        if shortcut is None or scope.get("root_path"):
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        failure: Exception | None = None
        chunks: list[bytes] = []
        try:
            while True:
                message = await receive()
                received.append(message)
                if message["type"] != "http.request":
                    break
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    break
        except Exception as exc:  # e.g. the body limit: replayed to the app, which answers it as always
            failure = exc
        response = None
        if failure is None and received[-1]["type"] == "http.request":
            request = Request(scope, receive, send)
            try:
                response = await shortcut(request, b"".join(chunks))
            except Exception as exc:
                handler = _handler_for(scope["app"], exc)
                if handler is None:
                    raise
                if asyncio.iscoroutinefunction(handler):
                    response = await handler(request, exc)
                else:
                    response = await run_in_threadpool(handler, request, exc)
        if response is not None:
            await response(scope, receive, send)
            return

        async def replay() -> Message:
            if received:
                return received.pop(0)
            if failure is not None:
                raise failure
            return await receive()

        await self.app(scope, replay, send)


def _handler_for(app: Any, exc: Exception) -> Callable[..., Awaitable[Response]] | None:
    """The app's handler for `exc` as ExceptionMiddleware looks it up (by class, most specific first); the
    handler of Exception/500 belongs to ServerErrorMiddleware and is left to it."""
    handlers = app.exception_handlers
    for cls in type(exc).__mro__:
        if cls is Exception:
            return None
        if cls in handlers:
            return handlers[cls]
    return None
