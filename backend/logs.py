"""Logging rules that hold in every process of the backend, however its logging is configured; and where an
embedded backend's records go (to_file).

httpx logs each request at INFO as `HTTP Request: METHOD URL "HTTP/1.1 200 OK"`. Some URLs carry secrets in their
query (Graph's `client_secret`, `code`, `fb_exchange_token`, `access_token`; a user's media or webhook URL may too),
so the `httpx` logger keeps the method, scheme, host and path of a URL and replaces its query with `?…`. That
per-request line is off by default (the `httpx` and `httpcore` loggers at WARNING, issue 34: 4 lines a target
under a burst, 0.26 ms of CPU each); a process that sets the logger's level itself gets the lines, redacted.

Lateness as a summary (LatenessLog, issue 34): a post handed to its networks more than LATE_S after its scheduled
time is noted; under a burst thousands are late by a few seconds, and one WARNING per post buried everything
else. The first late post after a quiet minute is logged at once (a single late post is news); the ones after it
are counted, and a line a minute says how many were late and the worst of them. The worker's lease heartbeat
calls `LATENESS.flush_due`, so the last minute of a burst is reported without waiting for another late post."""

from __future__ import annotations

import logging
import logging.handlers
import os
import threading
import time
from collections.abc import Callable
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


QUIET = ("httpx", "httpcore")  # per-request lines (httpx at INFO, httpcore's trace at DEBUG): off by default


def install() -> None:
    """Once per process (idempotent)."""
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, RedactQuery) for f in logger.filters):
        logger.addFilter(RedactQuery())
        for name in QUIET:  # their per-request lines off, unless the process set a level
            quiet = logging.getLogger(name)
            if quiet.level == logging.NOTSET:
                quiet.setLevel(logging.WARNING)


LATE_S = 1.0  # later than this after its scheduled time: a late post
EVERY_S = 60.0  # at most one line per this long


class LatenessLog:
    """Late posts counted, a WARNING line at most every `every_s` seconds (monotonic clock)."""

    def __init__(
        self,
        every_s: float = EVERY_S,
        logger: logging.Logger | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.every_s = every_s
        self.logger = logger or logging.getLogger("socialpub.publishing")
        self.monotonic = monotonic
        self._lock = threading.Lock()
        self._last_line: float | None = None  # when the last line was logged
        self._count = 0  # late posts not reported yet
        self._worst_s = 0.0
        self._worst_post = ""

    def note(self, post_id: str, late_s: float) -> None:
        """A post sent `late_s` after its scheduled time (ignored when not later than LATE_S)."""
        if late_s <= LATE_S:
            return
        with self._lock:
            self._count += 1
            if late_s > self._worst_s:
                self._worst_s, self._worst_post = late_s, post_id
            self._flush_locked(self.monotonic())

    def flush_due(self) -> None:
        """Report the posts counted since the last line, if a line is due (at most one every `every_s`)."""
        with self._lock:
            self._flush_locked(self.monotonic())

    def _flush_locked(self, now: float) -> None:
        if not self._count or (self._last_line is not None and now - self._last_line < self.every_s):
            return
        if self._count == 1:
            self.logger.warning(
                "post %s sent %.1f s after its scheduled time", self._worst_post, self._worst_s
            )
        else:
            self.logger.warning(
                "%d posts sent more than %.0f s after their scheduled time since the last report; the worst "
                "%.1f s late (post %s)",
                self._count,
                LATE_S,
                self._worst_s,
                self._worst_post,
            )
        self._last_line = now
        self._count, self._worst_s, self._worst_post = 0, 0.0, ""


# the process's one summary (the worker's threads share it; its heartbeat flushes it)
LATENESS = LatenessLog()


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
