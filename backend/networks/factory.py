"""The network adapters, built from plain values: an httpx client, the hosts to call, the network's own settings.

The same adapter serves a live account (a client of the real hosts) and a sandbox account (a client whose
transport is the network's emulator): the adapters know nothing of the sandbox, the store or the services. Each
network's package gives a factory (its registry entry's `adapter`) called with an AdapterContext.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from backend.networks.media_loader import MediaLoader


@dataclass(frozen=True)
class AdapterContext:
    """What a network's adapter factory gets.

    hosts: where its API lives, by role (`api` always; e.g. Facebook's `video`, YouTube's `upload`): the live
    hosts of its settings, or its emulator's `.invalid` hosts. settings: the network's own settings model (its
    LinkedIn version…), None for a network without one. media_loader: the bytes of a media, for the networks
    that upload them. media_by_url: the network is configured (SOCIALPUB_MEDIA_BY_URL) to take a media's URL
    instead of its bytes where it can."""

    client: httpx.Client
    hosts: Mapping[str, str]
    settings: Any = None
    media_loader: MediaLoader | None = None
    media_by_url: bool = False
    # (url, max bytes) -> a web page's bytes through the SSRF-guarded fetcher (a link card's page and picture);
    # raises NetworkError when it cannot be fetched
    page_loader: Callable[[str, int], bytes] | None = None

    def host(self, role: str, default: str | None = None) -> str:
        """The host of `role`, else `default` (else the API host)."""
        return self.hosts.get(role) or default or self.hosts["api"]


class _Lent(httpx.SyncByteStream):
    """A response's body read from a lent transport: closing it gives the transport back."""

    def __init__(self, stream: Any, give_back: Callable[[], None]) -> None:
        self._stream = stream
        self._give_back: Callable[[], None] | None = give_back

    def __iter__(self) -> Iterator[bytes]:
        yield from self._stream

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            give_back, self._give_back = self._give_back, None
            if give_back is not None:
                give_back()


class LentConnections(httpx.BaseTransport):
    """The adapters' transport: httpx's own, one per request in flight, each keeping its connection alive; a
    request borrows the one given back last (a list's pop and append under a lock) and gives it back when its
    response is closed.

    One client serves a network for every thread of the worker (up to its lane cap at once, 64 by default). With
    one shared pool, each request scanned every connection and queued request under the pool's lock, and the
    pool kept at most 20 connections alive for up to 64 requests in flight: the others were closed once a busy
    moment passed and opened again at the next (in the burst, 0.7 new connections a target of 4.8 requests; on a
    real network each a TLS handshake). Here nothing is scanned, and the connections kept are as many as the
    requests that were in flight at once — bounded by the worker's per-network concurrency, with no setting of
    their own. Idle ones close after httpx's keep-alive expiry (5 s), as before."""

    def __init__(self) -> None:
        self._ssl = httpx.create_ssl_context(trust_env=False)  # one for all: loading one costs ~25 ms
        self._free: list[httpx.HTTPTransport] = []
        self._lock = threading.Lock()
        self._closed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            transport = self._free.pop() if self._free else None
        if transport is None:
            transport = httpx.HTTPTransport(
                verify=self._ssl, trust_env=False, limits=httpx.Limits(max_keepalive_connections=2)
            )
        try:
            response = transport.handle_request(request)
        except BaseException:
            self._give_back(transport)
            raise
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Lent(response.stream, lambda: self._give_back(transport)),
            extensions=response.extensions,
        )

    def _give_back(self, transport: httpx.HTTPTransport) -> None:
        with self._lock:
            if not self._closed:
                self._free.append(transport)
                return
        transport.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            free, self._free = self._free, []
        for transport in free:
            transport.close()


def http_client(transport: httpx.BaseTransport | None, timeout_s: float) -> httpx.Client:
    """The adapters' client: no proxies from the environment, no redirects (a network never needs one); without a
    transport of its own (an emulator in process, the SSRF-guarded one), a kept-alive connection for each request
    in flight (LentConnections)."""
    return httpx.Client(
        transport=transport or LentConnections(), timeout=timeout_s, trust_env=False, follow_redirects=False
    )
