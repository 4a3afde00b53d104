"""How the operator runs the backend: build the /v1 app, run a job worker beside it, serve both.

The API layer does not reach the worker: the operator composes them (`serve`, the embedded backend,
`make run`). `serve` runs its worker in a process of its own by default (SOCIALPUB_SERVE_WORKER=process): one
interpreter shared with a busy API gives the worker's threads a small share of the GIL, and publishing fell
minutes behind a burst of API creations (issue 30, item 7); the embedded backend keeps its worker in a thread.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from typing import Any

from backend.operator.openfiles import FD_RESERVE, FDS_PER_WORKER_THREAD, worker_pool

log = logging.getLogger("socialpub.serve")

WILDCARD_HOSTS = ("0.0.0.0", "::", "")


def listening_settings(settings: Any, host: str, port: int) -> tuple[Any, str | None]:
    """The settings a server listening on host:port runs with, and a warning to show, if any. Without
    SOCIALPUB_BASE_URL the server's own address (media URLs, OAuth redirects) is where it listens, not the
    default port 8000; on every interface (0.0.0.0) the address clients use is unknown: loopback, said so."""
    if "base_url" in settings.model_fields_set:
        return settings, None
    shown = "127.0.0.1" if host in WILDCARD_HOSTS else host
    address = f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"
    warning = (
        (
            f"SOCIALPUB_BASE_URL is not set: media URLs point at {address}, which only this machine reaches; "
            "set it to the address clients use"
        )
        if host in WILDCARD_HOSTS
        else None
    )
    return settings.model_copy(update={"base_url": address}), warning


def build_app(settings: Any) -> Any:
    """The /v1 ASGI app bound to the store of `settings` (raises RuntimeError when the data dir is unusable)."""
    # deferred: backend.api.app costs ~372 ms of start-up, paid only by the commands that use it
    from backend.api.app import create_app

    return create_app(settings)


# The collector of a worker process (`socialpub worker`, serve's worker process): its first generation collected every
# 20,000 new objects rather than 700. A worker's threads build objects that live for one job step (rows, queries,
# requests), ~250 steps at once under a burst: at 700 the collector walks them two or three times, promoting them to
# older generations, before they die of their reference counts. Measured (bench/burst.py --posts 400, two
# interleaved pairs): the worker's CPU a target 8.4 / 8.3 -> 8.1 / 8.0 ms, the collector ~3.5 % of it before.
WORKER_GC_THRESHOLD = 20_000


def worker_collector() -> None:
    """A worker process that has started (its modules loaded, its store connected): what it has built so far is
    frozen (gc.freeze: never walked again; reference counting still frees it) and the first generation's threshold
    is WORKER_GC_THRESHOLD."""
    import gc

    gc.freeze()
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


def start_worker(settings: Any, name: str, concurrency: int | None = None) -> Any:
    """A job worker running in a background thread of this process (stop it with `.stop()`)."""
    # deferred: backend.jobs.worker costs ~278 ms of start-up, paid only by the commands that use it
    from backend.jobs.worker import Worker

    worker = Worker(settings, name=name, concurrency=worker_pool(settings, concurrency))
    worker.start_thread()
    return worker


class WorkerProcess:
    """`socialpub worker` as a child of the server: the same settings (the server's base URL and data dir, which
    the server may have derived from its flags, passed on), its output the server's. It stops when told
    (SIGTERM) and by itself when the server's process is gone (`--parent`)."""

    def __init__(self, settings: Any) -> None:
        env = {
            **os.environ,
            "SOCIALPUB_BASE_URL": str(settings.base_url),
            "SOCIALPUB_DATA_DIR": str(settings.data_dir),
        }
        argv = [sys.executable, "-m", "backend.operator", "worker", "--parent", str(os.getpid())]
        self.popen = subprocess.Popen(argv, env=env)
        log.info("worker process %d started", self.popen.pid)

    def stop(self, timeout: float = 15.0) -> None:
        if self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("worker process %d did not stop within %g s: killed", self.popen.pid, timeout)
            self.popen.kill()
            self.popen.wait(timeout)


def serve_app(
    app: Any,
    settings: Any,
    *,
    host: str,
    port: int,
    worker: str | None = "process",
    log_level: str | None = None,
    proxy_headers: bool = False,
) -> None:
    """Serve `app` with uvicorn until interrupted, its clients bounded (backend/operator/httpserver.py), with a job
    worker beside it: `worker` "process" (a child process, WorkerProcess), "thread" (a thread of this process) or
    None (none: run `socialpub worker` elsewhere). The worker starts once the app is built and stops after the
    server has shut down."""
    import uvicorn

    # deferred: it loads uvicorn, which serve alone needs
    from backend.operator.httpserver import bounded_config

    running: Any = None
    reserve = FD_RESERVE
    if worker == "thread":
        running = start_worker(settings, "serve")
        running.check_connections()
        reserve += running.concurrency * FDS_PER_WORKER_THREAD  # the server's files beside its worker's
    elif worker == "process":
        running = WorkerProcess(settings)
    elif worker is not None:
        raise ValueError(f"worker: 'process', 'thread' or None, not {worker!r}")
    try:
        config = bounded_config(
            app,
            settings,
            host=host,
            port=port,
            reserve=reserve,
            log_level=log_level or settings.log_level.lower(),
            proxy_headers=proxy_headers,
        )
        uvicorn.Server(config).run()
    finally:
        if running is not None:
            running.stop()
