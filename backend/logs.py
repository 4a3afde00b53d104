"""Logging rules that hold in every process of the backend, however its logging is configured.

httpx logs each request at INFO as `HTTP Request: METHOD URL "HTTP/1.1 200 OK"`. Some URLs carry secrets in their
query (Graph's `client_secret`, `code`, `fb_exchange_token`, `access_token`; a user's media or webhook URL may too),
so the `httpx` logger keeps the method, scheme, host and path of a URL and replaces its query with `?…`."""

from __future__ import annotations

import logging
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
