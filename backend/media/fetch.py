"""Fetching a URL the safe way. Every URL the service downloads goes through here.

Rules, each with its own message in the 400 `fetch_failed` it raises:

* scheme: http or https only; no credentials in the URL;
* address (SSRF): the host is resolved (numeric spellings such as ``2130706433``, ``0x7f000001`` or
  ``127.1`` are read as the address they stand for) and *every* address must be a global unicast
  one: loopback, private, shared, link-local, multicast, reserved, unspecified, IPv4-mapped IPv6 and
  6to4/Teredo wrappers of those are refused. The connection then goes to an address that was
  checked (pinned: no second DNS lookup), while the Host header and TLS SNI keep the URL's name;
* redirects: never followed; a 3xx is refused, as is any status other than 200;
* time: a connect timeout, a total deadline (a watchdog shuts the socket, so even a server that
  drips its headers byte by byte is cut off), and a minimum transfer rate measured over a window
  (a body slower than ``fetch_min_rate_bytes_s`` over ``fetch_rate_window_s``, or silent that long,
  is cut off);
* size: a cap (128 MB by default), enforced on Content-Length when present and on the bytes actually
  received otherwise (400 `media_too_large`). Bodies go to a temporary file chunk by chunk.

``SOCIALPUB_ALLOW_PRIVATE_URLS=1`` lifts the address rule only (development and tests), and
:func:`log_policy` says so in the log at start.

Public API: :func:`fetch_to_file`, :func:`fetch_bytes`, :func:`probe`, :func:`check_url`, :class:`PinnedBackend`
(webhook delivery connects through it too), :func:`host_header`,
:func:`address_refusal`, :func:`log_policy`. Tests replace :data:`RESOLVER` to check the address
rule on names that would resolve off the loopback range, without sending any traffic.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpcore

from backend.config import Settings
from backend.errors import ApiError
from backend.media.detect import HEAD_BYTES, Detected, detect_or_none
from backend.media.policy import log_policy  # noqa: F401  (part of this module's API; it lives apart: see there)
from backend.networks.watchdog import Watchdog

log = logging.getLogger("socialpub.media.fetch")

MAX_FETCH_BYTES = 128 * 1024 * 1024
USER_AGENT = "socialpub-media-fetcher/1.0"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchError(ApiError):
    """400 fetch_failed: the message names the rule that refused the URL."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(400, "fetch_failed", message, [{"rule": rule}])
        self.rule = rule


class FetchTooLarge(ApiError):
    """400 media_too_large: the body is over the cap (declared or counted)."""

    def __init__(self, limit: int, seen: int | None = None, declared: bool = False) -> None:
        how = "declares" if declared else "sent more than"
        amount = f"{seen} bytes" if declared and seen is not None else f"{limit} bytes"
        super().__init__(
            400,
            "media_too_large",
            f"the remote file {how} {amount}; the limit is {limit} bytes",
            [{"limit": "bytes", "max": limit}],
        )
        self.limit = limit


def _system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


# (host, port) -> addresses. Replace in tests to check the address rule without any traffic.
RESOLVER: Callable[[str, int], list[str]] = _system_resolve

_NUMERIC_V4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)


def parse_host_literal(host: str) -> IPAddress | None:
    """The address a host string stands for when it is a literal: dotted, decimal, octal, hex or IPv6."""
    h = host.strip("[]")
    try:
        return ipaddress.ip_address(h.split("%", 1)[0])
    except ValueError:
        pass
    if _NUMERIC_V4.match(h):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def host_is_local(host: str, *, private: bool = False) -> bool:
    """Whether a URL's host names this machine — `localhost`, `*.localhost` or a loopback literal — or, with
    `private`, any address that is not public (address_refusal). Literals only: no DNS look-up."""
    h = host.lower().rstrip(".")
    if h == "localhost" or h.endswith(".localhost"):
        return True
    ip = parse_host_literal(h) if h else None
    if ip is None:
        return False
    return address_refusal(ip) is not None if private else ip.is_loopback


