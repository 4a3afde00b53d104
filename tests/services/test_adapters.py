"""The adapters' HTTP clients (backend/services/adapters.py): their requests and new connections counted when
SOCIALPUB_COUNT_STEPS is on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from backend.services import adapters
from backend.store.db import STEPS


class _KeepAlive(BaseHTTPRequestHandler):
    """Answers every GET with 200 and keeps the connection open (HTTP/1.1), like a network's API."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A keep-alive HTTP server on loopback; its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _KeepAlive)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_count_steps_counts_the_connections_requests_open(settings, monkeypatch, server):  # type: ignore[no-untyped-def]
    """Three requests one after another on one client reuse the connection the first opened: 3 requests, 1
    connection; a trace the caller gives (the token refresh's watchdog) still sees every event."""
    monkeypatch.setattr(settings, "count_steps", True)
    monkeypatch.setattr(STEPS, "enabled", True)
    seen: list[str] = []
    before = STEPS.snapshot()
    with adapters.network_client(settings, "facebook") as client:
        client.get(f"{server}/a")
        client.get(f"{server}/b", extensions={"trace": lambda event, _info: seen.append(event)})
        client.get(f"{server}/c")
    after = STEPS.snapshot()
    assert after["network_requests"] - before["network_requests"] == 3
    assert after["network_connections"] - before["network_connections"] == 1
    assert "http11.send_request_headers.complete" in seen  # the caller's trace, chained
    assert "connection.connect_tcp.complete" not in seen  # its request reused the kept connection


def test_without_count_steps_no_connection_is_counted(settings, monkeypatch, server):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(STEPS, "enabled", False)
    before = STEPS.snapshot()
    with adapters.network_client(settings, "facebook") as client:
        client.get(f"{server}/a")
    assert STEPS.snapshot() == before
