"""The address rules of every outbound request the service makes on a user's behalf (media fetches, webhook
deliveries, remote generation providers) and of the addresses a live network must reach (SSRF).

* scheme: http or https only; no credentials in the URL;
* address: the host is resolved (numeric spellings such as ``2130706433``, ``0x7f000001`` or ``127.1`` are
  read as the address they stand for) and *every* address must be a global unicast one: loopback, private,
  shared, link-local, multicast, reserved, unspecified, IPv4-mapped IPv6 and 6to4/Teredo wrappers of those
  are refused. The connection then goes to an address that was checked (:class:`PinnedBackend`: no second
  DNS lookup), while the Host header and TLS SNI keep the URL's name.

Whether loopback and private addresses may be reached is one fact of the data dir, the same for every process
opening it (`socialpub admin private-urls on|off`, stored in its database: backend.store.instance), unless
``SOCIALPUB_ALLOW_PRIVATE_URLS`` (1 or 0) overrides it in one process's environment. The caller reads it
(:class:`AddressRule`) and passes it to :func:`check_url`; a refusal says which of the two decided it and how to
change it. Tests replace :data:`RESOLVER` to check the rule on names that would resolve off the loopback range,
without any traffic.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore

from backend.errors import ApiError
from backend.outbound.rule import PRIVATE_URLS_SETTING, AddressRule
from backend.outbound.watchdog import Watchdog

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchError(ApiError):
    """400 fetch_failed: the message names the rule that refused the URL; `setting` names the setting that can
    change that rule (`private-urls` for the address rule), None when none can (a bad scheme, a name that does not
    resolve)."""

    def __init__(self, message: str, rule: str, setting: str | None = None) -> None:
        detail: dict[str, str] = {"rule": rule}
        if setting is not None:
            detail["setting"] = setting
        super().__init__(400, "fetch_failed", message, [detail])
        self.rule = rule
        self.setting = setting


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


def check_url(url: str, rule: AddressRule) -> Target:
    """Apply the scheme and address rules (`rule`: may private addresses be reached); return the addresses to
    connect to."""
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
    if not rule.private_allowed:
        for ip in candidates:
            reason = address_refusal(ip)
            if reason:
                raise FetchError(
                    f"refused by the address rule: {host!r} resolves to {reason}; only public "
                    f"addresses are reached: {rule.how_to_change()}",
                    "address",
                    PRIVATE_URLS_SETTING,
                )
    ordered = list(dict.fromkeys(str(ip) for ip in candidates))
    return Target(url=url, scheme=scheme, host=host, port=port, target=target, addresses=tuple(ordered))


# a socket option as httpcore's NetworkBackend.connect_tcp takes it (level, name, value) or (level, name, None, optlen)
SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


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
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.NetworkStream:
        stream = connect_first(
            lambda address: super(PinnedBackend, self).connect_tcp(
                address, port, timeout, local_address, socket_options
            ),
            self.addresses,
        )
        self.watchdog.watch(stream.get_extra_info("socket"))
        return stream


def connect_first(
    connect: Callable[[str], httpcore.NetworkStream], addresses: Iterable[str]
) -> httpcore.NetworkStream:
    """The stream of the first checked address that takes the connection, in order; the last failure when none
    does (a pinned backend's one way to connect: PinnedBackend here, guarded.GuardedBackend)."""
    last: Exception | None = None
    for address in addresses:
        try:
            return connect(address)
        except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
            last = exc
    if last is None:
        raise httpcore.ConnectError("no address to connect to")
    raise last


def host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"
