"""A Retry-After header (seconds, or an HTTP date) as seconds from now: networks, webhook receivers and
generation providers all send it. Some networks send no Retry-After on a 429 and say when the window resets in
a rate-limit header instead (Mastodon: `X-RateLimit-Reset` as an ISO 8601 time, docs.joinmastodon.org/api/rate-limits/):
`reset_in_s` reads such a header."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from backend import clock

# an epoch time in seconds, not a delay: later than 2001-09-09 (a delay of 31 years is no delay)
_EPOCH_FLOOR = 1_000_000_000


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


def reset_in_s(resp: httpx.Response, header: str = "x-ratelimit-reset") -> float | None:
    """Seconds from now until the rate-limit window named by `header` resets, None when it is absent or unreadable."""
    return parse_reset_time(resp.headers.get(header))


def parse_reset_time(value: str | None) -> float | None:
    """A rate-limit reset *time* as seconds from now (never negative): an ISO 8601 time (Mastodon's
    `2026-11-28T15:20:00.000000Z`; one without an offset is UTC) or an epoch time in seconds. A small number is
    not a time: None (a delay belongs in Retry-After, read by parse_retry_after)."""
    if not value:
        return None
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if number < _EPOCH_FLOOR:
            return None
        return max(0.0, number - clock.now().timestamp())
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - clock.now()).total_seconds())
