"""The adapters' HTTP client (backend/networks/factory.py): a connection of its own for each request in flight,
kept alive and lent to the next request."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from backend.networks.factory import http_client

IN_FLIGHT = 30  # more than httpx's default keep-alive limit (20)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # IN_FLIGHT connections at once are all accepted
    together = threading.Barrier(IN_FLIGHT, timeout=20)
    connections = 0
    lock = threading.Lock()


class _KeepAlive(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive, like a network's API; /together answers once IN_FLIGHT requests are under way."""

    protocol_version = "HTTP/1.1"
    server: _Server

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


@pytest.fixture
def server() -> Iterator[_Server]:
    httpd = _Server(("127.0.0.1", 0), _KeepAlive)
    httpd.together = threading.Barrier(IN_FLIGHT, timeout=20)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def _url(server: _Server, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def test_each_request_in_flight_keeps_its_connection_for_the_next(server: _Server) -> None:
    """IN_FLIGHT requests under way at once open IN_FLIGHT connections; every later request (as many threads, 5
    each) reuses one of them: none is closed for a keep-alive limit below the concurrency, none opened anew."""
    errors: list[BaseException] = []
    with http_client(None, 10) as client:

        def work() -> None:
            try:
                assert client.get(_url(server, "/together")).status_code == 200
                for _ in range(5):
                    assert client.get(_url(server, "/alone")).status_code == 200
            except BaseException as exc:  # noqa: BLE001  # reported by the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(IN_FLIGHT)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert not errors, errors
    assert server.connections == IN_FLIGHT


def test_a_streamed_response_gives_its_connection_back_once_closed(server: _Server) -> None:
    with http_client(None, 10) as client:
        for _ in range(3):
            with client.stream("GET", _url(server, "/alone")) as response:
                assert response.read() == b"{}"
        assert client.get(_url(server, "/alone")).json() == {}
    assert server.connections == 1


def test_a_failed_connection_leaves_the_client_usable(server: _Server) -> None:
    """Nothing listens on the closed port: the request fails as httpx's own ConnectError, and the client's next
    requests reuse one connection as before."""
    closed = _Server(("127.0.0.1", 0), _KeepAlive)
    port = closed.server_address[1]
    closed.server_close()
    with http_client(None, 10) as client:
        with pytest.raises(httpx.ConnectError):
            client.get(f"http://127.0.0.1:{port}/")
        for _ in range(3):
            assert client.get(_url(server, "/alone")).status_code == 200
    assert server.connections == 1
