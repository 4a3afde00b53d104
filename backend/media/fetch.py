"""Downloading a URL the safe way. Every URL the service downloads goes through here.

The URL first passes the address rules of backend/outbound/guard.py (scheme, no credentials, public
addresses only, the connection pinned to a checked address). Then, each rule with its own message in the
400 `fetch_failed` it raises:

* redirects: never followed; a 3xx is refused, as is any status other than 200;
* time: a connect timeout, a total deadline (a watchdog shuts the socket, so even a server that
  drips its headers byte by byte is cut off), and a minimum transfer rate measured over a window
  (a body slower than ``fetch_min_rate_bytes_s`` over ``fetch_rate_window_s``, or silent that long,
  is cut off);
* size: a cap (128 MB by default), enforced on Content-Length when present and on the bytes actually
  received otherwise (400 `media_too_large`). Bodies go to a temporary file chunk by chunk.

Public API: :func:`fetch_to_file`, :func:`fetch_bytes`, :func:`probe`, :func:`log_policy`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpcore

from backend.config import Settings
from backend.datadir import open_private, private_dir
from backend.errors import ApiError
from backend.media.detect import HEAD_BYTES, Detected, detect_or_none
from backend.media.policy import log_policy  # noqa: F401  (part of this module's API; it lives apart: see there)
from backend.outbound.guard import FetchError, PinnedBackend, Target, check_url, host_header
from backend.outbound.watchdog import Watchdog
from backend.store.instance import address_rule

log = logging.getLogger("socialpub.media.fetch")

MAX_FETCH_BYTES = 128 * 1024 * 1024
USER_AGENT = "socialpub-media-fetcher/1.0"


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


@contextlib.contextmanager
def _open(url: str, settings: Settings):  # type: ignore[no-untyped-def]  # a context manager of httpx's stream, whose generic type httpx does not export
    """Yield (response, guard, started) for a checked URL; the guard enforces the deadlines."""
    target = check_url(url, address_rule(settings))
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
        # the total deadline passed: that is the cause, whether the watchdog or a read timeout ending at the same
        # moment noticed it first (on a loaded machine the read timeout can win the race)
        if self.fired or time.monotonic() - self.started >= self.total:
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
    private_dir(directory)
    path = directory / f"dl-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}.part"
    limit = max_bytes
    try:
        with _open(url, settings) as (response, guard), open_private(path) as out:
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
                    limit = min(limit, sniff(head))  # type: ignore[misc]  # sniff is not None once sniffed is False (set above)
                    if declared is not None and declared > limit:
                        raise FetchTooLarge(limit, declared, declared=True)
                if received > limit:
                    raise FetchTooLarge(limit)
                out.write(chunk)
                guard.progress(received)
            if not sniffed:
                limit = min(limit, sniff(head))  # type: ignore[misc]  # sniff is not None once sniffed is False (set above)
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


def clean_temp(settings: Settings, max_age_s: float) -> int:
    """Remove the fetcher's temporary files older than max_age_s (left by a process that died mid-download)."""
    directory = settings.data_dir / "tmp" / "fetch"
    if not directory.exists():
        return 0
    cutoff = time.time() - max_age_s
    removed = 0
    for p in directory.iterdir():
        with contextlib.suppress(FileNotFoundError):
            if p.stat().st_mtime < cutoff:
                p.unlink()
                removed += 1
    return removed
