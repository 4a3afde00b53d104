"""`--at` / `--tz`: read a time the way a person writes it, resolve it to one UTC instant.

Accepted: ISO 8601 with an offset (`2026-12-01T09:00:00+01:00`, `…Z`) taken as is; a time without offset
(`2026-12-01 09:00`, `2026-12-01T09:00`, `09:00`, `today 18:30`, `tomorrow 9:00`, `yesterday 9:00`) read in `--tz` or the local
zone (DST-aware for that date); relative `+30m`, `+2h`, `+1d`. A wall time that does not exist on that date
(the spring-forward gap) is refused; an ambiguous one (autumn) takes the first occurrence.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo

_REL = re.compile(r"^\+\s*(\d+)\s*([mhd])$", re.I)
_DAY = re.compile(r"^(today|tomorrow|yesterday)\s+(\d{1,2}):(\d{2})$", re.I)
_DAY_OFFSET = {"today": 0, "tomorrow": 1, "yesterday": -1}
_HM = re.compile(r"^(\d{1,2}):(\d{2})$")


class TimeError(ValueError):
    pass


def zone(name: str | None) -> tzinfo | None:
    """A zone by IANA name; None means the system's local zone."""
    if not name:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "Europe" is a folder of zones, not one
        raise TimeError(f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)") from None


def _localise(naive: datetime, tz: tzinfo | None) -> datetime:
    if tz is None:
        aware = naive.astimezone()  # system local zone, with the offset in force on that date
        back = aware.replace(tzinfo=None)
        if back != naive:
            raise TimeError(f"{naive:%Y-%m-%d %H:%M} does not exist in the local time zone (DST change)")
        return aware
    aware = naive.replace(tzinfo=tz, fold=0)
    if aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) != naive:
        raise TimeError(f"{naive:%Y-%m-%d %H:%M} does not exist in {tz} (DST change)")
    return aware


def resolve(text: str, tz_name: str | None = None, now: datetime | None = None) -> datetime:
    """The UTC instant meant by `text` (see module doc)."""
    tz = zone(tz_name)
    text = text.strip()
    now = now or datetime.now(UTC)
    m = _REL.match(text)
    if m:
        amount, unit = int(m.group(1)), m.group(2).lower()
        return (now + timedelta(**{{"m": "minutes", "h": "hours", "d": "days"}[unit]: amount})).astimezone(
            UTC
        )
    local_now = now.astimezone(tz) if tz else now.astimezone()
    m = _DAY.match(text)
    if m or _HM.match(text):
        if m:
            day = local_now.date() + timedelta(days=_DAY_OFFSET[m.group(1).lower()])
            hh, mm = int(m.group(2)), int(m.group(3))
        else:
            hm = _HM.match(text)
            assert hm is not None
            day, hh, mm = local_now.date(), int(hm.group(1)), int(hm.group(2))
        if hh > 23 or mm > 59:
            raise TimeError(f"{text!r}: not a time of day")
        naive = datetime(day.year, day.month, day.day, hh, mm)
        return _localise(naive, tz).astimezone(UTC)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise TimeError(
            f"{text!r} is not a time: use e.g. '2026-12-01 09:00', 'tomorrow 9:00', '+2h' "
            "or ISO 8601 with an offset"
        ) from None
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC)
    return _localise(parsed, tz).astimezone(UTC)


def ambiguity(text: str, tz_name: str | None, instant: datetime) -> str | None:
    """When `text` was a wall time without offset that happens twice (autumn DST change), a sentence saying
    which occurrence was taken and how to ask for the other; else None."""
    t = text.strip()
    if _REL.match(t):
        return None
    try:
        parsed = datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
        if parsed.tzinfo is not None:
            return None
    except ValueError:
        pass
    tz = zone(tz_name)
    naive = (instant.astimezone(tz) if tz else instant.astimezone()).replace(tzinfo=None)
    if tz is not None:
        first, second = naive.replace(tzinfo=tz, fold=0), naive.replace(tzinfo=tz, fold=1)
    else:
        first, second = naive.replace(fold=0).astimezone(), naive.replace(fold=1).astimezone()
    if first.utcoffset() == second.utcoffset():
        return None
    other = second.astimezone(UTC)
    return (
        f"{naive:%Y-%m-%d %H:%M} happens twice in {tz_name or 'the local zone'} (DST change): took the first, "
        f"{iso_utc(first)}; for the second give --at {iso_utc(other)}"
    )


