"""The HTTP transport of the live networks whose hosts come from users (SSRF): a Mastodon instance typed at connect,
a Bluesky PDS named by a handle's DID document.

Each new connection's host is resolved once and every address it stands for must pass the data dir's address
rule (backend/outbound/guard.py: public addresses only, unless `socialpub admin private-urls on` or
SOCIALPUB_ALLOW_PRIVATE_URLS=1); the socket then goes to one of those checked addresses (no second DNS look-up,
so a name cannot resolve to a public address for the check and to this machine's network for the call), while
the Host header, TLS SNI and the certificate check keep the URL's name. The hosts the operator configured for the
network (its settings' live hosts, e.g. an own test PDS) are trusted as configured.

httpx's own transport takes no network backend, so this one drives httpcore's connection pool (what httpx's
transport does inside) and maps httpcore's errors to httpx's, which the adapters classify
(backend/networks/http.py). A refused host raises :class:`AddressRefused` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from urllib.parse import urlsplit

import httpcore
import httpx

from backend.outbound.guard import FetchError, SocketOption, check_url, connect_first
from backend.outbound.rule import AddressRule

# httpcore's errors as httpx's (the most specific class of the raised error's MRO wins)
_ERRORS: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.ProtocolError: httpx.ProtocolError,
}


class AddressRefused(httpx.TransportError):
    """The address rule refused a live network's host: nothing was sent. `refusal` says which rule and which
    setting can change it."""

    def __init__(self, refusal: FetchError, request: httpx.Request) -> None:
        super().__init__(refusal.message, request=request)
        self.refusal = refusal


def _mapped(exc: Exception, request: httpx.Request) -> Exception:
    if isinstance(exc, FetchError):
        return AddressRefused(exc, request)
    for cls in type(exc).__mro__:
        if cls in _ERRORS:
            return _ERRORS[cls](str(exc), request=request)
    return exc


def _name(host: str) -> str:
    return host.lower().rstrip(".").strip("[]")


def trusted_hosts(configured: Iterable[str]) -> frozenset[str]:
    """The host names of a network's configured live hosts (URLs, or `host[:port]`)."""
    names = set()
    for value in configured:
        if not value:
            continue
        name = urlsplit(value if "://" in value else f"//{value}").hostname
        if name:
            names.add(_name(name))
    return frozenset(names)


class GuardedBackend(httpcore.SyncBackend):
    """Connects only to addresses the rule lets socialpub reach (the trusted hosts as they resolve)."""

    def __init__(self, rule: Callable[[], AddressRule], trusted: frozenset[str]) -> None:
        self.rule = rule
        self.trusted = trusted

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        if _name(host) in self.trusted:
            return super().connect_tcp(host, port, timeout, local_address, socket_options)
        literal = f"[{host}]" if ":" in host else host
        addresses = check_url(f"http://{literal}:{port}/", self.rule()).addresses  # FetchError when refused
        return connect_first(
            lambda address: super(GuardedBackend, self).connect_tcp(
                address, port, timeout, local_address, socket_options
            ),
            addresses,
        )


class _Body(httpx.SyncByteStream):
    def __init__(self, response: httpcore.Response, request: httpx.Request) -> None:
        self.response = response
        self.request = request

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self.response.iter_stream()
        except Exception as exc:  # noqa: BLE001 (httpcore's errors, as httpx's)
            raise _mapped(exc, self.request) from exc

    def close(self) -> None:
        self.response.close()


class GuardedTransport(httpx.BaseTransport):
    """httpx's transport for hosts that come from users: see the module's docstring."""

    def __init__(
        self,
        rule: Callable[[], AddressRule],
        trusted: frozenset[str] = frozenset(),
        *,
        max_connections: int = 100,
        max_keepalive_connections: int = 20,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self.pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive_connections,
            keepalive_expiry=keepalive_expiry,
            network_backend=GuardedBackend(rule, trusted),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            response = self.pool.handle_request(core)
        except Exception as exc:  # noqa: BLE001 (httpcore's errors, as httpx's)
            raise _mapped(exc, request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response, request),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self.pool.close()