def address_refusal(ip: IPAddress) -> str | None:
    """Why this address may not be fetched, or None when it is a global unicast address."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return f"{ip} is an IPv4-mapped IPv6 address"
        for embedded in (ip.sixtofour, ip.teredo[1] if ip.teredo else None):
            if embedded is not None and address_refusal(embedded):
                return f"{ip} wraps the non-public address {embedded}"
    checks = (
        ("is_loopback", "a loopback address"),
        ("is_unspecified", "the unspecified address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    )
    for attr, label in checks:
        if getattr(ip, attr):
            return f"{ip} is {label}"
    if not ip.is_global:
        return f"{ip} is not a public (global) address"
    return None


def not_public(url: str) -> str | None:
    """Why the internet could not reach `url` (its host is loopback, private, link-local… or `localhost`), or None
    when it can as far as we can tell (a public address, or a name that does not resolve here: a split-horizon
    name may still be public). Used for the addresses a live network must fetch media from."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
        port = urlsplit(url).port or 443
    except ValueError:
        return None
    if not host:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return f"{host} is this machine"
    literal = parse_host_literal(host)
    if literal is not None:
        return address_refusal(literal)
    try:
        resolved = RESOLVER(host.encode("idna").decode("ascii"), port)
    except (OSError, UnicodeError):
        return None
    reasons = []
    for raw in resolved:
        try:
            reasons.append(address_refusal(ipaddress.ip_address(raw.split("%", 1)[0])))
        except ValueError:
            continue
    if reasons and all(reasons):
        return f"{host} resolves to {reasons[0]}"
    return None


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # as written in the URL (no brackets), used for Host and SNI
    port: int
    target: str  # path + query
    addresses: tuple[str, ...]  # checked, in connection order


def check_url(url: str, settings: Settings) -> Target:
    """Apply the scheme and address rules; return the addresses to connect to."""
    if not isinstance(url, str) or not url.strip():
        raise FetchError("the URL is empty", "scheme")
    url = url.strip()
    if any(c in url for c in "\r\n\t ") or len(url) > 4096:
        raise FetchError("the URL contains whitespace or is too long", "scheme")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise FetchError(f"the URL cannot be parsed: {exc}", "scheme") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(f"only http and https URLs are fetched (got {scheme or 'no scheme'!r})", "scheme")
    if parts.username is not None or parts.password is not None:
        raise FetchError("credentials in the URL are not accepted", "scheme")
    host = parts.hostname or ""
    if not host:
        raise FetchError("the URL has no host", "scheme")
    port = port or (443 if scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    literal = parse_host_literal(host)
    if literal is not None:
        candidates = [literal]
    else:
        try:
            ascii_host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise FetchError(f"the host name {host!r} is not valid", "dns") from exc
        try:
            resolved = RESOLVER(ascii_host, port)
        except (OSError, UnicodeError) as exc:
            raise FetchError(f"the host {host!r} could not be resolved ({exc})", "dns") from exc
        candidates = []
        for raw in resolved:
            try:
                candidates.append(ipaddress.ip_address(raw.split("%", 1)[0]))
            except ValueError:
                continue
        if not candidates:
            raise FetchError(f"the host {host!r} resolved to no usable address", "dns")
        host = ascii_host
    if not settings.allow_private_urls:
        for ip in candidates:
            reason = address_refusal(ip)
            if reason:
                raise FetchError(
                    f"refused by the address rule: {host!r} resolves to {reason}; only public "
                    "addresses are fetched",
                    "address",
                )
    ordered = list(dict.fromkeys(str(ip) for ip in candidates))
    return Target(url=url, scheme=scheme, host=host, port=port, target=target, addresses=tuple(ordered))


class PinnedBackend(httpcore.SyncBackend):
    """Connects to the checked addresses whatever host the URL names; tells its watchdog of each socket (the
    whole exchange's deadline: backend/networks/watchdog.py)."""

    def __init__(self, addresses: Iterable[str], watchdog: Watchdog) -> None:
        self.addresses = list(addresses)
        self.watchdog = watchdog

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple] | None = None,
    ) -> httpcore.NetworkStream:  # type: ignore[override]
        last: Exception | None = None
        for address in self.addresses:
            try:
                stream = super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
                continue
            self.watchdog.watch(stream.get_extra_info("socket"))
            return stream
        assert last is not None
        raise last


