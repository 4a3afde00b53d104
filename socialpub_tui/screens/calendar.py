"""f3: the calendar of scheduled posts — the week ahead (day columns x hour rows) or a month grid (`v`), in the
user's zone (`app.zone`), local days from local midnight (23 / 25 hours on DST change days).

Keys: arrows move the cursor (a day / an hour; a week in the month grid), `[` `]` pick a post of the cell,
`pageup` / `pagedown` the previous / next week or month, `t` today, `enter` opens the post. `m` picks the post up:
arrows then move it by an hour / a day (the same wall time on another day), `enter` PATCHes its `scheduledAt`
(the API validates it: a refusal is shown with its code), `escape` puts it back.

Only the visible range is fetched: GET /v1/posts?status=scheduled&timeField=scheduledAt&from=…&to=…, every page
of it, in an exclusive worker (moving to another week cancels the fetch of the previous one, and a result for a
range no longer shown is dropped). While the calendar is shown and no post is being moved, the range is read again
every few seconds (posts.idle_refresh_s): what the CLI or a recipe scheduled shows without `r`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Static

from backend.schemas.posts import PostOut
from socialpub_tui.messages import PostChanged
from socialpub_tui.screens.posts import idle_refresh_s
from socialpub_tui.shell import shell
from socialpub_tui.times import iso_utc, relative
from socialpub_tui.widgets.calendar_grid import (
    GridState,
    MonthGrid,
    RowKey,
    WeekGrid,
    badges,
    day_slots,
    dst_notes,
    local,
    midnight,
    month_days,
    move_by_days,
    one_line,
    scheduled,
    week_rows,
)
from socialpub_tui.widgets.footer import Footer

PAGE_SIZE = 100
MOVE_ACTIONS = {"shift_hours", "shift_days", "confirm_move", "cancel_move"}
POST_ACTIONS = {"open", "start_move"}


@dataclass
class CalendarLoaded(Message):
    """The scheduled posts of one range arrived (start, end: UTC)."""

    start: datetime
    end: datetime
    posts: list[PostOut]


@dataclass
class PostMoved(Message):
    """A move ended: `post` as the API answered it, or None when the PATCH was refused (already reported)."""

    post: PostOut | None


class CalendarScreen(Screen[None]):
    CSS_PATH = "calendar.tcss"
    BINDINGS = [
        Binding("v", "toggle_view", "Week/month", id="calendar.view"),
        # (not in the footer, for room: the help, the palette and the agenda's hint name them)
        Binding("pageup", "page(-1)", "Previous", id="calendar.previous", show=False),
        Binding("pagedown", "page(1)", "Next", id="calendar.next", show=False),
        Binding("t", "today", "Today", id="calendar.today"),
        Binding("enter", "open", "Open post", id="calendar.open"),
        Binding("m", "start_move", "Move post", id="calendar.move"),
        Binding("right_square_bracket", "pick(1)", "Next post in slot", id="calendar.pick_next", show=False),
        Binding(
            "left_square_bracket",
            "pick(-1)",
            "Previous post in slot",
            id="calendar.pick_previous",
            show=False,
        ),
        Binding("left", "cursor_days(-1)", "Previous day", id="calendar.left", show=False),
        Binding("right", "cursor_days(1)", "Next day", id="calendar.right", show=False),
        Binding("up", "cursor_vertical(-1)", "Earlier", id="calendar.up", show=False),
        Binding("down", "cursor_vertical(1)", "Later", id="calendar.down", show=False),
        Binding("r", "reload", "Refresh", id="calendar.refresh"),
        # while a post is picked up (`m`)
        Binding("up", "shift_hours(-1)", "1 h earlier", id="calendar.move.earlier"),
        Binding("down", "shift_hours(1)", "1 h later", id="calendar.move.later"),
        Binding("left", "shift_days(-1)", "1 day earlier", id="calendar.move.day_earlier"),
        Binding("right", "shift_days(1)", "1 day later", id="calendar.move.day_later"),
        Binding("enter", "confirm_move", "Confirm move", id="calendar.move.confirm"),
        Binding("escape", "cancel_move", "Cancel move", id="calendar.move.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.view = "week"
        self.state = GridState()
        self.posts: list[PostOut] = []
        self.pick = 0
        self.moving: PostOut | None = None
        self.pending: datetime | None = None
        self.anchor: date | None = None  # first day of the week shown
        self._wanted: tuple[datetime, datetime] | None = None
        self._loaded: tuple[datetime, datetime] | None = None

    # ---- layout -----------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="cal-title")
        yield WeekGrid(self.state, id="cal-week")
        yield MonthGrid(self.state, id="cal-month")
        yield Static(id="cal-agenda")
        yield Footer()

    def on_mount(self) -> None:
        shell(self).post_changed.subscribe(self, self._post_changed)
        self.set_interval(idle_refresh_s(self.app), self._idle_tick)
        self.action_today()

    def _idle_tick(self) -> None:
        """While shown and no post is being moved: read the range again (what another program scheduled)."""
        if self.is_current and self.moving is None and self._loaded is not None and not self.state.loading:
            self._reload()

    def on_screen_resume(self) -> None:
        if self._loaded is not None:
            self._reload()

    def _post_changed(self, change: PostChanged) -> None:
        self._reload()

    # ---- the clock and the zone ---------------------------------------------------------------------------
    @property
    def tz(self) -> Any:
        return shell(self).zone.tz

    def now(self) -> datetime:
        return shell(self).now()

    def fmt(self, instant: datetime | None) -> str:
        if instant is None:
            return "-"
        loc = local(instant, self.tz)
        return f"{loc:%a %d %b %H:%M} {loc.strftime('%Z')}"

    def slot_key(self, instant: datetime) -> tuple[date, RowKey]:
        day = local(instant, self.tz).date()
        for slot in day_slots(day, self.tz):
            if slot.start <= instant < slot.end:
                return day, slot.key
        return day, (local(instant, self.tz).hour, 0)

    # ---- what is shown ------------------------------------------------------------------------------------
    def _days(self) -> list[date]:
        if self.view == "week":
            assert self.anchor is not None
            return [self.anchor + timedelta(days=i) for i in range(7)]
        return month_days(self.state.cursor_day)

    def _effective_posts(self) -> list[PostOut]:
        """The loaded posts, the one being moved shown at its new time (wherever it came from)."""
        if self.moving is None or self.pending is None:
            return self.posts
        moved = self.moving.model_copy(update={"scheduled_at": iso_utc(self.pending)})
        return [p for p in self.posts if p.id != self.moving.id] + [moved]

    def _rebuild(self) -> None:
        s = self.state
        tz = self.tz
        s.tz = tz
        s.today = local(self.now(), tz).date()
        s.days = self._days()
        s.month = s.cursor_day.month
        s.moving_id = self.moving.id if self.moving else None
        s.rows = week_rows(s.days, tz) if self.view == "week" else []
        s.slots = {d: {sl.key: sl for sl in day_slots(d, tz)} for d in s.days} if self.view == "week" else {}
        s.cells, s.per_day = {}, {}
        shown = set(s.days)
        timed = [(scheduled(p), p) for p in self._effective_posts()]
        for at, post in sorted(((a, p) for a, p in timed if a is not None), key=lambda ap: (ap[0], ap[1].id)):
            day, key = self.slot_key(at)
            if day not in shown:
                continue
            s.per_day.setdefault(day, []).append(post)
            s.cells.setdefault((day, key), []).append(post)
        if self.view == "week" and s.cursor_row not in s.rows:
            s.cursor_row = min(s.rows, key=lambda k: abs(k[0] - s.cursor_row[0]))
        here = self.cell_posts()
        if self.moving is not None:
            ids = [p.id for p in here]
            self.pick = ids.index(self.moving.id) if self.moving.id in ids else 0
        self.pick = max(0, min(self.pick, len(here) - 1)) if here else 0
        s.selected_id = here[self.pick].id if here else None
        self._ensure_loaded()
        self._paint()

    def cell_posts(self) -> list[PostOut]:
        s = self.state
        if self.view == "week":
            return s.cells.get((s.cursor_day, s.cursor_row), [])
        return s.per_day.get(s.cursor_day, [])

    def selected(self) -> PostOut | None:
        here = self.cell_posts()
        return here[self.pick] if here and self.pick < len(here) else None

    def _paint(self) -> None:
        week, month = self.query_one(WeekGrid), self.query_one(MonthGrid)
        week.display = self.view == "week"
        month.display = self.view == "month"
        (week if self.view == "week" else month).refresh()
        self.query_one("#cal-title", Static).update(self._title())
        self.query_one("#cal-agenda", Static).update(self._agenda())
        self.refresh_bindings()

    def _title(self) -> Text:
        s = self.state
        zone = shell(self).zone.name or "local time"
        first, last = s.days[0], s.days[-1]
        if self.view == "week":
            span = f"{first:%a %d %b} – {last:%a %d %b %Y}"
        else:
            span = f"{s.cursor_day:%B %Y}"
        count = sum(len(v) for v in s.per_day.values())
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(span, style="bold")
        notes = dst_notes(
            s.days if self.view == "week" else [d for d in s.days if d.month == s.month], self.tz
        )
        if notes:
            text.append(" · " + "; ".join(notes), style="bold yellow")
        text.append(f" · {count} scheduled")
        if s.loading:
            text.append(" · loading…", style="italic")
        text.append(f" · {zone}", style="dim")
        return text

    def _agenda(self) -> Text:
        s = self.state
        out = Text(no_wrap=True, overflow="ellipsis")
        if self.moving is not None and self.pending is not None:
            before = scheduled(self.moving)
            out.append("Moving ", style="bold yellow")
            out.append(one_line(self.moving.content, 60))
            out.append(f"\n{self.fmt(before)} → ", style="")
            out.append(self.fmt(self.pending), style="bold yellow")
            if before is not None:
                delta = self.pending - before
                hours = delta.total_seconds() / 3600
                out.append(f"  ({'+' if hours >= 0 else ''}{hours:g} h)", style="dim")
            if self.pending <= self.now():
                out.append("\nIn the past: the API will refuse it (scheduled_at_in_past)", style="bold red")
            out.append("\n↑↓ an hour · ←→ a day · enter confirm · esc cancel", style="dim")
            return out
        if self.view == "week":
            slot = s.slots.get(s.cursor_day, {}).get(s.cursor_row)
            if slot is None:
                out.append(
                    f"{s.cursor_day:%a %d %b} {s.cursor_row[0]:02d}:00 does not exist in this zone "
                    "that day (DST)",
                    style="dim",
                )
                return out
            head = f"{self.fmt(slot.start)} – {local(slot.end, self.tz):%H:%M %Z}"
        else:
            head = f"{s.cursor_day:%A %d %B %Y}"
        here = self.cell_posts()
        out.append(head, style="bold")
        out.append(
            f" · {len(here)} scheduled post{'s' if len(here) != 1 else ''}"
            if here
            else " · nothing scheduled",
            style="dim",
        )
        if not here:
            out.append("\narrows move · v week/month · pgup/pgdn previous/next · t today", style="dim")
        room = 4
        first = max(0, min(self.pick - room + 1, len(here) - room))
        for i, post in enumerate(here[first : first + room], first):
            at = scheduled(post)
            mark = "▶ " if i == self.pick else "  "
            out.append("\n" + mark, style="bold")
            out.append(f"{local(at, self.tz):%H:%M %Z}" if at else "", style="blue")
            if at is not None:  # before the text, which the line's end cuts: never the relative time
                out.append(f"  {relative(at, self.now())}", style="dim")
            out.append(f"  {badges(post, shell(self).networks):<14} ")
            out.append(one_line(post.content, 200), style="bold" if i == self.pick else "")
        return out

    # ---- fetching -----------------------------------------------------------------------------------------
    def _range(self) -> tuple[datetime, datetime]:
        days = self.state.days
        return midnight(days[0], self.tz), midnight(days[-1] + timedelta(days=1), self.tz)

    def _ensure_loaded(self) -> None:
        wanted = self._range()
        if wanted != self._wanted:
            self._wanted = wanted
            self.state.loading = True
            self._load(*wanted)

    def _reload(self) -> None:
        self._wanted = None
        self._rebuild()

    @work(exclusive=True, group="calendar-load")
    async def _load(self, start: datetime, end: datetime) -> None:
        posts: list[PostOut] = []
        cursor: str | None = None
        try:
            while True:
                page = await shell(self).client.list_posts(
                    status=["scheduled"],
                    since=iso_utc(start),
                    until=iso_utc(end),
                    time_field="scheduledAt",
                    limit=PAGE_SIZE,
                    cursor=cursor,
                )
                posts.extend(page.items)
                cursor = page.next_cursor
                if not cursor:
                    break
        except Exception as exc:  # noqa: BLE001  (every failure is shown with its code)
            shell(self).report(exc, "Load the calendar")
        self.post_message(CalendarLoaded(start, end, posts))

    def on_calendar_loaded(self, message: CalendarLoaded) -> None:
        if (message.start, message.end) != self._wanted:
            return  # a range no longer shown
        self.posts = message.posts
        self._loaded = (message.start, message.end)
        self.state.loading = False
        self._rebuild()

    # ---- actions: looking around ------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        moving = self.moving is not None
        if action in MOVE_ACTIONS:
            return moving
        if action in ("cursor_days", "cursor_vertical", "page", "today", "pick", "reload"):
            return not moving
        if action in POST_ACTIONS:
            if moving:
                return False
            return True if self.selected() is not None else None
        return True

    def _goto(self, day: date) -> None:
        s = self.state
        s.cursor_day = day
        if self.anchor is None:
            self.anchor = day
        while day < self.anchor:
            self.anchor -= timedelta(days=7)
        while day >= self.anchor + timedelta(days=7):
            self.anchor += timedelta(days=7)

    def action_today(self) -> None:
        now = local(self.now(), self.tz)
        self.anchor = now.date()
        self._goto(now.date())
        self.state.cursor_row = self.slot_key(self.now())[1]
        self.pick = 0
        self._rebuild()
        self.query_one(WeekGrid).center_cursor()

    def action_toggle_view(self) -> None:
        self.view = "month" if self.view == "week" else "week"
        self._rebuild()

    def action_page(self, step: int) -> None:
        s = self.state
        if self.view == "week":
            assert self.anchor is not None
            self.anchor += timedelta(days=7 * step)
            s.cursor_day = s.cursor_day + timedelta(days=7 * step)
        else:
            first = s.cursor_day.replace(day=1)
            target = (
                (first + timedelta(days=32)).replace(day=1)
                if step > 0
                else (first - timedelta(days=1)).replace(day=1)
            )
            self._goto(target)
        self.pick = 0
        self._rebuild()

    def action_cursor_days(self, step: int) -> None:
        self._goto(self.state.cursor_day + timedelta(days=step))
        self.pick = 0
        self._rebuild()

    def action_cursor_vertical(self, step: int) -> None:
        s = self.state
        if self.view == "month":
            self._goto(s.cursor_day + timedelta(days=7 * step))
        else:
            i = s.rows.index(s.cursor_row) if s.cursor_row in s.rows else 0
            s.cursor_row = s.rows[max(0, min(len(s.rows) - 1, i + step))]
        self.pick = 0
        self._rebuild()

    def action_pick(self, step: int) -> None:
        here = self.cell_posts()
        if here:
            self.pick = (self.pick + step) % len(here)
            self._rebuild()

    def action_reload(self) -> None:
        self._reload()

    def action_open(self) -> None:
        post = self.selected()
        if post is None:
            return
        try:
            # deferred: socialpub_tui.screens.post_detail costs ~47 ms of the TUI's launch, paid when the screen is first opened
            from socialpub_tui.screens.post_detail import PostDetailScreen
        except ImportError:
            self.notify("The post detail screen is not in this build.", severity="warning")
            return
        self.app.push_screen(PostDetailScreen(post.id))

    # ---- actions: moving a post -------------------------------------------------------------------------
    def action_start_move(self) -> None:
        post = self.selected()
        if post is None or scheduled(post) is None:
            return
        self.moving, self.pending = post, scheduled(post)
        self._rebuild()

    def _follow_pending(self) -> None:
        assert self.pending is not None
        day, key = self.slot_key(self.pending)
        self._goto(day)
        self.state.cursor_row = key
        self._rebuild()

    def action_shift_hours(self, hours: int) -> None:
        if self.pending is not None:
            self.pending = self.pending + timedelta(hours=hours)
            self._follow_pending()

    def action_shift_days(self, days: int) -> None:
        if self.pending is not None:
            self.pending = move_by_days(self.pending, days, self.tz)
            self._follow_pending()

    def action_cancel_move(self) -> None:
        if self.moving is not None:
            original = scheduled(self.moving)
            self.moving, self.pending = None, None
            if original is not None:
                day, key = self.slot_key(original)
                self._goto(day)
                self.state.cursor_row = key
            self._rebuild()

    def action_confirm_move(self) -> None:
        if self.moving is None or self.pending is None:
            return
        if self.pending == scheduled(self.moving):
            self.action_cancel_move()
            return
        self._patch(self.moving, self.pending)

    @work(exclusive=True, group="calendar-move")
    async def _patch(self, post: PostOut, when: datetime) -> None:
        try:
            moved = await shell(self).client.edit_post(post.id, {"scheduledAt": iso_utc(when)})
        except Exception as exc:  # noqa: BLE001  (shown with the API's code)
            shell(self).report(exc, "Move post")
            self.post_message(PostMoved(None))
            return
        self.post_message(PostMoved(moved))

    def on_post_moved(self, message: PostMoved) -> None:
        if message.post is None:
            self.action_cancel_move()
            return
        self.moving, self.pending = None, None
        post = message.post
        self.posts = [post if p.id == post.id else p for p in self.posts]
        self.notify(f"Moved to {self.fmt(scheduled(post))}", title="Post moved")
        shell(self).announce(post, "moved")  # every screen, this one included, refreshes
