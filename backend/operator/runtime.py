"""How the operator runs the backend: build the /v1 app, run a job worker in a thread, serve both.

The API layer does not reach the worker: the operator composes them (`serve`, the embedded backend,
`make run`).
"""

from __future__ import annotations

from typing import Any

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
    from backend.api.app import create_app

    return create_app(settings)


def start_worker(settings: Any, name: str, concurrency: int | None = None) -> Any:
    """A job worker running in a background thread of this process (stop it with `.stop()`)."""
    from backend.jobs.worker import Worker

    worker = Worker(settings, name=name, **({"concurrency": concurrency} if concurrency else {}))
    worker.start_thread()
    return worker


def serve_app(
    app: Any,
    settings: Any,
    *,
    host: str,
    port: int,
    worker: bool = True,
    log_level: str | None = None,
    proxy_headers: bool = False,
) -> None:
    """Serve `app` with uvicorn until interrupted, its clients bounded (backend/operator/httpserver.py); with
    `worker`, a job worker runs alongside in this process (started once the app is built, stopped after the server
    has shut down)."""
    import uvicorn

    # deferred: it loads uvicorn, which serve alone needs
    from backend.operator.httpserver import bounded_config

    running = start_worker(settings, "serve") if worker else None
    if running is not None:
        running.check_connections()
    try:
        config = bounded_config(
            app,
            settings,
            host=host,
            port=port,
            log_level=log_level or settings.log_level.lower(),
            proxy_headers=proxy_headers,
        )
        uvicorn.Server(config).run()
    finally:
        if running is not None:
            running.stop()