@dataclass
class FetchedFile:
    """A body downloaded to a temporary file. The caller owns the file (`discard()` when done)."""

    url: str
    path: Path
    size: int
    head: bytes
    content_type: str | None
    detected: Detected | None = field(default=None)

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"


@contextlib.contextmanager
def _open(url: str, settings: Settings):  # type: ignore[no-untyped-def]
    """Yield (response, guard, started) for a checked URL; the guard enforces the deadlines."""
    target = check_url(url, settings)
    guard = _Guard(settings)
    backend = PinnedBackend(target.addresses, guard.watchdog)
    pool = httpcore.ConnectionPool(network_backend=backend, max_connections=1, retries=0)
    req_url = httpcore.URL(
        scheme=target.scheme.encode(),
        host=target.host.encode("ascii"),
        port=target.port,
        target=target.target.encode("utf-8", "surrogateescape"),
    )
    headers = [
        (b"Host", host_header(target).encode("ascii")),
        (b"User-Agent", USER_AGENT.encode()),
        (b"Accept", b"*/*"),
        (b"Accept-Encoding", b"identity"),
        (b"Connection", b"close"),
    ]
    read_timeout = max(0.05, min(settings.fetch_rate_window_s, settings.fetch_total_timeout_s))
    timeouts = {
        "connect": settings.fetch_connect_timeout_s,
        "read": read_timeout,
        "write": settings.fetch_connect_timeout_s,
        "pool": settings.fetch_connect_timeout_s,
    }
    guard.start()
    try:
        try:
            with pool.stream("GET", req_url, headers=headers, extensions={"timeout": timeouts}) as response:
                _check_status(response, target)
                yield response, guard
        except ApiError:
            raise
        except Exception as exc:  # noqa: BLE001  (mapped to the rule that explains it)
            raise guard.explain(exc, read_timeout) from exc
    finally:
        guard.stop()
        with contextlib.suppress(Exception):
            pool.close()


def _check_status(response: httpcore.Response, target: Target) -> None:
    status = response.status
    if 300 <= status < 400:
        location = _header(response, b"location") or "?"
        raise FetchError(
            f"redirects are not followed: the server answered HTTP {status} to {location[:200]}; "
            "give the final address",
            "redirect",
        )
    if status != 200:
        raise FetchError(f"the server answered HTTP {status} for {target.url[:200]}", "status")


def _header(response: httpcore.Response, name: bytes) -> str | None:
    for key, value in response.headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class _Guard:
    """Total deadline (watchdog) and minimum-rate window."""

    def __init__(self, settings: Settings) -> None:
        self.total = settings.fetch_total_timeout_s
        self.window = settings.fetch_rate_window_s
        self.min_rate = settings.fetch_min_rate_bytes_s
        self.connect = settings.fetch_connect_timeout_s
        self.watchdog = Watchdog(self.total)
        self.started = time.monotonic()
        self._mark_t = self.started
        self._mark_b = 0

    def start(self) -> None:
        self.started = time.monotonic()
        self._mark_t = self.started
        self.watchdog.start()

    @property
    def fired(self) -> bool:
        return self.watchdog.fired

    def stop(self) -> None:
        self.watchdog.stop()

    def body_started(self) -> None:
        self._mark_t = time.monotonic()
        self._mark_b = 0

    def progress(self, received: int) -> None:
        now = time.monotonic()
        if self.fired or now - self.started > self.total:
            raise self._total_error()
        elapsed = now - self._mark_t
        if elapsed >= self.window:
            rate = (received - self._mark_b) / elapsed
            if rate < self.min_rate:
                raise FetchError(
                    f"the server is too slow: {rate:.0f} bytes/s over {elapsed:.1f} s, below the "
                    f"minimum of {self.min_rate} bytes/s",
                    "slow",
                )
            self._mark_t, self._mark_b = now, received

    def _total_error(self) -> FetchError:
        return FetchError(f"the download took longer than the total timeout of {self.total:g} s", "timeout")

    def explain(self, exc: Exception, read_timeout: float) -> ApiError:
        if self.fired:
            return self._total_error()
        if isinstance(exc, httpcore.ConnectTimeout):
            return FetchError(f"connecting timed out after {self.connect:g} s", "timeout")
        if isinstance(exc, httpcore.ReadTimeout):
            return FetchError(f"the server sent nothing for {read_timeout:g} s (timed out)", "timeout")
        if isinstance(exc, httpcore.ConnectError):
            return FetchError(f"could not connect: {exc or 'connection refused'}", "connect")
        if isinstance(exc, httpcore.TimeoutException):
            return FetchError(f"timed out: {exc}", "timeout")
        return FetchError(f"the connection failed: {type(exc).__name__}: {exc}", "connect")


