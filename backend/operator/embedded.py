"""The embedded backend: the /v1 app, the store and a job worker in the caller's process.

This is the small public entry point the front end's client (socialpub_tui.client.embedded) uses to run the
backend in-process; the client then speaks /v1 to `EmbeddedBackend.app` through an httpx ASGI transport and
never touches the store itself. Whoever can read the data dir is the operator: `mint_token()` returns an
operator session minted from the data dir (no login, no per-key rate limit).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend import clock, logs
from backend.operator.runtime import build_app, start_worker
from backend.schemas.statuses import JobStatus

log = logging.getLogger("socialpub.embedded")

DRAIN_S = 15.0  # longest an embedded command lingers to finish due publishing work
DRAIN_HORIZON_S = 3.0  # work due within this many seconds (e.g. a sandbox confirmation) is waited for


class NotInitialised(RuntimeError):
    """The data dir holds no socialpub store (or it cannot be used): run `socialpub init` first."""


def load_settings(data_dir: Path | None = None) -> Any:
    """The backend's Settings, on `data_dir` when given (else from the environment)."""
    # deferred: backend.config costs ~42 ms of start-up, paid only by the commands that use it
    from backend.config import Settings

    return Settings(data_dir=data_dir) if data_dir is not None else Settings()


def check_initialised(settings: Any) -> None:
    # deferred: backend.services.security costs ~73 ms of start-up, paid only by the commands that use it
    from backend.services import security

    if settings.secret_key is None and not security.secret_path(settings).exists():
        raise NotInitialised(
            f"no socialpub data in {settings.data_dir}: run `socialpub init --sandbox` first, "
            "or point the CLI at a server (SOCIALPUB_API_URL, or a profile)"
        )


@dataclass
class EmbeddedBackend:
    """What a client needs: the ASGI app, a token source, and a worker to stop on close."""

    settings: Any
    app: Any
    worker: Any | None
    stopped: bool = False

    def start_worker(self) -> None:
        """Start the job worker in a thread of this process (once; not after stop()). The thread imports the job
        handlers and runs the due work; the caller's thread only starts it."""
        if self.worker is None and not self.stopped:
            self.worker = start_worker(self.settings, "embedded")

    def mint_token(self) -> str:
        """A fresh operator session token for the data dir's owner."""
        # deferred: backend.services.bootstrap costs ~173 ms of start-up, paid only by the commands that use it
        from backend.services import bootstrap

        try:
            return bootstrap.owner_session(self.settings, operator=True)
        except (LookupError, RuntimeError) as exc:
            raise NotInitialised(str(exc)) from None

    def stop(self, drain_s: float = DRAIN_S) -> None:
        """Stop the worker — after letting it finish the publishing work that is due now or in the next
        few seconds (bounded by `drain_s`; Ctrl-C leaves the rest to `socialpub tick`, `serve` or `worker`),
        so that a post created by a CLI command does not sit in `processing` once the command ends.

        A generation being produced is not waited for: a command that wanted its file waited for it itself, within
        its own bound (`gen create --wait --timeout`, `recipes apply --generate-timeout`), and production can take
        minutes. It is interrupted: the next worker to start fails it and refunds its credits."""
        self.stopped = True
        if self.worker is None:
            return
        worker, self.worker = self.worker, None
        try:
            if drain_s > 0:
                _drain(drain_s)
        except KeyboardInterrupt:
            pass
        finally:
            # the worker's thread ends once its job threads have: not before a production's, so not waited for then
            worker.stop(timeout=0 if producing() else 5.0)


def pending_work(horizon_s: float) -> int:
    """Jobs running, or queued and due within `horizon_s` (periodic housekeeping and generations' production
    excluded: see EmbeddedBackend.stop)."""
    from datetime import timedelta

    # deferred: backend.services.generations costs ~168 ms of start-up, paid only by the commands that use it
    from backend.services.generations import PRODUCE_JOB

    # deferred: backend.store.models costs ~127 ms of start-up, paid only by the commands that use it
    from backend.store.models import Job

    limit = clock.now() + timedelta(seconds=horizon_s)
    return (
        Job.select()
        .where(
            (((Job.status == JobStatus.QUEUED) & (Job.run_at <= limit)) | (Job.status == JobStatus.RUNNING))
            & ~(Job.dedupe_key.startswith("periodic:"))
            & (Job.kind != PRODUCE_JOB)
        )
        .count()
    )


def producing() -> bool:
    """A generation's production is running (here or in another process sharing the store)."""
    # deferred: backend.services.generations costs ~191 ms of start-up, paid only by the commands that use it
    from backend.services.generations import PRODUCE_JOB

    # deferred: backend.store.models costs ~145 ms of start-up, paid only by the commands that use it
    from backend.store.models import Job

    return Job.select().where((Job.status == JobStatus.RUNNING) & (Job.kind == PRODUCE_JOB)).exists()


def _drain(drain_s: float) -> None:
    deadline = time.monotonic() + drain_s
    noted = False
    while time.monotonic() < deadline:
        pending = pending_work(DRAIN_HORIZON_S)
        if not pending:
            return
        if not noted and sys.stderr.isatty():  # scripts read stderr for JSON errors: stay quiet there
            print(
                f"sending {pending} due publishing job(s) before exiting (Ctrl-C leaves them to "
                "`socialpub tick`, `serve` or `worker`)…",
                file=sys.stderr,
            )
            noted = True
        time.sleep(0.1)


def start(data_dir: Path | None = None, *, settings: Any = None, worker: bool = True) -> EmbeddedBackend:
    """Bind the store, build the app, and (with `worker`) start a worker thread so that due posts go out while
    the caller runs (without it, `start_worker()` starts one later). The process's log records go to
    `<data dir>/socialpub.log` from then on, never to the caller's terminal. Raises NotInitialised when the data
    dir has not been initialised."""

    settings = settings or load_settings(data_dir)
    check_initialised(settings)
    logs.to_file(settings.data_dir, settings.log_level)  # the caller's terminal is not the worker's
    try:
        app = build_app(settings)
    except RuntimeError as exc:
        raise NotInitialised(str(exc)) from None
    backend = EmbeddedBackend(settings, app, None)
    if worker:
        backend.start_worker()
    return backend
