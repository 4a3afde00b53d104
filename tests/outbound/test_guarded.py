"""The live networks' SSRF-guarded transport (backend/outbound/guarded.py): a host that comes from a user is resolved
once, every address checked against the address rule, and the socket goes to a checked address. Names are resolved
by a stubbed resolver: nothing is sent off the loopback range, not even to show that it is refused."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from backend.networks import registry
from backend.networks.base import NetworkError
from backend.networks.http import send
from backend.outbound import guard
from backend.outbound.guarded import AddressRefused, GuardedTransport, trusted_hosts
from backend.outbound.rule import AddressRule
from backend.services.adapters import make_adapter, network_client

PUBLIC_ONLY = AddressRule(False)
PRIVATE_TOO = AddressRule(True)


@pytest.fixture
def server() -> Iterator[tuple[int, list[str]]]:
    """A loopback HTTP server recording each request's Host header."""
    hosts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            hosts.append(self.headers.get("host", ""))
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_address[1], hosts
    srv.shutdown()
    srv.server_close()


def resolving(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str]]) -> list[str]:
    """Replace the resolver by `table`; returns the names looked up, in order."""
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        if host not in table:
            raise OSError(f"{host}: no such name in the test's table")
        return table[host]

    monkeypatch.setattr(guard, "RESOLVER", resolve)
    return asked


def test_a_name_resolving_to_a_private_address_is_refused_before_anything_is_sent(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    asked = resolving(monkeypatch, {"social.internal.example": ["10.1.2.3"]})
    with httpx.Client(transport=GuardedTransport(lambda: PUBLIC_ONLY)) as client:
        with pytest.raises(AddressRefused) as refused:
            client.get("https://social.internal.example/api/v2/instance")
    assert refused.value.refusal.rule == "address" and refused.value.refusal.setting == "private-urls"
    assert "10.1.2.3 is a private address" in str(refused.value)
    assert asked == ["social.internal.example"]


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]", "2130706433", "localhost"])
def test_loopback_spellings_are_refused_when_private_addresses_are(monkeypatch, host) -> None:  # type: ignore[no-untyped-def]
    resolving(monkeypatch, {"localhost": ["127.0.0.1"]})
    with httpx.Client(transport=GuardedTransport(lambda: PUBLIC_ONLY)) as client:
        with pytest.raises(AddressRefused):
            client.get(f"http://{host}:9/")


def test_the_socket_goes_to_the_checked_address_while_the_host_header_keeps_the_name(  # type: ignore[no-untyped-def]
    monkeypatch, server
) -> None:
    """`pinned.test` exists only in the stubbed resolver: reaching the server proves the connection went to the
    address the rule checked (no second look-up by the system's resolver)."""
    port, hosts = server
    asked = resolving(monkeypatch, {"pinned.test": ["127.0.0.1"]})
    with httpx.Client(transport=GuardedTransport(lambda: PRIVATE_TOO)) as client:
        r = client.get(f"http://pinned.test:{port}/x")
        again = client.get(f"http://pinned.test:{port}/y")  # kept alive: no new connection, no new look-up
    assert (r.status_code, r.text, again.status_code) == (200, "ok", 200)
    assert hosts == [f"pinned.test:{port}"] * 2
    assert asked == ["pinned.test"]


def test_the_rule_is_read_when_a_connection_opens(monkeypatch, server) -> None:  # type: ignore[no-untyped-def]
    """`socialpub admin private-urls off` in another process applies to the next connection."""
    port, _hosts = server
    resolving(monkeypatch, {"pinned.test": ["127.0.0.1"]})
    rules = [PRIVATE_TOO, PUBLIC_ONLY]
    with httpx.Client(transport=GuardedTransport(lambda: rules[0])) as client:
        assert client.get(f"http://pinned.test:{port}/", headers={"connection": "close"}).status_code == 200
        rules.pop(0)
        with pytest.raises(AddressRefused):
            client.get(f"http://pinned.test:{port}/")


def test_the_networks_configured_hosts_are_trusted_as_configured(monkeypatch, server) -> None:  # type: ignore[no-untyped-def]
    """An operator's own test server (SOCIALPUB_BLUESKY_BASE_URL=http://127.0.0.1:PORT) is reached whatever the
    rule; any other host still passes it."""
    port, hosts = server
    resolving(monkeypatch, {})
    trusted = trusted_hosts([f"http://127.0.0.1:{port}", "https://plc.directory", ""])
    assert trusted == frozenset({"127.0.0.1", "plc.directory"})
    with httpx.Client(transport=GuardedTransport(lambda: PUBLIC_ONLY, trusted)) as client:
        assert client.get(f"http://127.0.0.1:{port}/").status_code == 200
        with pytest.raises(AddressRefused):
            client.get(f"http://localhost:{port}/")
    assert hosts == [f"127.0.0.1:{port}"]


def test_transport_failures_are_httpx_errors_the_adapters_classify(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    resolving(monkeypatch, {"closed.test": ["127.0.0.1"]})
    with httpx.Client(transport=GuardedTransport(lambda: PRIVATE_TOO)) as client:
        with pytest.raises(httpx.ConnectError):
            client.get("http://closed.test:9/")  # the discard port: nobody listens
        with pytest.raises(NetworkError) as retriable:
            send(client, "GET", "http://closed.test:9/", network="Mastodon")
    assert retriable.value.fail_type == "retriable" and retriable.value.code == "connect_error"


def test_a_refused_host_is_a_permanent_failure_that_says_which_setting_decides(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    resolving(monkeypatch, {"social.internal.example": ["192.168.1.20"]})
    with httpx.Client(transport=GuardedTransport(lambda: PUBLIC_ONLY)) as client:
        with pytest.raises(NetworkError) as failed:
            send(client, "POST", "https://social.internal.example/api/v1/statuses", network="Mastodon")
    assert failed.value.fail_type == "permanent" and failed.value.code == "address_refused"
    assert not failed.value.ambiguous
    assert "socialpub admin private-urls on" in failed.value.reason


def test_the_live_clients_of_the_networks_whose_hosts_come_from_users_are_guarded(
    settings, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Mastodon (an instance typed at connect) and Bluesky (a PDS named by a DID document) pass the rule on every
    live call; a network whose hosts are the operator's settings (Facebook's graph.facebook.com) does not."""
    resolving(monkeypatch, {"pds.rebound.example": ["172.16.0.9"]})
    settings.allow_private_urls = False
    for platform in ("mastodon", "bluesky"):
        assert registry.get(platform).user_hosts
        client = make_adapter(platform, settings, live=True).client
        with pytest.raises(AddressRefused):
            client.get("https://pds.rebound.example/xrpc/com.atproto.server.describeServer")
        with pytest.raises(AddressRefused):
            network_client(settings, platform).get("https://pds.rebound.example/")
    assert [n.name for n in registry.networks() if n.user_hosts] == ["bluesky", "mastodon"]
