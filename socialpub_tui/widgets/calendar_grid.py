"""The calendar's time arithmetic and its two grids (week: day columns x hour rows; month: a grid of days).

Everything here is pure and works on local days of a `DisplayZone`: a day runs from local midnight to the next
local midnight, so it has 23 hours on the day DST starts (in Europe/Paris 02:00 does not exist) and 25 on the day
it ends (02:00 happens twice: the second occurrence is its own row, marked `*`). Hour slots are real hours
(60 minutes of UTC) counted from local midnight; a post belongs to the slot its `scheduledAt` falls in.

The grids render only what fits in their size (the week shows a window of its hour rows that keeps the cursor in
view), so the screen never builds more than a screenful of cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo

from rich.text import Text
from textual.widget import Widget

from backend.schemas.posts import PostOut
from socialpub_tui.client.networks import Networks
from socialpub_tui.look import inert
from socialpub_tui.shell import shell
from socialpub_tui.times import parse_instant

HOUR = timedelta(hours=1)
RowKey = tuple[int, int]  # (local wall hour, 0 for its first occurrence that day, 1 for the repeated one)


# ---- local days -------------------------------------------------------------------------------------------
def local(instant: datetime, tz: tzinfo | None) -> datetime:
    """`instant` in the zone (None: the system's zone, with the offset in force at that instant)."""
    return instant.astimezone(tz) if tz is not None else instant.astimezone()


def wall_to_utc(naive: datetime, tz: tzinfo | None) -> datetime:
    """A wall time to its UTC instant: the first occurrence of an ambiguous one; one in a DST gap is moved
    forward by the gap (02:30 on the day Paris skips 02:00-03:00 is 03:30 CEST)."""
    if tz is None:
        return naive.replace(fold=0).astimezone().astimezone(UTC)
    return naive.replace(tzinfo=tz, fold=0).astimezone(UTC)


def midnight(day: date, tz: tzinfo | None) -> datetime:
    """The UTC instant local `day` starts."""
    return wall_to_utc(datetime(day.year, day.month, day.day), tz)


@dataclass(frozen=True)
class Slot:
    """One real hour of a local day."""

    start: datetime  # UTC
    key: RowKey

    @property
    def end(self) -> datetime:
        return self.start + HOUR


def day_slots(day: date, tz: tzinfo | None) -> list[Slot]:
    """The hours of local `day`, from local midnight to the next: 24, or 23 / 25 on a DST change day."""
    start, end = midnight(day, tz), midnight(day + timedelta(days=1), tz)
    slots: list[Slot] = []
    seen: set[int] = set()
    t = start
    while t < end:
        hour = local(t, tz).hour
        slots.append(Slot(t, (hour, 1 if hour in seen else 0)))
        seen.add(hour)
        t += HOUR
    return slots


def scheduled(post: PostOut) -> datetime | None:
    return parse_instant(post.scheduled_at) if post.scheduled_at else None


def move_by_days(instant: datetime, days: int, tz: tzinfo | None) -> datetime:
    """The same wall time `days` local days later (so 09:00 stays 09:00 across a DST change: 23 or 25 real
    hours for that day)."""
    wall = local(instant, tz).replace(tzinfo=None)
    return wall_to_utc(wall + timedelta(days=days), tz)


def week_rows(days: Sequence[date], tz: tzinfo | None) -> list[RowKey]:
    """The hour rows a week shows: every (hour, occurrence) any of its days has, in order."""
    keys = {s.key for d in days for s in day_slots(d, tz)}
    return sorted(keys)


def month_days(anchor: date) -> list[date]:
    """The days of the month grid of `anchor`'s month: whole weeks, Monday first."""
    first = anchor.replace(day=1)
    nxt = (first + timedelta(days=32)).replace(day=1)
    start = first - timedelta(days=first.weekday())
    end = nxt + timedelta(days=(7 - nxt.weekday()) % 7)
    return [start + timedelta(days=i) for i in range((end - start).days)]


def dst_notes(days: Iterable[date], tz: tzinfo | None) -> list[str]:
    """`Sun 28: 23 h, no 02:00`, `Sun 31: 25 h, 02:00 twice (2nd *)`: the visible days that are not 24 h long."""
    notes = []
    for d in days:
        slots = day_slots(d, tz)
        if len(slots) == 24:
            continue
        hours = [s.key[0] for s in slots]
        if len(slots) < 24:
            missing = sorted(set(range(24)) - set(hours))
            what = f"no {missing[0]:02d}:00" if missing else "shorter"
        else:
            twice = sorted({h for h in hours if hours.count(h) > 1})
            what = f"{twice[0]:02d}:00 twice (2nd *)" if twice else "longer"
        notes.append(f"{d:%a %d}: {len(slots)} h, {what}")
    return notes


# ---- what a cell shows ------------------------------------------------------------------------------------
def badges(post: PostOut, networks: Networks) -> str:
    seen: list[str] = []
    for t in post.targets:
        b = networks.badge(t.platform)
        if b not in seen:
            seen.append(b)
    return " ".join(seen)


def one_line(text: str, width: int) -> str:
    """A post's text on one line of at most `width` characters (whitespace runs as one space), shown inert."""
    flat = inert(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def _cell(text: str, width: int) -> str:
    return text[:width].ljust(width)


@dataclass
class GridState:
    """What the grids draw; the screen owns it and refreshes the grid after changing it."""

    tz: tzinfo | None = None
    today: date = date(1970, 1, 1)
    days: list[date] = field(default_factory=list)  # week: 7 days; month: whole weeks
    month: int = 1  # month view: the month shown (days of other months are dimmed)
    rows: list[RowKey] = field(default_factory=list)  # week only
    cells: dict[tuple[date, RowKey], list[PostOut]] = field(default_factory=dict)  # week: posts per slot
    per_day: dict[date, list[PostOut]] = field(default_factory=dict)
    slots: dict[date, dict[RowKey, Slot]] = field(default_factory=dict)
    cursor_day: date = date(1970, 1, 1)
    cursor_row: RowKey = (9, 0)
    selected_id: str | None = None
    moving_id: str | None = None
    loading: bool = False


class WeekGrid(Widget):
    """Seven day columns x the hour rows of that week; the cursor cell in reverse video."""

    DEFAULT_CSS = "WeekGrid { height: 1fr; }"
    LABEL = 7  # '02:00*' and a scroll hint

    def __init__(self, state: GridState, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]  # Textual's widget keywords (id, classes, …) passed through
        self.state = state
        self.offset_row = 0
        self._center = False

    def visible_rows(self) -> int:
        return max(1, self.size.height - 1)

    def center_cursor(self) -> None:
        """On the next render, put the cursor row a third of the way down the window."""
        self._center = True
        self.refresh()

    def follow_cursor(self) -> None:
        """Scroll the window of hour rows so the cursor row is in it."""
        s = self.state
        if s.cursor_row not in s.rows:
            return
        i = s.rows.index(s.cursor_row)
        n = self.visible_rows()
        if self._center and self.size.height:
            self._center = False
            self.offset_row = i - n // 3
        if i < self.offset_row:
            self.offset_row = i
        elif i >= self.offset_row + n:
            self.offset_row = i - n + 1
        self.offset_row = max(0, min(self.offset_row, max(0, len(s.rows) - n)))

    def render(self) -> Text:
        s = self.state
        width = self.size.width or 80
        col = max(6, (width - self.LABEL) // max(1, len(s.days)))
        self.follow_cursor()
        out = Text(no_wrap=True, overflow="crop")
        out.append(" " * self.LABEL)
        for d in s.days:
            label = _cell(f"{d:%a %d}", col)
            style = "bold reverse" if d == s.today else "bold"
            if d == s.cursor_day:
                style += " underline"
            out.append(label, style=style)
        top, bottom = self.offset_row, self.offset_row + self.visible_rows()
        rows = s.rows[top:bottom]
        above = any(s.cells.get((d, k)) for d in s.days for k in s.rows[:top])
        below = any(s.cells.get((d, k)) for d in s.days for k in s.rows[bottom:])
        for n, key in enumerate(rows):
            out.append("\n")
            hour, fold = key
            out.append(_cell(f"{hour:02d}:00" + ("*" if fold else ""), self.LABEL - 1), style="dim")
            hint = "▲" if n == 0 and above else "▼" if n == len(rows) - 1 and below else " "
            out.append(hint, style="bold yellow")
            for d in s.days:
                cursor = d == s.cursor_day and key == s.cursor_row
                if key not in s.slots.get(d, {}):
                    out.append(_cell(" --", col), style="reverse dim" if cursor else "dim")
                    continue
                posts = s.cells.get((d, key), [])
                out.append(*self._cell_text(posts, col, cursor, s))
        return out

    def _cell_text(self, posts: list[PostOut], col: int, cursor: bool, s: GridState) -> tuple[str, str]:
        if not posts:
            return _cell(" ·", col), "reverse" if cursor else "dim"
        moving = any(p.id == s.moving_id for p in posts)
        first = next(p for p in posts if p.id == s.moving_id) if moving else posts[0]
        at = scheduled(first)
        hhmm = f"{local(at, s.tz):%H:%M}" if at else "--:--"
        if (
            len(posts) > 1
        ):  # how many, then the networks of them all as far as the cell allows ("+2" said little)
            networks = " ".join(
                dict.fromkeys(b for p in posts for b in badges(p, shell(self).networks).split())
            )
            extra = f" {len(posts)} posts" if len(hhmm) + 9 < col else f" ×{len(posts)}"
            if len(hhmm) + 1 + len(extra) + 1 + len(networks) < col:  # the networks only when they all fit
                extra += f" {networks}"
        else:
            extra = f" {badges(first, shell(self).networks)}"
        text = _cell(("»" if moving else " ") + hhmm + extra, col)
        style = "bold yellow" if moving else "blue"
        if cursor:
            style = "reverse bold yellow" if moving else "reverse bold"
        return text, style


class MonthGrid(Widget):
    """The month as weeks of seven days; each day its number and its posts' times."""

    DEFAULT_CSS = "MonthGrid { height: 1fr; }"

    def __init__(self, state: GridState, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]  # Textual's widget keywords (id, classes, …) passed through
        self.state = state

    def render(self) -> Text:
        s = self.state
        width = self.size.width or 80
        height = self.size.height or 20
        col = max(6, width // 7)
        weeks = [s.days[i : i + 7] for i in range(0, len(s.days), 7)]
        lines = max(2, min(5, (height - 1) // max(1, len(weeks))))
        out = Text(no_wrap=True, overflow="crop")
        for name in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"):
            out.append(_cell(name, col), style="bold")
        for week in weeks:
            for line in range(lines):
                out.append("\n")
                for d in week:
                    out.append(*self._line(d, line, lines, col, s))
        return out

    def _line(self, d: date, line: int, lines: int, col: int, s: GridState) -> tuple[str, str]:
        cursor = d == s.cursor_day
        posts = s.per_day.get(d, [])
        other = d.month != s.month
        if line == 0:
            count = f" ({len(posts)})" if posts else ""
            text = _cell(f"{d.day:>2}{count}", col)
            style = "bold reverse" if d == s.today else "dim" if other else "bold"
            if cursor:
                style = "reverse bold yellow" if d == s.today else "reverse bold"
            return text, style
        room = lines - 1
        i = line - 1
        if i >= len(posts):
            return _cell("", col), "reverse" if cursor else ""
        post = posts[i]
        at = scheduled(post)
        moving = post.id == s.moving_id
        more = len(posts) - room if i == room - 1 and len(posts) > room else 0
        text = _cell(
            ("»" if moving else " ")
            + (f"{local(at, s.tz):%H:%M}" if at else "")
            + (f" +{more} more" if more else f" {badges(post, shell(self).networks)}"),
            col,
        )
        style = "bold yellow" if moving else "dim blue" if other else "blue"
        if post.id == s.selected_id:
            style += " underline"
        if cursor:
            style = "reverse " + style
        return text, style
