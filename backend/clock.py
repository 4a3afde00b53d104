"""The one clock. Everything asks `now()`; tests move it with time-machine instead of sleeping."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """Aware UTC now, microsecond precision."""
    return datetime.now(UTC)


def to_utc(dt: datetime) -> datetime:
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def iso(dt: datetime | None) -> str | None:
    """ISO 8601 in UTC with a trailing Z, milliseconds kept."""
    if dt is None:
        return None
    return to_utc(dt).isoformat(timespec="milliseconds").replace("+00:00", "Z")
