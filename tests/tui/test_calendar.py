"""The calendar (f3) against the embedded backend: scheduled posts in the right local day and hour (Europe/Paris,
a DST week included), moving a post from the keyboard (PATCH scheduledAt by exactly one hour / one local day),
a refused move shown with the API's code, only the visible range fetched, week/month navigation."""

from __future__ import annotations

import sys
import types
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from textual.screen import Screen

from socialpub_tui.screens.calendar import CalendarScreen
from socialpub_tui.times import iso_utc
from socialpub_tui.widgets.calendar_grid import day_slots, month_days, move_by_days, week_rows
from tests.tui.conftest import FIXED_NOW
from tests.tui.helpers import record_notifications

PARIS_TZ = __import__("zoneinfo").ZoneInfo("Europe/Paris")


def utc(*a: int) -> datetime:
    return datetime(*a, tzinfo=UTC)


# ---- the arithmetic, on its own ---------------------------------------------------------------------------
def test_local_days_have_23_24_25_hours():
    assert len(day_slots(date(2027, 3, 28), PARIS_TZ)) == 23
    assert len(day_slots(date(2027, 3, 29), PARIS_TZ)) == 24
    autumn = day_slots(date(2027, 10, 31), PARIS_TZ)
    assert len(autumn) == 25 and [s.key for s in autumn[2:4]] == [(2, 0), (2, 1)]
    assert [s.start for s in autumn[2:4]] == [
        utc(2027, 10, 31, 0),
        utc(2027, 10, 31, 1),
    ]  # 02:00 CEST, 02:00 CET
    assert (2, 1) in week_rows([date(2027, 10, 30), date(2027, 10, 31)], PARIS_TZ)
    assert 2 not in {s.key[0] for s in day_slots(date(2027, 3, 28), PARIS_TZ)}
    assert day_slots(date(2027, 3, 28), PARIS_TZ)[0].start == utc(2027, 3, 27, 23)


def test_a_day_later_keeps_the_wall_time_across_dst():
    nine = utc(2027, 3, 27, 8)  # 09:00 CET
    assert move_by_days(nine, 1, PARIS_TZ) == utc(2027, 3, 28, 7)  # 09:00 CEST: 23 real hours later
    assert move_by_days(utc(2027, 3, 27, 1, 30), 1, PARIS_TZ) == utc(
        2027, 3, 28, 1, 30
    )  # 02:30 skipped: 03:30


def test_month_grid_is_whole_weeks_monday_first():
    days = month_days(date(2027, 2, 10))
    assert days[0] == date(2027, 2, 1) and len(days) == 28  # February 2027 starts on a Monday
    days = month_days(date(2027, 3, 1))
    assert days[0] == date(2027, 3, 1) and days[-1] == date(2027, 4, 4) and len(days) % 7 == 0


# ---- against the embedded backend -------------------------------------------------------------------------
def schedule(app, at: datetime, content: str = "Calendar test post", targets=("facebook",)):  # type: ignore[no-untyped-def]
    """A scheduled post made through the app's own client (as the user would, from compose)."""
    return app.client.create_post({"targets": list(targets), "content": content, "scheduledAt": iso_utc(at)})


async def open_calendar(pilot) -> CalendarScreen:  # type: ignore[no-untyped-def]
    await pilot.press("f3")
    screen = pilot.app.screen
    assert isinstance(screen, CalendarScreen)
    await settle(pilot)
    return screen


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def cell_of(screen: CalendarScreen, post_id: str) -> tuple[date, tuple[int, int]]:
    for (day, key), posts in screen.state.cells.items():
        if any(p.id == post_id for p in posts):
            return day, key
    raise AssertionError(f"{post_id} is in no cell")


@pytest.fixture
def growth(embedded):  # type: ignore[no-untyped-def]
    """A paid plan: more than the three free publications."""
    from tests.cli.conftest import invoke

    assert (
        invoke("admin", "plan", "GROWTH", "--status", "active", "--period-end", "2099-01-01T00:00:00Z").code
        == 0
    )