def fetch_to_file(
    url: str,
    settings: Settings,
    max_bytes: int = MAX_FETCH_BYTES,
    *,
    sniff: Callable[[bytes], int] | None = None,
    dest_dir: Path | None = None,
) -> FetchedFile:
    """Download `url` under every rule above into a temporary file (data_dir/tmp/fetch by default).

    `sniff(head)` is called once with the first bytes (up to 4096, fewer at end of file); it may raise
    (e.g. unsupported type) or return a smaller byte limit for what it saw (e.g. 20 MB for an image).
    Raises FetchError (400 fetch_failed) or FetchTooLarge (400 media_too_large).
    """
    directory = dest_dir or (settings.data_dir / "tmp" / "fetch")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"dl-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}.part"
    limit = max_bytes
    try:
        with _open(url, settings) as (response, guard), open(path, "wb") as out:
            declared = _content_length(response)
            if declared is not None and declared > limit:
                raise FetchTooLarge(limit, declared, declared=True)
            received = 0
            head = b""
            sniffed = sniff is None
            guard.body_started()
            for chunk in response.iter_stream():
                received += len(chunk)
                if len(head) < HEAD_BYTES:
                    head += chunk[: HEAD_BYTES - len(head)]
                if not sniffed and len(head) >= HEAD_BYTES:
                    sniffed = True
                    limit = min(limit, sniff(head))  # type: ignore[misc]
                    if declared is not None and declared > limit:
                        raise FetchTooLarge(limit, declared, declared=True)
                if received > limit:
                    raise FetchTooLarge(limit)
                out.write(chunk)
                guard.progress(received)
            if not sniffed:
                limit = min(limit, sniff(head))  # type: ignore[misc]
                if received > limit:
                    raise FetchTooLarge(limit)
            if declared is not None and received < declared:
                raise FetchError(
                    f"the server closed the connection after {received} of {declared} bytes", "connect"
                )
            out.flush()
            os.fsync(out.fileno())  # the file may be renamed straight into storage
            content_type = _header(response, b"content-type")
        return FetchedFile(
            url=url,
            path=path,
            size=received,
            head=head,
            content_type=content_type,
            detected=detect_or_none(head),
        )
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        raise


def fetch_bytes(url: str, settings: Settings, max_bytes: int) -> bytes:
    """Small downloads (at most `max_bytes`) straight into memory, under the same rules."""
    with _open(url, settings) as (response, guard):
        declared = _content_length(response)
        if declared is not None and declared > max_bytes:
            raise FetchTooLarge(max_bytes, declared, declared=True)
        buf = bytearray()
        guard.body_started()
        for chunk in response.iter_stream():
            buf += chunk
            if len(buf) > max_bytes:
                raise FetchTooLarge(max_bytes)
            guard.progress(len(buf))
        return bytes(buf)


def probe(url: str, settings: Settings) -> Detected | None:
    """Fetch only the first bytes of `url` and detect its type (None: reachable but not a known type).

    Raises FetchError when the URL is refused or unreachable. The body is not downloaded further.
    """
    with _open(url, settings) as (response, guard):
        head = b""
        guard.body_started()
        for chunk in response.iter_stream():
            head += chunk
            if len(head) >= HEAD_BYTES:
                break
            guard.progress(len(head))
        return detect_or_none(head[:HEAD_BYTES])


def _content_length(response: httpcore.Response) -> int | None:
    value = _header(response, b"content-length")
    if value is None:
        return None
    try:
        n = int(value.strip())
    except ValueError:
        return None
    return n if n >= 0 else None
