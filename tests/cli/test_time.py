"""--at / --tz resolution: naive times in the given or local zone, DST-aware, gaps refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from socialpub_tui import times as _time

NOW = datetime(2026, 3, 27, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "tz", "expected"),
    [
        ("2026-12-01 09:00", "Europe/Paris", "2026-12-01T08:00:00Z"),  # winter, UTC+1
        ("2026-07-01 09:00", "Europe/Paris", "2026-07-01T07:00:00Z"),  # summer, UTC+2
        ("2026-12-01T09:00:00-05:00", "Europe/Paris", "2026-12-01T14:00:00Z"),  # an offset wins over --tz
        ("2026-12-01T09:00Z", None, "2026-12-01T09:00:00Z"),
        ("tomorrow 9:00", "Europe/Paris", "2026-03-28T08:00:00Z"),
        ("today 18:30", "America/New_York", "2026-03-27T22:30:00Z"),
        ("yesterday 9:00", "Europe/Paris", "2026-03-26T08:00:00Z"),  # read, then refused as past by the API
        ("+2h", None, "2026-03-27T14:00:00Z"),
        ("+30m", "Asia/Tokyo", "2026-03-27T12:30:00Z"),
    ],
)
def test_resolve(text: str, tz: str | None, expected: str) -> None:
    assert _time.iso_utc(_time.resolve(text, tz, now=NOW)) == expected


def test_local_zone_used_without_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        assert _time.iso_utc(_time.resolve("2026-12-01 09:00")) == "2026-12-01T08:00:00Z"
        assert _time.iso_utc(_time.resolve("2026-07-01 09:00")) == "2026-07-01T07:00:00Z"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_nonexistent_wall_time_refused() -> None:
    with pytest.raises(_time.TimeError, match="does not exist"):
        _time.resolve("2026-03-29 02:30", "Europe/Paris")


@pytest.mark.parametrize("text", ["next friday", "25:00", "2026-13-01 09:00"])
def test_garbage_refused(text: str) -> None:
    with pytest.raises(_time.TimeError):
        _time.resolve(text, "UTC", now=NOW)


def test_unknown_zone() -> None:
    with pytest.raises(_time.TimeError, match="unknown time zone"):
        _time.resolve("09:00", "Mars/Olympus")


def test_describe_shows_both() -> None:
    instant = _time.resolve("2026-12-01 09:00", "Europe/Paris")
    assert _time.describe(instant, "Europe/Paris") == "2026-12-01 09:00 Europe/Paris (2026-12-01T08:00:00Z)"
