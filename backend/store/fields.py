"""Field types shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime

from peewee import DateTimeField


class UTCDateTimeField(DateTimeField):
    """Stores naive UTC with a fixed microsecond format; gives back aware UTC datetimes."""

    def db_value(self, value):  # type: ignore[override]
        if value is None:
            return None
        if isinstance(value, datetime):
            if value.tzinfo is not None:
                value = value.astimezone(UTC).replace(tzinfo=None)
            return value
        return super().db_value(value)

    def python_value(self, value):  # type: ignore[override]
        value = super().python_value(value)
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value
