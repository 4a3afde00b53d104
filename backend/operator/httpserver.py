"""The HTTP server of `socialpub serve`: uvicorn, bounded so that slow or numerous clients cannot take it down.

Half-sent requests were never timed out (1,000 of them stayed open for good) and one unauthenticated client could
open connections until the process ran out of file descriptors, so that `GET /v1/health` failed. The bounds:

* **headers**: a request's line and headers must arrive within `server_header_timeout_s` (10 s) of the request's
  first byte (of the connection, for the first request), and within `server_max_header_bytes` (64 KiB); else the
  connection gets 408 `request_timeout` or 431 `headers_too_large` and is closed;
* **body**: the app waits at most `server_body_timeout_s` (30 s) for each piece of a request body (ASGI, in
  backend/api/middleware.py `ApiMiddleware`): 408 `request_timeout`, connection closed;
* **idle keep-alive**: `server_keep_alive_s` (5 s; uvicorn's `timeout_keep_alive`);
* **connections**: at most `server_max_connections` open (1,024), and `server_max_connections_per_client` (64)
  from one client address (an IPv6 client by its /64); over either, a new connection is answered 503
  `too_many_connections` and closed at once. uvicorn's `limit_concurrency` is set beside them (requests in flight),
  and `h11_max_incomplete_event_size` to the header bound (for the h11 parser: we run httptools').

The connection bounds and the header timeout live in `BoundedHttpToolsProtocol`, uvicorn's httptools protocol
(uvicorn[standard]) extended through its public callbacks (`connection_made`, `data_received`, `on_message_begin`,
`on_headers_complete`, `connection_lost`), given to uvicorn as the `http` protocol class (uvicorn's documented way to
choose one). The process's soft file-descriptor limit is raised to its hard limit at start, and the connection
bound kept under it (with room for the database, the files and the worker's own connections).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from backend.operator.openfiles import FD_RESERVE, raise_fd_limit

log = logging.getLogger("socialpub.server")


@dataclass(frozen=True)
class ServerLimits:
    header_timeout_s: float = 10.0
    max_header_bytes: int = 64 * 1024
    max_connections: int = 1024
    max_connections_per_client: int = (
        64  # 0: no per-client bound (behind a reverse proxy: every client is it)
    )
    keep_alive_s: int = 5

    @classmethod
    def of(cls, settings: Any) -> ServerLimits:
        return cls(
            header_timeout_s=float(settings.server_header_timeout_s),
            max_header_bytes=int(settings.server_max_header_bytes),
            max_connections=int(settings.server_max_connections),
            max_connections_per_client=int(settings.server_max_connections_per_client),
            keep_alive_s=int(settings.server_keep_alive_s),
        )


def client_key(peer: Any) -> str:
    """Who a connection's client is for the per-client bound: its address, an IPv6 one by its /64."""
    host = peer[0] if isinstance(peer, tuple) and peer else str(peer or "")
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


class Connections:
    """The open connections of one server: how many, and how many per client (the event loop's thread only)."""

    def __init__(self, limits: ServerLimits) -> None:
        self.limits = limits
        self.open = 0
        self.by_client: Counter[str] = Counter()

    def admit(self, client: str) -> str | None:
        """Count a new connection in; None when admitted, else why it is refused."""
        if self.open >= self.limits.max_connections:
            return f"the server holds its maximum of {self.limits.max_connections} connections"
        per_client = self.limits.max_connections_per_client
        if per_client and self.by_client[client] >= per_client:
            return f"this client holds its maximum of {per_client} connections"
        self.open += 1
        self.by_client[client] += 1
        return None

    def release(self, client: str) -> None:
        self.open -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]


