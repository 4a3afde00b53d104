"""One signed request to a receiver: through the address rule of backend/outbound/guard.py (checked at every
attempt, since DNS and the data dir's setting can change; the connection goes to the checked address), redirects never followed, the whole
request bounded by `webhook_timeout_s`, at most 64 KiB of the answer read."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import httpcore

from backend.config import Settings
from backend.outbound.guard import FetchError, PinnedBackend, check_url, host_header
from backend.outbound.retry_after import parse_retry_after
from backend.outbound.rule import AddressRule
from backend.outbound.watchdog import Watchdog

USER_AGENT = "socialpub-webhooks/1.0"
ANSWER_BYTES = 64 * 1024


@dataclass(frozen=True)
class Answer:
    """What one attempt got: the receiver's status (None when none came), its Retry-After in seconds, what went
    wrong (None on a 2xx) and how long it took. `refused`: the address or scheme rule refused the URL (retrying
    cannot help); `setting`: the setting that decides that refusal (`private-urls`), None when none can change it
    (a bad scheme): the endpoint is then not at fault."""

    status_code: int | None
    duration_ms: int
    error: str | None = None
    retry_after_s: float | None = None
    refused: bool = False
    setting: str | None = None

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(url: str, body: bytes, headers: dict[str, str], settings: Settings, rule: AddressRule) -> Answer:
    """One attempt under the address rule `rule` (what this process applies now: backend.store.instance)."""
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        target = check_url(url, rule)
    except FetchError as exc:
        return Answer(
            None,
            took(),
            exc.message if exc.message.startswith("refused") else f"refused: {exc.message}",
            refused=exc.rule in ("scheme", "address"),
            setting=exc.setting,
        )
    timeout = settings.webhook_timeout_s
    watchdog = Watchdog(timeout)
    backend = PinnedBackend(target.addresses, watchdog)
    pool = httpcore.ConnectionPool(network_backend=backend, max_connections=1, retries=0)
    request_url = httpcore.URL(
        scheme=target.scheme.encode(),
        host=target.host.encode("ascii"),
        port=target.port,
        target=target.target.encode("utf-8", "surrogateescape"),
    )
    sent = [
        (b"Host", host_header(target).encode("ascii")),
        (b"User-Agent", USER_AGENT.encode()),
        (b"Content-Type", b"application/json"),
        (b"Connection", b"close"),
        *((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()),
    ]
    watchdog.start()
    try:
        with pool.stream(
            "POST",
            request_url,
            headers=sent,
            content=body,
            extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)},
        ) as response:
            read = 0
            for chunk in response.iter_stream():
                read += len(chunk)
                if read >= ANSWER_BYTES:
                    break
            status = response.status
            retry_after = next(
                (v.decode("latin-1") for k, v in response.headers if k.lower() == b"retry-after"), None
            )
    except Exception as exc:  # noqa: BLE001  (every way a request can fail is an attempt's error)
        if watchdog.fired or isinstance(
            exc, httpcore.TimeoutException
        ):  # the watchdog, or a phase's own timeout
            return Answer(None, took(), f"timed out after {timeout:g} s")
        if isinstance(exc, httpcore.ConnectError):
            return Answer(None, took(), f"could not connect: {exc or 'connection refused'}")
        return Answer(None, took(), f"the request failed: {type(exc).__name__}: {exc}")
    finally:
        watchdog.stop()
        with contextlib.suppress(Exception):
            pool.close()
    if 200 <= status < 300:
        return Answer(status, took())
    if 300 <= status < 400:
        error = f"HTTP {status}: redirects are not followed"
    else:
        error = f"HTTP {status}"
    return Answer(status, took(), error, retry_after_s=parse_retry_after(retry_after))