def iso_utc(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe(instant: datetime, tz_name: str | None) -> str:
    """`2026-12-01 09:00 Europe/Paris (2026-12-01T08:00:00Z)`: the wall time where it was meant, and UTC."""
    tz = zone(tz_name)
    local = instant.astimezone(tz) if tz else instant.astimezone()
    label = tz_name or local.strftime("%Z") or "local"
    return f"{local:%Y-%m-%d %H:%M} {label} ({iso_utc(instant)})"


# ---- showing times to people -------------------------------------------------------------------------------
# Tables show an instant as `2027-01-15 09:00 CET`: the wall time in the user's zone, the zone named (its
# abbreviation at that instant, so a column crossing a DST change reads CET … CEST). The user's zone is, first
# match wins: --utc; --tz ZONE; `timezone:` of the profile in config.yaml; top-level `timezone:` in config.yaml;
# the system's local zone ($TZ, /etc/localtime). --json output keeps the API's ISO 8601 UTC.


class DisplayZone:
    """The zone times are shown (and wall times read) in. `name` is an IANA name, or None for the system's zone."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.tz = zone(name)

    def local(self, instant: datetime) -> datetime:
        return instant.astimezone(self.tz) if self.tz is not None else instant.astimezone()

    def format(self, value: str | datetime | None) -> str:
        """`2027-01-15 09:00 CET` (`-` for no value; a value that is not a timestamp is shown as is)."""
        if value is None or value == "":
            return "-"
        instant = parse_instant(value)
        if instant is None:
            return str(value)
        local = self.local(instant)
        return f"{local:%Y-%m-%d %H:%M} {local.strftime('%Z') or self.name or 'local'}"


def parse_instant(value: str | datetime) -> datetime | None:
    """An aware datetime from an API timestamp (ISO 8601; naive values are taken as UTC), else None."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def relative(instant: datetime, now: datetime | None = None) -> str:
    """How far an instant is from now, in its two largest units: `in 45 min`, `in 3 h 20 min`, `in 1 day 7 h`,
    `2 min ago`, `now` (within 30 s). The smaller unit is rounded, and left out when it is zero (`in 3 days`).
    Every relative time the TUI and the CLI show is phrased here."""
    now = now or datetime.now(UTC)
    seconds = (instant - now).total_seconds()
    ahead = seconds >= 0
    s = abs(seconds)
    if s < 30:
        return "now"
    minutes = max(1, round(s / 60))
    if minutes < 60:
        text = f"{minutes} min"
    elif minutes < 24 * 60:
        hours, mins = divmod(minutes, 60)
        text = f"{hours} h {mins} min" if mins else f"{hours} h"
    else:
        days, hours = divmod(round(minutes / 60), 24)
        text = f"{days} day{'s' if days != 1 else ''}" + (f" {hours} h" if hours else "")
    return f"in {text}" if ahead else f"{text} ago"


def system_zone_name() -> str | None:
    """The system's local zone as an IANA name ($TZ, else /etc/localtime's target, else /etc/timezone), for
    what needs a name rather than "local" (recipes record the zone of their times); None when it has none."""
    import os
    from pathlib import Path

    candidates: list[str] = []
    tz_env = os.environ.get("TZ", "").strip().lstrip(":")
    if tz_env:
        candidates.append(tz_env)
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            candidates.append(target.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    try:
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    except OSError:
        pass
    for name in candidates:
        if name.startswith("posix/") or name.startswith("right/"):
            name = name.split("/", 1)[1]
        try:
            zone(name)
        except TimeError:
            continue
        return name
    return None
