"""Rate-limit waits read from the answer: Retry-After (a delay) and a reset time (Mastodon's X-RateLimit-Reset)."""

from __future__ import annotations

import httpx
import time_machine

from backend.outbound.retry_after import parse_reset_time, reset_in_s, retry_after_s

NOW = "2026-11-28T15:00:00+00:00"


@time_machine.travel(NOW, tick=False)
def test_an_iso_8601_reset_time_is_the_wait_until_it() -> None:
    # Mastodon's 429 carries no Retry-After, only X-RateLimit-Reset as an ISO 8601 time (rack_attack.rb .iso8601(6))
    resp = httpx.Response(
        429,
        headers={"X-RateLimit-Reset": "2026-11-28T15:05:00.000000Z"},
        json={"error": "Too many requests"},
    )
    assert retry_after_s(resp) is None  # the bug: only Retry-After was read, the wait was lost
    assert reset_in_s(resp) == 300.0


@time_machine.travel(NOW, tick=False)
def test_reset_times_with_an_offset_without_one_and_in_epoch_seconds() -> None:
    assert parse_reset_time("2026-11-28T16:00:30+01:00") == 30.0
    assert parse_reset_time("2026-11-28T15:01:00") == 60.0  # no offset: UTC
    assert parse_reset_time("1795878060") == 60.0  # 2026-11-28T15:01:00Z
    assert parse_reset_time("2026-11-28T14:00:00Z") == 0.0  # already past: no wait, never negative


def test_what_is_not_a_reset_time_gives_no_wait() -> None:
    assert parse_reset_time(None) is None
    assert parse_reset_time("") is None
    assert parse_reset_time("soon") is None
    assert parse_reset_time("30") is None  # a delay, not a time: Retry-After's business
