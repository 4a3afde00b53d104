"""Pure-ASGI middleware: the API's checks in one layer (`ApiMiddleware`: NUL in a path or query, the time a body may
take, HEAD as GET, body size limits enforced while streaming, the rate-limit headers), and the trailing-slash
redirect."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.routing import Match

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
        },
        separators=(",", ":"),  # as every other answer (JSONResponse)
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


class _BodyTooSlow(HTTPException):
    """An HTTPException so that FastAPI's body parsing re-raises it untouched."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            status_code=408,
            detail=f"no part of the request body came for {seconds:g} s",
            headers={"Connection": "close"},  # the rest of the body is not waited for
        )
        self.seconds = seconds


class ApiMiddleware:
    """The API's checks around every HTTP request, in one layer that wraps `receive` and `send` once (seven
    layers, each wrapping them again, cost ~20 us a request on the event loop; this one ~5 us). In this order:

    - **NUL**: 400 `validation_error` for a path or a query string carrying the NUL character (`%00`): no string
      the API reads may hold one (bodies are checked by their models, backend.schemas.common), and the document
      states it on every parameter (backend.api.app `NO_NUL`).
    - **Body time** (`body_timeout_s` > 0): 408 `request_timeout` (and the connection closed) when the app has
      waited `body_timeout_s` for the next piece of a request body: a client that sends its headers, then a body
      slowly or not at all, holds a connection and a request's worker thread no longer than that (issue 30 item
      6; the headers' own bound is the server's: backend/operator/httpserver.py). Once the body is complete,
      `receive` is awaited without a bound (it then only reports a disconnection).
    - **HEAD**: HEAD on a /v1 path is its GET without the body (RFC 9110 9.3.2: the same status and headers, the
      `Content-Length` the GET would send). FastAPI's routes answer only the methods they declare, and the API's
      routes declare GET; the media host (/media/{key}) declares its own HEAD, which reads no file.
    - **Body size**: 413 `payload_too_large` when Content-Length or the streamed body passes the route's limit
      (`limits`: path prefix -> bytes, else `default_limit`), enforced while streaming (never buffered whole).
    - **Rate-limit headers**: the RateLimit / RateLimit-Policy headers the auth dependency computed
      (`request.state.ratelimit_headers`) are added to whatever response the request ends with, including routes
      that return a Response object directly.

    The answers this layer gives itself (400, 408, 413) carry no rate-limit header; a 413 to a HEAD has no body."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        default_limit: int,
        limits: dict[str, int],
        body_timeout_s: float = 0.0,
        head_prefix: str = "/v1/",
    ) -> None:
        self.app = app
        self.default_limit = default_limit
        self.limits = limits  # path prefix -> limit
        self.body_timeout_s = body_timeout_s
        self.head_prefix = head_prefix

    def limit_for(self, path: str) -> int:
        for prefix, limit in self.limits.items():
            if path == prefix or path.startswith(prefix + "/"):
                return limit
        return self.default_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        where = "path" if "\x00" in path else "query" if b"%00" in scope.get("query_string", b"") else None
        if where is not None:
            await _send_error(
                send,
                400,
                "validation_error",
                f"the {where} holds the NUL character (%00): no value may",
                [{"field": where, "error": "nul_character", "message": "the NUL character is not allowed"}],
            )
            return
        head = scope["method"] == "HEAD" and path.startswith(self.head_prefix)
        if head:
            scope = dict(scope, method="GET")
        limit = self.limit_for(path)
        timeout_s = self.body_timeout_s
        started = False

        async def answer(message: Message) -> None:  # every message out; a HEAD's body dropped
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            elif head and message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _send_413(answer, limit)
                    return
        received = 0
        body_done = timeout_s <= 0  # no bound on the body's time: nothing to track

        async def checked_receive() -> Message:
            nonlocal received, body_done
            if body_done:
                message = await receive()
            else:
                try:
                    async with asyncio.timeout(timeout_s):
                        message = await receive()
                except TimeoutError:
                    raise _BodyTooSlow(timeout_s) from None
                if message["type"] != "http.request" or not message.get("more_body", False):
                    body_done = True
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge(limit)
            return message

        async def app_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = (scope.get("state") or {}).get("ratelimit_headers")
                if extra:
                    present = {name.lower() for name, _ in message.get("headers", [])}
                    headers = list(message.get("headers", []))
                    for name, value in extra.items():
                        if name.lower().encode() not in present:
                            headers.append((name.lower().encode(), value.encode()))
                    message["headers"] = headers
            await answer(message)

        try:
            await self.app(scope, checked_receive, app_send)
        except _TooLarge:
            if not started:
                await _send_413(answer, limit)
        except _BodyTooSlow as exc:
            if not started:
                await _send_error(send, 408, "request_timeout", str(exc.detail))


class TrailingSlashRedirect:
    """A path that a route would take without its trailing slash (`/v1/posts/`) is redirected there (307: the
    method and body are kept) with a relative `Location` — the path and the query only (`/v1/posts?limit=3`), never
    an address built from the request's `Host` header, which the client chooses (Starlette's own redirect did:
    `Host: evil.example` got `Location: http://evil.example/v1/posts`). The app runs with `redirect_slashes=False`;
    this is its only slash redirect. Placed inside the middleware that includes the routers on first use, so the
    routes it reads are there."""

    def __init__(self, app: ASGIApp, routes: Callable[[], Any]) -> None:
        self.app = app
        self.routes = routes

    def _matches(self, scope: Scope) -> bool:
        return any(route.matches(scope)[0] != Match.NONE for route in self.routes())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path.endswith("/") and path != "/" and not self._matches(scope):
            other = dict(scope, path=path.rstrip("/") or "/")
            if self._matches(other):
                raw = scope.get("raw_path") or path.encode()
                query = scope.get("query_string", b"")
                location = (
                    scope.get("root_path", "").encode() + raw.rstrip(b"/") + (b"?" + query if query else b"")
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 307,
                        "headers": [(b"location", location), (b"content-length", b"0")],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)


async def _send_error(
    send: Send, status: int, code: str, message: str, details: list[dict[str, Any]] | None = None
) -> None:
    body = json.dumps(
        {"error": code, "message": message, "details": details or []}, separators=(",", ":")
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
