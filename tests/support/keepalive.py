"""A keep-alive HTTP/1.1 server on loopback, like a network's API, for the adapters' HTTP client tests: it counts
the connections it accepted, and answers /together once `together` requests are under way at once."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class KeepAliveServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many connections at once are all accepted

    def __init__(self, together: int = 1) -> None:
        super().__init__(("127.0.0.1", 0), _KeepAlive)
        self.together = threading.Barrier(together, timeout=20)
        self.connections = 0
        self.lock = threading.Lock()

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


class _KeepAlive(BaseHTTPRequestHandler):
    """Answers every GET with 200 and `{}`, keeping the connection open."""

    protocol_version = "HTTP/1.1"
    server: KeepAliveServer

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/together":
            self.server.together.wait()
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serving(together: int = 1) -> Iterator[KeepAliveServer]:
    """The server, serving on its own thread until the block ends."""
    httpd = KeepAliveServer(together)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def closed_port() -> int:
    """A loopback port nothing listens on (a server bound, then closed)."""
    httpd = KeepAliveServer()
    port = int(httpd.server_address[1])
    httpd.server_close()
    return port