def error_response(status: int, reason: str, code: str, message: str) -> bytes:
    """A complete HTTP/1.1 error response that closes the connection, with the API's error body."""
    body = json.dumps({"error": code, "message": message, "details": []}, separators=(",", ":")).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the connection bounds and the header timeout and size of this module.
    `bounded_protocol(limits)` makes the class a server uses (its `Connections` shared by its connections)."""

    connections_bound: Connections  # set on the class made by bounded_protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn's protocol is given a Transport (its peername is read here), typed BaseTransport
        self.bound_client = client_key(transport.get_extra_info("peername"))
        self.refused = self.connections_bound.admit(self.bound_client)
        self.header_timer: asyncio.TimerHandle | None = None
        self.header_bytes = 0
        self.in_headers = True
        if self.refused is not None:
            transport.write(
                error_response(
                    503, "Service Unavailable", "too_many_connections", f"{self.refused}: try later"
                )
            )
            transport.close()
            return
        self.bound_transport = transport
        super().connection_made(transport)
        self._arm_header_timer()

    def _arm_header_timer(self) -> None:
        if self.header_timer is None:
            self.header_timer = asyncio.get_running_loop().call_later(
                self.connections_bound.limits.header_timeout_s, self._headers_too_slow
            )

    def _disarm_header_timer(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _headers_too_slow(self) -> None:
        self.header_timer = None
        if not self.bound_transport.is_closing():
            seconds = self.connections_bound.limits.header_timeout_s
            self.bound_transport.write(
                error_response(
                    408,
                    "Request Timeout",
                    "request_timeout",
                    f"the request's headers took over {seconds:g} s",
                )
            )
            self.bound_transport.close()

    def data_received(self, data: bytes) -> None:
        if self.refused is not None:
            return
        if self.in_headers:
            self._arm_header_timer()  # a request's first bytes after a keep-alive pause start its clock
            self.header_bytes += len(data)
            limit = self.connections_bound.limits.max_header_bytes
            if self.header_bytes > limit:
                self._disarm_header_timer()
                self.bound_transport.write(
                    error_response(
                        431,
                        "Request Header Fields Too Large",
                        "headers_too_large",
                        f"the request's line and headers are over {limit} bytes",
                    )
                )
                self.bound_transport.close()
                return
        super().data_received(data)

    def on_message_begin(self) -> None:
        self.in_headers = True
        self._arm_header_timer()
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self.in_headers = False
        self.header_bytes = 0
        self._disarm_header_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        self.in_headers = True  # what comes next on this connection is a new request's headers
        self.header_bytes = 0
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.refused is not None:
            return  # never admitted: nothing of uvicorn's was set up
        self._disarm_header_timer()
        self.connections_bound.release(self.bound_client)
        super().connection_lost(exc)


def bounded_protocol(limits: ServerLimits) -> type[BoundedHttpToolsProtocol]:
    """The protocol class of one server: its connections counted together."""
    return type(
        "BoundedHttpToolsProtocol",
        (BoundedHttpToolsProtocol,),
        {"connections_bound": Connections(limits), "__module__": __name__},
    )


def bounded_config(
    app: Any, settings: Any, *, host: str, port: int, reserve: int = FD_RESERVE, **uvicorn_options: Any
) -> uvicorn.Config:
    """The uvicorn configuration of `socialpub serve`: the app served with every bound of this module. reserve:
    the open files kept for the rest of the process (a worker in a thread of it: its pool's too)."""
    limits = ServerLimits.of(settings)
    soft = raise_fd_limit(limits.max_connections + reserve)
    if limits.max_connections + reserve > soft:
        fitted = max(16, soft - reserve)
        log.warning(
            "SOCIALPUB_SERVER_MAX_CONNECTIONS=%d does not fit the open-files limit (%d): %d connections at most",
            limits.max_connections,
            soft,
            fitted,
        )
        limits = ServerLimits(
            limits.header_timeout_s,
            limits.max_header_bytes,
            fitted,
            min(limits.max_connections_per_client, fitted),
            limits.keep_alive_s,
        )
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=bounded_protocol(limits),
        timeout_keep_alive=limits.keep_alive_s,
        limit_concurrency=limits.max_connections + 1,  # requests in flight; the connections are bounded above
        h11_max_incomplete_event_size=limits.max_header_bytes,
        **uvicorn_options,
    )
