"""A Retry-After header (seconds, or an HTTP date) as seconds from now: networks, webhook receivers and
generation providers all send it."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

import httpx

from backend import clock


def retry_after_s(resp: httpx.Response) -> float | None:
    return parse_retry_after(resp.headers.get("retry-after"))


def parse_retry_after(value: str | None) -> float | None:
    """A Retry-After header (seconds, or an HTTP date read on the project's clock) as seconds from now."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - clock.now()).total_seconds())
