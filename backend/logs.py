"""Logging rules that hold in every process of the backend, however its logging is configured; and where an
embedded backend's records go (to_file).

httpx logs each request at INFO as `HTTP Request: METHOD URL "HTTP/1.1 200 OK"`. Some URLs carry secrets in their
query (Graph's `client_secret`, `code`, `fb_exchange_token`, `access_token`; a user's media or webhook URL may too),
so the `httpx` logger keeps the method, scheme, host and path of a URL and replaces its query with `?…`."""

from __future__ import annotations

import logging
import logging.handlers
import os
import threading
from pathlib import Path
from typing import Any

REDACTED_QUERY = "…"


def _without_query(value: Any) -> Any:
    text = str(value)
    base, sep, _ = text.partition("?")
    return f"{base}?{REDACTED_QUERY}" if sep else text


class RedactQuery(logging.Filter):
    """Replaces the query of every URL argument of a record (httpx passes its `httpx.URL` as an argument)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(_without_query(a) if _is_url(a) else a for a in record.args)
        return True


def _is_url(value: Any) -> bool:
    return type(value).__name__ == "URL" or (
        isinstance(value, str) and value.startswith(("http://", "https://"))
    )


def install() -> None:
    """Once per process (idempotent)."""
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())


LOG_FILE = "socialpub.log"  # in the data dir: an embedded backend's log (the TUI's worker, a CLI command's)
LOG_FILE_BYTES = 1_000_000  # then rotated: socialpub.log.1, .2
_file: logging.Handler | None = None
_file_lock = threading.Lock()


def to_file(data_dir: Path, level: str) -> Path:
    """Send this process's log records to `<data_dir>/socialpub.log` (0600, rotated at 1 MB, two kept) instead of
    the terminal: an embedded backend runs inside a CLI command or the TUI, whose output its worker's lines
    (a webhook refused, a retry) would otherwise land in the middle of. The `socialpub` loggers log at `level`;
    other libraries' warnings go there too. Once per process (a second data dir takes the file over)."""
    global _file
    path = Path(data_dir) / LOG_FILE
    with _file_lock:
        if _file is not None and getattr(_file, "baseFilename", None) == str(path.resolve()):
            return path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.close(fd)
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=LOG_FILE_BYTES, backupCount=2, encoding="utf-8", delay=True
        )
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(process)d %(threadName)s]: %(message)s")
        )
        root = logging.getLogger()
        if _file is not None:
            root.removeHandler(_file)
            _file.close()
        root.addHandler(handler)  # with a handler, nothing falls through to stderr (logging.lastResort)
        _file = handler
    logging.getLogger("socialpub").setLevel(getattr(logging, level.upper(), logging.INFO))
    install()
    return path
