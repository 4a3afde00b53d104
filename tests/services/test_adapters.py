"""The adapters' HTTP clients (backend/services/adapters.py): their requests and new connections counted when
SOCIALPUB_COUNT_STEPS is on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backend.services import adapters
from backend.store.db import STEPS
from tests.support.keepalive import serving


@pytest.fixture
def server() -> Iterator[str]:
    """A keep-alive HTTP server on loopback; its base URL."""
    with serving() as httpd:
        yield httpd.url()


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