@pytest.fixture
def frozen():
    """The backend's clock at the app's FIXED_NOW (ticking), so its 'in the past' matches what the app shows."""
    with time_machine.travel(FIXED_NOW, tick=True):
        yield


async def test_a_scheduled_post_shows_in_its_local_day_and_hour(tui_app, frozen):
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        evening = await schedule(app, utc(2027, 1, 17, 22, 30))  # 23:30 in Paris, Sunday the 17th
        night = await schedule(app, utc(2027, 1, 17, 23, 30))  # 00:30 in Paris: Monday the 18th
        screen = await open_calendar(pilot)
        assert screen.state.days[0] == date(2027, 1, 15) and len(screen.state.days) == 7
        assert cell_of(screen, evening.id) == (date(2027, 1, 17), (23, 0))
        assert cell_of(screen, night.id) == (date(2027, 1, 18), (0, 0))
        # the cursor reaches it from the keyboard and the agenda names it
        for _ in range(2):
            await pilot.press("right")
        while screen.state.cursor_row != (23, 0):
            await pilot.press("down")
        await pilot.pause()
        assert screen.selected() is not None and screen.selected().id == evening.id
        agenda = str(screen.query_one("#cal-agenda").render())
        assert "23:30 CET" in agenda and "Calendar test post" in agenda


async def test_a_post_scheduled_by_another_program_shows_without_r(tui_app, frozen, monkeypatch):
    """Open on the week, nothing being moved: the range is read again every IDLE_REFRESH_S, so a post scheduled by
    another program (not announced in this app) lands in its cell without `r`; while a post is being moved, the
    calendar is not read again under the user's hands."""
    from socialpub_tui.screens import posts as posts_screen

    monkeypatch.setattr(posts_screen, "IDLE_REFRESH_S", 0.3)
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        first = await schedule(app, utc(2027, 1, 16, 9, 0))
        screen = await open_calendar(pilot)
        assert cell_of(screen, first.id) == (date(2027, 1, 16), (10, 0))
        other = await app.client.create_post(
            {
                "targets": ["facebook"],
                "content": "From a recipe",
                "scheduledAt": iso_utc(utc(2027, 1, 18, 14, 0)),
            }
        )
        for _ in range(100):
            if any(p.id == other.id for p in screen.posts):
                break
            await pilot.pause(0.05)
        assert cell_of(screen, other.id) == (date(2027, 1, 18), (15, 0))
        # picked up for a move: no reading again meanwhile
        await pilot.press("right")
        while screen.state.cursor_row != (10, 0):
            await pilot.press("down")
        await pilot.press("m")
        assert screen.moving is not None
        third = await app.client.create_post(
            {
                "targets": ["facebook"],
                "content": "While moving",
                "scheduledAt": iso_utc(utc(2027, 1, 19, 14, 0)),
            }
        )
        await pilot.pause(1.0)
        assert all(p.id != third.id for p in screen.posts)
        await pilot.press("escape")
        for _ in range(100):
            if any(p.id == third.id for p in screen.posts):
                break
            await pilot.pause(0.05)
        assert any(p.id == third.id for p in screen.posts)


async def test_a_dst_week_in_paris(tui_app):
    now = utc(2027, 3, 25, 8, 0)  # Thursday; Sunday the 28th has 23 hours
    with time_machine.travel(now, tick=True):
        app = tui_app(clock=lambda: now, worker=False)
        async with app.run_test(size=(100, 30)) as pilot:
            before = await schedule(app, utc(2027, 3, 28, 0, 30))  # 01:30 CET
            after = await schedule(app, utc(2027, 3, 28, 1, 30))  # 03:30 CEST: one real hour later
            late = await schedule(app, utc(2027, 3, 28, 21, 30))  # 23:30 CEST, still the 28th
            screen = await open_calendar(pilot)
            assert cell_of(screen, before.id) == (date(2027, 3, 28), (1, 0))
            assert cell_of(screen, after.id) == (date(2027, 3, 28), (3, 0))
            assert cell_of(screen, late.id) == (date(2027, 3, 28), (23, 0))
            assert (2, 0) not in screen.state.slots[date(2027, 3, 28)]  # 02:00 does not exist that day
            assert "Sun 28: 23 h, no 02:00" in str(screen.query_one("#cal-title").render())
            # moving 01:30 CET by one hour lands at 03:30 CEST, the next row of that day
            while screen.state.cursor_day != date(2027, 3, 28):
                await pilot.press("right")
            while screen.state.cursor_row != (1, 0):
                await pilot.press("up" if screen.state.cursor_row > (1, 0) else "down")
            await pilot.press("m", "down")
            assert screen.pending == utc(2027, 3, 28, 1, 30) and screen.state.cursor_row == (3, 0)
            await pilot.press("escape")


