"""Embedded mode: the backend's ASGI app in this process, with a job worker alongside.

The one front-end module that starts the backend, and it does so only through the backend's public entry
point `backend.operator.embedded` (the app, an operator session minted from the data dir, the worker); from
then on it speaks /v1 over an httpx transport like any remote client. Whoever can read the data dir is the
operator: key management and account connection work without a login, and the per-key rate limit does not apply.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from backend.operator import embedded as backend_embedded
from socialpub_tui.client.errors import ConfigError

BASE_URL = "http://embedded.socialpub"
POLL_INTERVAL_S = 0.5


class Embedded:
    """The in-process backend as the client sees it: an ASGI app, a token source, a stop."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.app = backend.app

    def mint_token(self) -> str:
        try:
            return str(self.backend.mint_token())
        except backend_embedded.NotInitialised as exc:
            raise ConfigError(str(exc), code="not_initialised") from None

    def start_worker(self) -> None:
        """Start the worker (a thread of this process) if it is not running yet."""
        self.backend.start_worker()

    def stop(self) -> None:
        """Stop the worker after the publishing work due now or in a few seconds (bounded)."""
        self.backend.stop()


def start(data_dir: Path | None = None, *, settings: Any = None, worker: bool = True) -> Embedded:
    """Start the backend in-process on `data_dir` (ConfigError `not_initialised` when there is none)."""
    try:
        return Embedded(backend_embedded.start(data_dir, settings=settings, worker=worker))
    except backend_embedded.NotInitialised as exc:
        raise ConfigError(str(exc), code="not_initialised") from None


class SyncASGITransport(httpx.BaseTransport):
    """A synchronous transport over an ASGI app: requests run on an event loop in a helper thread
    (an anyio blocking portal), so a plain `httpx.Client` can call the app in-process."""

    def __init__(self, app: Any) -> None:
        from anyio.from_thread import start_blocking_portal

        self._asgi = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        self._stack = contextlib.ExitStack()
        self._portal = self._stack.enter_context(start_blocking_portal())
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        forwarded = httpx.Request(request.method, request.url, headers=request.headers, content=body)

        async def send() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            response = await self._asgi.handle_async_request(forwarded)
            content = await response.aread()
            return response.status_code, response.headers.raw, content

        status, headers, content = self._portal.call(send)
        return httpx.Response(status, headers=headers, content=content, request=request)

    def close(self) -> None:
        with self._lock:
            self._stack.close()


def client_kwargs(
    data_dir: Path | None = None, *, settings: Any = None, worker: bool = True, asynchronous: bool = False
) -> dict[str, Any]:
    """Keyword arguments for Client / AsyncClient talking to an in-process backend.

    With `worker`, the Client's worker starts with the backend (a CLI command may enqueue work at once); the
    AsyncClient's (the TUI's) when the app calls `AsyncClient.ready()` once its first screen is drawn: the worker's
    start (importing the job handlers, its first claims) is no part of the launch. The same worker either way; a
    Client made without it starts it at `Client.ready()`."""
    emb = start(data_dir, settings=settings, worker=worker and not asynchronous)
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport
    extra: dict[str, Any] = {}
    if asynchronous:
        transport = httpx.ASGITransport(app=emb.app, raise_app_exceptions=False)
        on_close: Callable[[], None] = emb.stop
        if worker:
            extra["on_ready"] = emb.start_worker
    else:
        sync_transport = SyncASGITransport(emb.app)
        transport = sync_transport
        extra["on_ready"] = emb.start_worker  # a client made without the worker starts it when asked

        def on_close() -> None:
            emb.stop()
            sync_transport.close()

    try:
        token = emb.mint_token()
    except ConfigError:
        on_close()
        raise
    return {
        "base_url": BASE_URL,
        "transport": transport,
        "session_token": token,
        "token_refresh": emb.mint_token,
        "embedded": True,
        "poll_interval": POLL_INTERVAL_S,
        "on_close": on_close,
        **extra,
    }
