"""A small HTTP server on 127.0.0.1 for the fetch tests: fixed bodies, redirects, stalls, drips, huge bodies."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MB = 1024 * 1024


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/octet-stream"
    headers: dict[str, str] = field(default_factory=dict)
    send_length: bool = True
    stall_s: float = 0.0  # before the status line
    drip_s: float = 0.0  # between single bytes of the body
    stream: Callable[[], Iterator[bytes]] | None = None  # body generator (huge bodies)
    declared_length: int | None = None  # Content-Length to announce for a streamed body


class LocalServer:
    """`with LocalServer() as srv: srv.routes['/x'] = Route(...); srv.url('/x')`. Records every hit."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: list[str] = []
        self.hosts: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # bodies without Content-Length end at close

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                server.hits.append(self.path)
                server.hosts.append(self.headers.get("Host"))
                route = server.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    route = Route(status=404, body=b"not found", content_type="text/plain")
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._serve(route)

            def _serve(self, route: Route) -> None:
                if route.stall_s:
                    time.sleep(route.stall_s)
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                for k, v in route.headers.items():
                    self.send_header(k, v)
                if route.stream is not None:
                    if route.declared_length is not None:
                        self.send_header("Content-Length", str(route.declared_length))
                    self.end_headers()
                    for chunk in route.stream():
                        self.wfile.write(chunk)
                    return
                if route.send_length:
                    self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                if route.drip_s:
                    for i in range(len(route.body)):
                        self.wfile.write(route.body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(route.drip_s)
                else:
                    self.wfile.write(route.body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def big_body(head: bytes, total: int, chunk: int = MB) -> Callable[[], Iterator[bytes]]:
    """`head` then zeros up to `total` bytes, generated on the fly."""

    def gen() -> Iterator[bytes]:
        yield head
        sent = len(head)
        zeros = b"\x00" * chunk
        while sent < total:
            n = min(chunk, total - sent)
            yield zeros[:n]
            sent += n

    return gen