async def test_keyboard_move_patches_scheduled_at_by_exactly_one_hour(tui_app, frozen):
    app = tui_app(worker=False)
    changes = []
    async with app.run_test(size=(100, 30)) as pilot:
        post = await schedule(app, utc(2027, 1, 15, 9, 0))  # 10:00 in Paris, today
        screen = await open_calendar(pilot)
        app.post_changed.subscribe(screen, changes.append)
        while screen.state.cursor_row != (10, 0):
            await pilot.press("down" if screen.state.cursor_row < (10, 0) else "up")
        assert screen.selected().id == post.id
        await pilot.press("m")
        assert screen.moving is not None
        await pilot.press("down")
        assert "11:00" in str(screen.query_one("#cal-agenda").render())
        await pilot.press("enter")
        await settle(pilot)
        moved = await app.client.get_post(post.id)
        assert moved.scheduled_at is not None
        assert datetime.fromisoformat(moved.scheduled_at.replace("Z", "+00:00")) - utc(
            2027, 1, 15, 9, 0
        ) == timedelta(hours=1)
        assert moved.id == post.id and moved.status == "scheduled"
        assert [(c.post.id, c.action) for c in changes] == [(post.id, "moved")]
        assert screen.moving is None and cell_of(screen, post.id) == (date(2027, 1, 15), (11, 0))


async def test_a_day_later_and_escape_puts_it_back(tui_app, frozen):
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        post = await schedule(app, utc(2027, 1, 15, 9, 0))
        screen = await open_calendar(pilot)
        while screen.state.cursor_row != (10, 0):
            await pilot.press("down" if screen.state.cursor_row < (10, 0) else "up")
        await pilot.press("m", "right", "right", "left")
        assert screen.pending == utc(2027, 1, 16, 9, 0) and screen.state.cursor_day == date(2027, 1, 16)
        await pilot.press("escape")
        assert screen.moving is None and cell_of(screen, post.id) == (date(2027, 1, 15), (10, 0))
        await pilot.press("m", "right", "enter")
        await settle(pilot)
        assert (await app.client.get_post(post.id)).scheduled_at.startswith("2027-01-16T09:00:00")


async def test_a_refused_move_is_reported_with_the_api_code(tui_app, frozen):
    app = tui_app(worker=False)
    shown = record_notifications(app)
    async with app.run_test(size=(100, 30)) as pilot:
        post = await schedule(app, utc(2027, 1, 15, 9, 0))
        screen = await open_calendar(pilot)
        while screen.state.cursor_row != (10, 0):
            await pilot.press("down" if screen.state.cursor_row < (10, 0) else "up")
        await pilot.press("m", "up", "up", "up")  # 07:00 Paris = 06:00Z: before FIXED_NOW (08:00Z)
        assert "In the past" in str(screen.query_one("#cal-agenda").render())
        await pilot.press("enter")
        await settle(pilot)
        titles = [n["title"] for n in shown]
        assert "scheduled_at_in_past" in titles
        assert (await app.client.get_post(post.id)).scheduled_at.startswith("2027-01-15T09:00:00")
        assert screen.moving is None and cell_of(screen, post.id) == (date(2027, 1, 15), (10, 0))


