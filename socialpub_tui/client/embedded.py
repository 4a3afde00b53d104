"""Embedded mode: the backend's ASGI app in this process, with a job worker alongside.

The only front-end module that imports the backend's application, store and services. Whoever can read the
data dir is the operator: the client authenticates with an operator session minted from the data dir, so key
management and account connection work without a login, and the per-key rate limit does not apply.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from socialpub_tui.client.errors import ConfigError

log = logging.getLogger("socialpub.client.embedded")

BASE_URL = "http://embedded.socialpub"
POLL_INTERVAL_S = 0.5


def load_settings(data_dir: Path | None = None) -> Any:
    from backend.config import Settings

    return Settings(data_dir=data_dir) if data_dir is not None else Settings()


def _check_initialised(settings: Any) -> None:
    from backend.services import security

    if settings.secret_key is None and not security.secret_path(settings).exists():
        raise ConfigError(f"no socialpub data in {settings.data_dir}: run `socialpub init --sandbox` first, "
                          "or point the CLI at a server (SOCIALPUB_API_URL, or a profile)", code="not_initialised")


DRAIN_S = 15.0  # longest an embedded command lingers to finish due publishing work
DRAIN_HORIZON_S = 3.0  # work due within this many seconds (e.g. a sandbox confirmation) is waited for


@dataclass
class Embedded:
    """The pieces a client needs: a token source, the ASGI app, and what to stop on close."""

    settings: Any
    app: Any
    worker: Any | None

    def mint_token(self) -> str:
        from backend.services import bootstrap

        try:
            return bootstrap.owner_session(self.settings, operator=True)
        except (LookupError, RuntimeError) as exc:
            raise ConfigError(f"{exc}", code="not_initialised") from None

    def stop(self, drain_s: float = DRAIN_S) -> None:
        """Stop the worker — after letting it finish the publishing work that is due now or in the next
        few seconds (bounded by `drain_s`; Ctrl-C leaves the rest to `socialpub tick`, `serve` or `worker`),
        so that a post created by a CLI command does not sit in `processing` once the command ends."""
        if self.worker is None:
            return
        worker, self.worker = self.worker, None
        try:
            if drain_s > 0:
                _drain(self.settings, drain_s)
        except KeyboardInterrupt:
            pass
        finally:
            worker.stop(timeout=5.0)


def _pending_work(horizon_s: float) -> int:
    from datetime import timedelta

    from backend import clock
    from backend.store.models import Job

    limit = clock.now() + timedelta(seconds=horizon_s)
    return (Job.select().where(
        (((Job.status == "queued") & (Job.run_at <= limit)) | (Job.status == "running"))
        & ~(Job.dedupe_key.startswith("periodic:"))).count())


def _drain(settings: Any, drain_s: float) -> None:
    import sys
    import time

    deadline = time.monotonic() + drain_s
    noted = False
    while time.monotonic() < deadline:
        pending = _pending_work(DRAIN_HORIZON_S)
        if not pending:
            return
        if not noted and sys.stderr.isatty():  # scripts read stderr for JSON errors: stay quiet there
            print(f"sending {pending} due publishing job(s) before exiting (Ctrl-C leaves them to "
                  "`socialpub tick`, `serve` or `worker`)…", file=sys.stderr)
            noted = True
        time.sleep(0.1)


def start(data_dir: Path | None = None, *, settings: Any = None, worker: bool = True) -> Embedded:
    """Bind the store, build the app, start a worker thread (so scheduled posts go out while we run)."""
    settings = settings or load_settings(data_dir)
    _check_initialised(settings)
    from backend.api.app import create_app

    try:
        app = create_app(settings, run_worker=False)
    except RuntimeError as exc:
        raise ConfigError(str(exc), code="not_initialised") from None
    running = None
    if worker:
        from backend.jobs.worker import Worker

        running = Worker(settings, name="embedded")
        running.start_thread()
    return Embedded(settings, app, running)


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


def client_kwargs(data_dir: Path | None = None, *, settings: Any = None, worker: bool = True,
                  asynchronous: bool = False) -> dict[str, Any]:
    """Keyword arguments for Client / AsyncClient talking to an in-process backend."""
    emb = start(data_dir, settings=settings, worker=worker)
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport
    if asynchronous:
        transport = httpx.ASGITransport(app=emb.app, raise_app_exceptions=False)
        on_close: Callable[[], None] = emb.stop
    else:
        sync_transport = SyncASGITransport(emb.app)
        transport = sync_transport

        def on_close() -> None:
            emb.stop()
            sync_transport.close()

    try:
        token = emb.mint_token()
    except ConfigError:
        on_close()
        raise
    return {"base_url": BASE_URL, "transport": transport, "session_token": token, "token_refresh": emb.mint_token,
            "embedded": True, "poll_interval": POLL_INTERVAL_S, "on_close": on_close}
