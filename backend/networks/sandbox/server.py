"""One emulator as an ASGI app, for `socialpub sandbox serve` (a standalone HTTP server on loopback).

The emulators answer in process with the `.sandbox.invalid` hosts of the real networks' shapes (YouTube's
upload session `Location`, LinkedIn's `uploadUrl`, Graph `paging.next`); served over HTTP, those hosts are
rewritten to the server's own origin, so a client follows them back to it. Every path of the network (API,
uploads, OAuth) is served from that one origin.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

HOP_BY_HOP = {b"content-length", b"transfer-encoding", b"connection", b"content-encoding"}

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def _rewrite(value: bytes, origin: bytes, hosts: tuple[bytes, ...]) -> bytes:
    for host in hosts:
        if host in value:
            value = value.replace(host, origin)
    return value


def asgi_app(
    handler: Callable[[httpx.Request], httpx.Response],
    served_hosts: tuple[str, ...] = (),
    *,
    delay_s: float = 0.0,
) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """An ASGI app serving `handler` (httpx.Request -> httpx.Response, e.g. `Sandbox.handler(platform,
    latency=False)`); then the answer waits `delay_s` (the network's latency) on the event loop, holding no thread:
    a real network answers any number of calls at once, and a thread held for each call's latency capped an
    emulator at anyio's 40 threads — 133 calls a second at 0.3 s, which bounded the scheduler benchmark, not the
    product. The handler itself runs on the event loop too: it is the emulator's own work (its database, a few
    statements, no network), one call after another under the interpreter lock whatever thread runs it, and a hop
    to a worker thread and back cost ~15-20 % of a served emulator's CPU (py-spy, bench/burst.py) — CPU the
    product's worker shares on one machine in the benchmarks. Only a write queued behind another process's on
    the same sandbox database (SQLite's busy wait) holds the loop, for that write's length. served_hosts: the
    emulator's API and upload hosts (`Emulator.served_hosts()`, not the CDN hosts of avatars), rewritten in its
    answers to the server's own origin."""
    import anyio

    hosts = tuple(h.encode() for h in served_hosts)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = [(k, v) for k, v in scope["headers"]]
        host = dict(headers).get(b"host") or f"{scope['server'][0]}:{scope['server'][1]}".encode()
        origin = scope.get("scheme", "http").encode() + b"://" + host
        target = scope.get("raw_path") or scope["path"].encode()
        if scope.get("query_string"):
            target += b"?" + scope["query_string"]
        request = httpx.Request(
            scope["method"],
            (origin + target).decode("latin-1"),
            headers=[(k, v) for k, v in headers if k not in HOP_BY_HOP],
            content=b"".join(chunks),
        )
        try:
            response = handler(request)
            body = response.read()
            if delay_s > 0:
                await anyio.sleep(delay_s)
        except Exception as exc:  # an emulator bug: a 500 the client can see, not a dropped connection
            response, body = httpx.Response(500), f"sandbox emulator error: {exc!r}".encode()
        ctype = response.headers.get("content-type", "")
        if body and ("json" in ctype or ctype.startswith("text/")):
            body = _rewrite(body, origin, hosts)
        out = [
            (k.lower(), _rewrite(v, origin, hosts))
            for k, v in response.headers.raw
            if k.lower() not in HOP_BY_HOP
        ]
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": response.status_code, "headers": out})
        await send({"type": "http.response.body", "body": body})

    return app