async def test_enter_opens_the_post_detail(tui_app, frozen, monkeypatch):
    opened: list[str] = []

    class PostDetailScreen(
        Screen[None]
    ):  # stands in for the detail screen built elsewhere (pinned signature)
        def __init__(self, post_id: str) -> None:
            super().__init__()
            opened.append(post_id)

    module = types.ModuleType("socialpub_tui.screens.post_detail")
    module.PostDetailScreen = PostDetailScreen  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "socialpub_tui.screens.post_detail", module)
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        post = await schedule(app, utc(2027, 1, 15, 9, 0))
        screen = await open_calendar(pilot)
        while screen.state.cursor_row != (10, 0):
            await pilot.press("down" if screen.state.cursor_row < (10, 0) else "up")
        await pilot.press("enter")
        await pilot.pause()
        assert opened == [post.id] and isinstance(app.screen, PostDetailScreen)


async def test_only_the_visible_range_is_fetched_and_navigation(tui_app, frozen):
    app = tui_app(worker=False)
    calls: list[dict] = []
    async with app.run_test(size=(100, 30)) as pilot:
        far = await schedule(app, utc(2027, 2, 3, 9, 0))
        real = app.client.list_posts

        async def spy(**filters):  # type: ignore[no-untyped-def]
            calls.append(filters)
            return await real(**filters)

        app.client.list_posts = spy
        screen = await open_calendar(pilot)
        assert calls[-1]["status"] == ["scheduled"] and calls[-1]["time_field"] == "scheduledAt"
        assert (calls[-1]["since"], calls[-1]["until"]) == ("2027-01-14T23:00:00Z", "2027-01-21T23:00:00Z")
        assert far.id not in {p.id for p in screen.posts}
        await pilot.press("pagedown", "pagedown", "pagedown")
        await settle(pilot)
        assert screen.state.days[0] == date(2027, 2, 5)
        await pilot.press("pageup")
        await settle(pilot)
        assert screen.state.days[0] == date(2027, 1, 29) and far.id in {p.id for p in screen.posts}
        await pilot.press("v")
        await settle(pilot)
        assert screen.view == "month" and screen.state.month == 1
        assert (calls[-1]["since"], calls[-1]["until"]) == (
            "2026-12-27T23:00:00Z",
            "2027-01-31T23:00:00Z",
        )  # Mon 28 Dec - Sun 31 Jan
        await pilot.press("pagedown")
        await settle(pilot)
        assert screen.state.month == 2 and far.id in {p.id for p in screen.state.per_day[date(2027, 2, 3)]}
        await pilot.press("t")
        await settle(pilot)
        assert screen.state.cursor_day == date(2027, 1, 15)


async def test_paging_through_a_full_week(tui_app, frozen, growth, monkeypatch):
    from socialpub_tui.screens import calendar

    monkeypatch.setattr(calendar, "PAGE_SIZE", 2)
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        made = [await schedule(app, utc(2027, 1, 16, 8 + i, 0), f"post {i}") for i in range(5)]
        screen = await open_calendar(pilot)
        assert {p.id for p in screen.posts} == {p.id for p in made}


async def test_a_slot_says_how_many_posts_and_its_detail_never_cuts_the_relative_time(
    tui_app, frozen, growth
):
    """Issue 33: a 3-post slot showed only `08:00 +2`; the slot's detail cut "in 48 days 8…" at the line's end."""
    app = tui_app(worker=False)
    long_text = "A long announcement that goes on and on " * 5
    async with app.run_test(size=(120, 40)) as pilot:
        made = [
            await schedule(app, utc(2027, 1, 16, 8), long_text + str(i), targets=("facebook", "linkedin"))
            for i in range(3)
        ]
        screen = await open_calendar(pilot)
        day, key = cell_of(screen, made[0].id)
        assert (day, key) == (date(2027, 1, 16), (9, 0))
        await pilot.press("right")
        while screen.state.cursor_row != (9, 0):
            await pilot.press("down" if screen.state.cursor_row < (9, 0) else "up")
        await pilot.pause()
        grid = str(screen.query_one("WeekGrid").render())
        assert "09:00 3 posts" in grid and "+2" not in grid, grid
        agenda = str(screen.query_one("#cal-agenda").render())
        lines = [line for line in agenda.splitlines() if "09:00 CET  " in line]
        assert len(lines) == 3 and all("in 1 day" in line for line in lines), agenda
        for line in lines:  # the relative time comes before the text the line's end cuts
            assert line.index("in 1 day") < line.index("A long announcement")
