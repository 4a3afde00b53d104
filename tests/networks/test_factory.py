"""The adapters' HTTP client (backend/networks/factory.py): a connection of its own for each request in flight,
kept alive and lent to the next request."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest

from backend.networks.factory import http_client
from tests.support.keepalive import KeepAliveServer, closed_port, serving

IN_FLIGHT = 30  # more than httpx's default keep-alive limit (20)


@pytest.fixture
def server() -> Iterator[KeepAliveServer]:
    with serving(together=IN_FLIGHT) as httpd:
        yield httpd


def test_each_request_in_flight_keeps_its_connection_for_the_next(server: KeepAliveServer) -> None:
    """IN_FLIGHT requests under way at once open IN_FLIGHT connections; every later request (as many threads, 5
    each) reuses one of them: none is closed for a keep-alive limit below the concurrency, none opened anew."""
    errors: list[BaseException] = []
    with http_client(None, 10) as client:

        def work() -> None:
            try:
                assert client.get(server.url("/together")).status_code == 200
                for _ in range(5):
                    assert client.get(server.url("/alone")).status_code == 200
            except BaseException as exc:  # noqa: BLE001  # reported by the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(IN_FLIGHT)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert not errors, errors
    assert server.connections == IN_FLIGHT


def test_a_streamed_response_gives_its_connection_back_once_closed(server: KeepAliveServer) -> None:
    with http_client(None, 10) as client:
        for _ in range(3):
            with client.stream("GET", server.url("/alone")) as response:
                assert response.read() == b"{}"
        assert client.get(server.url("/alone")).json() == {}
    assert server.connections == 1


def test_a_failed_connection_leaves_the_client_usable(server: KeepAliveServer) -> None:
    """Nothing listens on the closed port: the request fails as httpx's own ConnectError, and the client's next
    requests reuse one connection as before."""
    port = closed_port()
    with http_client(None, 10) as client:
        with pytest.raises(httpx.ConnectError):
            client.get(f"http://127.0.0.1:{port}/")
        for _ in range(3):
            assert client.get(server.url("/alone")).status_code == 200
    assert server.connections == 1
