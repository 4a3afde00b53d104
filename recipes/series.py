"""Times of a recipe entry: `at`, and the occurrences of a `repeat` series, in local wall-clock time.

A series is expanded in the file's zone as wall-clock date-times (python-dateutil's rrule for every
day/week/month, croniter for `cron`), then each is turned into one UTC instant by `to_utc`:

- a wall-clock time stays where it is across DST changes: 09:00 is 09:00 in winter and in summer (its UTC
  offset changes);
- a time that does not exist on that date (the spring-forward gap, e.g. 02:30 on 2027-03-28 in Europe/Paris)
  moves to the first valid minute after the gap (03:00);
- a time that happens twice (fall back, e.g. 02:30 on 2027-10-31 in Europe/Paris) takes the first occurrence
  (the summer-time one, fold=0).

Expansion is bounded: a series needs `until` or `count`, and one yielding more than `MAX_OCCURRENCES` is an
error (`SeriesTooLong`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, Protocol


class SeriesSpec(Protocol):
    """What a series is read from: recipes.schema.Repeat (a recipe's `repeat`) has these fields. Declared here
    so that the series arithmetic, which the schema's validators use, does not import the schema back."""

    @property
    def every(self) -> str | None: ...
    @property
    def interval(self) -> int: ...
    @property
    def on(self) -> list[Any] | None: ...
    @property
    def times(self) -> list[Any] | None: ...
    @property
    def cron(self) -> str | None: ...
    @property
    def start(self) -> str: ...
    @property
    def until(self) -> str | None: ...
    @property
    def count(self) -> int | None: ...


MAX_OCCURRENCES = 1000
"""The most occurrences one series may yield (past ones included)."""

_GAP_SEARCH = timedelta(hours=48)  # the longest gap any zone has had (Samoa skipped a day in 2011)


class SeriesTooLong(ValueError):
    """A series yielding more than MAX_OCCURRENCES."""


class CronNeverMatches(ValueError):
    """A cron expression with no date-time (e.g. `0 9 30 2 *`)."""


def exists(naive: datetime, tz: tzinfo) -> bool:
    """Whether the wall-clock time `naive` exists in `tz` (it does not in a spring-forward gap)."""
    aware = naive.replace(tzinfo=tz, fold=0)
    return aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == naive


def is_ambiguous(naive: datetime, tz: tzinfo) -> bool:
    """Whether the wall-clock time `naive` happens twice in `tz` (in a fall-back overlap)."""
    return naive.replace(tzinfo=tz, fold=0).utcoffset() != naive.replace(
        tzinfo=tz, fold=1
    ).utcoffset() and exists(naive, tz)


def to_utc(naive: datetime, tz: tzinfo) -> datetime:
    """The UTC instant of the wall-clock time `naive` in `tz` (see the module's DST rules)."""
    if not exists(naive, tz):
        naive = first_valid_after(naive, tz)
    return naive.replace(tzinfo=tz, fold=0).astimezone(UTC)


def first_valid_after(naive: datetime, tz: tzinfo) -> datetime:
    """The first whole minute after `naive` that exists in `tz` (the end of a spring-forward gap)."""
    cand = naive.replace(second=0, microsecond=0) + timedelta(minutes=1)
    limit = cand + _GAP_SEARCH
    while not exists(cand, tz) and cand < limit:
        cand += timedelta(minutes=1)
    return cand


_AT_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(:\d{2})?$")


def parse_at(text: str) -> datetime:
    """`at` as written: a naive datetime (local wall-clock, "2027-01-15 09:00") or an aware one (ISO 8601 with
    an offset or Z). ValueError when it is neither."""
    t = text.strip()
    if _AT_LOCAL.match(t):
        day, _, clock = t.replace("T", " ").partition(" ")
        parts = [int(x) for x in clock.split(":")]
        hh, mm, ss = parts[0], parts[1], parts[2] if len(parts) > 2 else 0
        return datetime.combine(date.fromisoformat(day), time(hh, mm, ss))
    parsed = datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError('a date-time without offset is written "YYYY-MM-DD HH:MM"')
    return parsed


def at_instant(text: str, tz: tzinfo) -> tuple[datetime, datetime]:
    """(UTC instant, wall-clock time in `tz`, naive) of an `at` value."""
    parsed = parse_at(text)
    instant = parsed.astimezone(UTC) if parsed.tzinfo is not None else to_utc(parsed, tz)
    return instant, instant.astimezone(tz).replace(tzinfo=None)


def parse_hhmm(text: str) -> time:
    hh, mm = text.split(":")
    return time(int(hh), int(mm))


def local_times(repeat: SeriesSpec, cap: int = MAX_OCCURRENCES) -> list[datetime]:
    """A series' wall-clock date-times (naive, ascending), past ones included. SeriesTooLong past `cap`."""
    found = list(itertools.islice(_iterate(repeat), cap + 1))
    if len(found) > cap:
        raise SeriesTooLong(
            f"this series yields more than {cap:,} occurrences (the most one series may have): "
            "bring `until` closer, lower `count`, or split it into several entries"
        )
    return found


def _iterate(repeat: SeriesSpec) -> Iterator[datetime]:
    start = date.fromisoformat(repeat.start)
    until = date.fromisoformat(repeat.until) if repeat.until else None
    source = _cron(repeat.cron, start) if repeat.cron else _rrule(repeat, start)
    for i, when in enumerate(source):
        if until is not None and when.date() > until:
            return
        if repeat.count is not None and i >= repeat.count:
            return
        yield when


def _rrule(repeat: SeriesSpec, start: date) -> Iterator[datetime]:
    from dateutil import rrule

    freq = {"day": rrule.DAILY, "week": rrule.WEEKLY, "month": rrule.MONTHLY}[repeat.every or "day"]
    kwargs: dict[str, object] = {"dtstart": datetime.combine(start, time()), "interval": repeat.interval}
    if repeat.every == "week" and repeat.on:
        kwargs["byweekday"] = sorted({WEEKDAY_NUMBERS[str(d)] for d in repeat.on})
    elif repeat.every == "month" and repeat.on:
        kwargs["bymonthday"] = sorted({int(d) for d in repeat.on})
    clocks = sorted({parse_hhmm(t) for t in repeat.times or ()})
    for day in rrule.rrule(freq, **kwargs):  # type: ignore[arg-type]  # unbounded: _iterate stops it
        for clock in clocks:
            yield datetime.combine(day.date(), clock)


def _cron(expr: str, start: date) -> Iterator[datetime]:
    from croniter import CroniterBadDateError, croniter

    it = croniter(expr, datetime.combine(start, time()) - timedelta(minutes=1))
    first = True
    while True:
        try:
            yield it.get_next(datetime)
        except CroniterBadDateError:
            if first:
                raise CronNeverMatches(f"cron {expr!r} never matches a date-time") from None
            return
        first = False


WEEKDAY_NUMBERS: dict[str, int] = {
    "mon": 0,
    "tue": 1,
    "wed": 2,
    "thu": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
}
