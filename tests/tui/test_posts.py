"""The posts screen against the embedded backend (the worker in this process): order, filters, search, paging
through 10,000 posts with a bounded window, live refresh keeping the cursor, opening a post."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.widgets import Input, Select, Static

from socialpub_tui.screens import posts as posts_screen
from socialpub_tui.screens.posts import PostsScreen, date_bound
from socialpub_tui.times import DisplayZone
from socialpub_tui.widgets.post_list import PAGE_SIZE, RESIDENT_PAGES, PostList
from tests.tui.conftest import ZONE
from tests.tui.helpers import press_until


def iso(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def in_days(days: float) -> str:
    return iso(datetime.now(UTC) + timedelta(days=days))


async def until(pilot: Any, condition: Callable[[], bool], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            line = inspect.stack()[1]
            raise AssertionError(
                f"condition not met in time (line {line.lineno}: {line.code_context[0].strip() if line.code_context else ''})"
            )
        await pilot.pause(0.02)


def focused(app: Any, selector: str) -> bool:
    """The widget of `selector` on the current screen has the focus."""
    return app.focused is not None and app.focused is app.screen.query_one(selector)


def the_list(app: Any) -> PostList:
    assert isinstance(app.screen, PostsScreen)
    return app.screen.query_one(PostList)


def shown_ids(app: Any) -> list[str]:
    window = the_list(app).window
    return [window.row(i).id for i in range(window.known)]  # type: ignore[union-attr]


def status_line(app: Any) -> str:
    return str(app.screen.query_one("#posts-status-line", Static).content)


def line(app: Any, y: int) -> str:
    return the_list(app).render_line(y).text


async def settled(pilot: Any, app: Any) -> None:
    """The first page of the current query is shown and nothing is being read."""
    await until(pilot, lambda: isinstance(app.screen, PostsScreen) and bool(app.screen.query(PostList)))
    post_list = the_list(app)
    await until(pilot, lambda: not post_list.loading and not post_list.reading)


async def test_next_due_first_then_most_recent_with_badges(tui_app) -> None:
    app = tui_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        c = app.client
        done = await c.create_post({"targets": ["facebook"], "content": "Sent first"})
        later = await c.create_post(
            {
                "targets": ["linkedin", "facebook"],
                "content": "Next week\nmore text",
                "scheduledAt": in_days(7),
            }
        )
        soon = await c.create_post(
            {"targets": ["facebook"], "content": "  \nTomorrow's news", "scheduledAt": in_days(1)}
        )
        await c.wait_post(done.id, timeout=20, interval=0.05)
        await pilot.press("r")
        await until(pilot, lambda: shown_ids(app) == [soon.id, later.id, done.id])
        await until(pilot, lambda: the_list(app).window.row(2).status == "completed")  # type: ignore[union-attr]
        zone = DisplayZone(ZONE)
        header, first, second, third = (line(app, y) for y in range(4))
        assert header.split() == ["when", "status", "targets", "text"]
        assert first.split()[:5] == [*zone.format(soon.scheduled_at).split(), "scheduled", "FB"]
        assert first.rstrip().endswith("Tomorrow's news")  # the first line with text
        assert second.split()[3:7] == ["scheduled", "LI", "FB", "Next"] and "more text" not in second
        assert third.split()[:5] == [*zone.format(done.created_at).split(), "completed", "FB"]
        # each badge in its target's status colour
        strip = the_list(app).render_line(3)
        colours = {seg.text: seg.style.color.name for seg in strip if seg.text in ("FB", "completed")}
        assert colours == {"FB": "green", "completed": "green"}


async def test_filters_and_search(tui_app, monkeypatch) -> None:
    monkeypatch.setattr(posts_screen, "SEARCH_DEBOUNCE_S", 0.05)
    app = tui_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        c = app.client
        accounts = (await c.list_accounts()).items
        sale = await c.create_post(
            {"targets": ["facebook"], "content": "Spring SALE starts", "scheduledAt": in_days(2)}
        )
        cafe = await c.create_post(
            {"targets": ["linkedin"], "content": "Le Café ouvre", "scheduledAt": in_days(3)}
        )
        other = await c.create_post(
            {"targets": ["facebook", "linkedin"], "content": "Team news", "scheduledAt": in_days(20)}
        )
        await c.cancel_post(other.id)
        await pilot.press("r")
        await until(pilot, lambda: len(shown_ids(app)) == 3)

        await press_until(pilot, "slash", lambda: focused(app, "#posts-search"))
        await pilot.press(*"sale")  # search: case-insensitive, debounced
        await until(pilot, lambda: shown_ids(app) == [sale.id])
        await press_until(pilot, "enter", lambda: isinstance(app.focused, PostList))  # back to the list
        await press_until(pilot, "slash", lambda: focused(app, "#posts-search"))
        await pilot.press("ctrl+u", *"CAFÉ")
        await until(pilot, lambda: shown_ids(app) == [cafe.id])
        await pilot.press("escape")

        await pilot.press("x")  # clear
        await until(pilot, lambda: len(shown_ids(app)) == 3)
        app.screen.query_one("#posts-status", Select).value = "cancelled"
        await until(pilot, lambda: shown_ids(app) == [other.id])
        app.screen.query_one("#posts-status", Select).clear()
        app.screen.query_one("#posts-network", Select).value = "linkedin"
        await until(pilot, lambda: shown_ids(app) == [cafe.id, other.id])
        linkedin = next(a for a in accounts if a.platform == "linkedin")
        await app.workers.wait_for_complete()  # the account choices are loaded
        app.screen.query_one("#posts-network", Select).clear()
        app.screen.query_one("#posts-account", Select).value = linkedin.id
        await until(pilot, lambda: shown_ids(app) == [cafe.id, other.id])

        await pilot.press("x")
        await until(pilot, lambda: len(shown_ids(app)) == 3)
        # dates, in the user's zone, on the due time: from the day after tomorrow to the day three days ahead
        start = (datetime.now(UTC) + timedelta(days=2)).astimezone(DisplayZone(ZONE).tz).date()
        await press_until(pilot, "d", lambda: focused(app, "#posts-from"))
        await pilot.press(*start.isoformat())
        await press_until(pilot, "tab", lambda: focused(app, "#posts-to"))
        await pilot.press(*(start + timedelta(days=1)).isoformat(), "enter")
        await until(pilot, lambda: set(shown_ids(app)) == {sale.id, cafe.id})
        # the date's typing pause can apply it before `enter` is handled: wait for `enter` to give the focus back to
        # the list, else the next key can still reach the date box (as text) on a loaded machine
        try:
            await until(pilot, lambda: isinstance(app.focused, PostList))
        except AssertionError as exc:  # say where the focus is, and what the date boxes hold
            boxes = {box: app.screen.query_one(box, Input).value for box in ("#posts-from", "#posts-to")}
            raise AssertionError(f"{exc}; focused: {app.focused!r}; {boxes}") from None
        assert the_list(app).query_params["time_field"] == "dueAt"
        # a date that does not read is said so, and left out
        await press_until(pilot, "d", lambda: focused(app, "#posts-from"))
        await pilot.press("ctrl+u", *"someday")
        await until(pilot, lambda: "from:" in status_line(app))
        assert app.screen.query_one("#posts-from", Input).has_class("-invalid")


async def test_an_older_search_answering_late_is_dropped(tui_app, monkeypatch) -> None:
    monkeypatch.setattr(posts_screen, "SEARCH_DEBOUNCE_S", 0.01)
    app = tui_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        c = app.client
        apple = await c.create_post(
            {"targets": ["facebook"], "content": "apple pie", "scheduledAt": in_days(1)}
        )
        await c.create_post({"targets": ["facebook"], "content": "apricot jam", "scheduledAt": in_days(2)})
        await pilot.press("r")
        await until(pilot, lambda: len(shown_ids(app)) == 2)
        real = c.list_posts
        answered: list[str | None] = []
        release = asyncio.Event()

        async def slow_for_ap(**params: Any) -> Any:
            if params.get("q") == "ap":
                await release.wait()  # the older query answers last: only once the newer one is shown
            page = await real(**params)
            answered.append(params.get("q"))
            return page

        monkeypatch.setattr(c, "list_posts", slow_for_ap)
        await press_until(pilot, "slash", lambda: focused(app, "#posts-search"))
        await pilot.press("a", "p")
        await pilot.pause(0.1)  # "ap" is on its way
        await pilot.press("p")  # "app"
        await until(pilot, lambda: shown_ids(app) == [apple.id])
        release.set()  # a search still waiting would answer now, after the newer one
        await pilot.pause(0.3)
        assert shown_ids(app) == [apple.id] and the_list(app).query_params["q"] == "app"
        assert "ap" not in answered  # cancelled: it never replaced the newer answer


async def test_pages_through_10000_posts_with_a_bounded_window(tui_app, embedded) -> None:
    from tests.support.bulk_posts import insert_posts

    app = tui_app(worker=False)
    made = insert_posts(embedded["workspaceId"], 10_000)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        post_list = the_list(app)
        calls = 0
        real = app.client.list_posts

        async def counted(**params: Any) -> Any:
            nonlocal calls
            calls += 1
            return await real(**params)

        app.client.list_posts = counted  # type: ignore[method-assign]
        await pilot.press("r")
        await settled(pilot, app)
        assert post_list.cursor_post.id == made.upcoming[0]  # type: ignore[union-attr]
        most = 0
        for _ in range(25):  # screen pages, checking the row under the cursor each time
            await pilot.press("pagedown")
            await until(pilot, lambda: post_list.cursor_post is not None)
            assert post_list.cursor_post.id == made.upcoming[post_list.cursor_row]  # type: ignore[union-attr]
            most = max(most, post_list.window.resident_rows)
        while not post_list.window.complete:  # to the end: what `end` does, without the pilot's ~70 ms a key
            post_list.action_last()
            await until(pilot, lambda: not post_list.reading)
            most = max(most, post_list.window.resident_rows)
        await pilot.press("end")
        await until(pilot, lambda: post_list.cursor_post is not None)
        assert post_list.window.known == 10_000
        assert post_list.cursor_post.id == made.upcoming[-1]  # type: ignore[union-attr]
        assert "post 10,000 of 10,000" in status_line(app)
        assert most <= RESIDENT_PAGES * PAGE_SIZE
        assert calls <= 10_000 // PAGE_SIZE + 5  # each page read once on the way down
        await pilot.press("home")  # back to the top: read again from its bookmark
        await until(pilot, lambda: post_list.cursor_post is not None)
        assert post_list.cursor_post.id == made.upcoming[0]  # type: ignore[union-attr]
        assert line(app, 1).split()[3] == "scheduled"
        for _ in range(3):
            await pilot.press("down")
        assert post_list.cursor_post.id == made.upcoming[3]  # type: ignore[union-attr]
        assert post_list.window.resident_rows <= RESIDENT_PAGES * PAGE_SIZE


async def test_live_refresh_keeps_the_cursor_on_its_post(tui_app, embedded, monkeypatch) -> None:
    from tests.support.bulk_posts import insert_posts

    monkeypatch.setattr(posts_screen, "LIVE_TICK_S", 0.2)
    app = tui_app(clock=lambda: datetime.now(UTC))
    made = insert_posts(embedded["workspaceId"], 40, scheduled_share=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        c = app.client
        soon = await c.create_post(
            {
                "targets": ["facebook"],
                "content": "In three minutes",
                "scheduledAt": iso(datetime.now(UTC) + timedelta(minutes=3)),
            }
        )
        await pilot.press("r")
        post_list = the_list(app)
        await until(pilot, lambda: shown_ids(app)[:2] == [soon.id, made.past[0]])
        # the cursor was on the first post; the new one arrived above it: it stays on its post
        assert post_list.cursor_post.id == made.past[0] and post_list.cursor_row == 1  # type: ignore[union-attr]
        for _ in range(5):
            await pilot.press("down")
        target = made.past[5]
        assert post_list.cursor_post.id == target and post_list.cursor_row == 6  # type: ignore[union-attr]
        # a post created elsewhere (not announced in this app): the live refresh brings it in above the cursor
        now = await c.create_post({"targets": ["facebook", "linkedin"], "content": "Going out now"})
        await until(pilot, lambda: now.id in shown_ids(app))
        assert shown_ids(app)[:3] == [soon.id, now.id, made.past[0]]
        assert post_list.cursor_post.id == target and post_list.cursor_row == 7  # type: ignore[union-attr]
        assert "live" in status_line(app)
        # and shows it being published, then done, while the cursor stays put
        await until(pilot, lambda: post_list.window.row(1).status == "completed", within=20)  # type: ignore[union-attr]
        assert post_list.cursor_post.id == target  # type: ignore[union-attr]


async def test_a_post_made_by_another_program_shows_without_r_when_nothing_is_live(
    tui_app, embedded, monkeypatch
) -> None:
    """Nothing on screen is live (every post final): the rows are still read again every IDLE_REFRESH_S, so a post
    scheduled for tomorrow by another program (not announced in this app) shows without `r`."""
    from tests.support.bulk_posts import insert_posts

    monkeypatch.setattr(posts_screen, "LIVE_TICK_S", 0.2)
    monkeypatch.setattr(posts_screen, "IDLE_REFRESH_S", 0.6)
    app = tui_app(clock=lambda: datetime.now(UTC))
    made = insert_posts(embedded["workspaceId"], 5, scheduled_share=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)
        assert shown_ids(app) == made.past and "live" not in status_line(app)
        other = await app.client.create_post(
            {
                "targets": ["facebook"],
                "content": "From the CLI",
                "scheduledAt": iso(datetime.now(UTC) + timedelta(days=1)),
            }
        )
        await until(pilot, lambda: shown_ids(app)[:1] == [other.id], within=5)
        assert the_list(app).cursor_post.id == made.past[0]  # type: ignore[union-attr]


async def test_a_change_announced_in_the_app_refreshes_the_list(tui_app, monkeypatch) -> None:
    monkeypatch.setattr(posts_screen, "LIVE_TICK_S", 3600)
    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "Made in compose", "scheduledAt": in_days(1)}
        )
        app.announce(post, "created")
        await until(pilot, lambda: shown_ids(app) == [post.id])


async def test_enter_opens_the_post(tui_app) -> None:
    from socialpub_tui.screens.post_detail import PostDetailScreen

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        first = await app.client.create_post(
            {"targets": ["facebook"], "content": "one", "scheduledAt": in_days(1)}
        )
        second = await app.client.create_post(
            {"targets": ["facebook"], "content": "two", "scheduledAt": in_days(2)}
        )
        await pilot.press("r")
        await until(pilot, lambda: shown_ids(app) == [first.id, second.id])
        await pilot.press("down", "enter")
        assert isinstance(app.screen, PostDetailScreen) and app.screen.post_id == second.id
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, PostsScreen))
        assert the_list(app).cursor_post.id == second.id  # type: ignore[union-attr]


async def test_every_action_has_a_described_binding_with_an_id(tui_app) -> None:
    from socialpub_tui.commands import SocialpubCommands

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        for binding in PostsScreen.BINDINGS:
            assert binding.id and binding.description, binding  # type: ignore[union-attr]
        provider = SocialpubCommands(app.screen)
        found = {hit.text async for hit in provider.search("filter")}
        assert "Clear filters" in found
        assert "Open" not in {hit.text async for hit in provider.search("open")}  # no post to open: dimmed
        await app.client.create_post({"targets": ["facebook"], "content": "one", "scheduledAt": in_days(1)})
        await pilot.press("r")
        await until(pilot, lambda: the_list(app).cursor_post is not None)
        await pilot.pause()
        assert "Open" in {hit.text async for hit in provider.search("open")}


def test_date_boxes_read_days_in_the_users_zone() -> None:
    now = datetime(2027, 3, 20, 12, 0, tzinfo=UTC)
    assert date_bound("2027-03-28", "Europe/Paris", now, end=False) == "2027-03-27T23:00:00Z"
    # `to` a day includes it: up to the next midnight, which is after the spring-forward change here
    assert date_bound("2027-03-28", "Europe/Paris", now, end=True) == "2027-03-28T22:00:00Z"
    assert date_bound("2027-03-28 09:30", "Europe/Paris", now, end=True) == "2027-03-28T07:30:00Z"
    assert date_bound(" ", "Europe/Paris", now, end=False) is None
    # today / tomorrow / yesterday are days, as the CLI's --from reads them (23:30 UTC is already the 21st in Paris)
    late = datetime(2027, 3, 20, 23, 30, tzinfo=UTC)
    assert date_bound("today", "Europe/Paris", late, end=False) == "2027-03-20T23:00:00Z"
    assert date_bound("Tomorrow", "Europe/Paris", late, end=True) == "2027-03-22T23:00:00Z"
    assert date_bound("yesterday", "Europe/Paris", late, end=False) == "2027-03-19T23:00:00Z"
    with pytest.raises(posts_screen.DateError):
        date_bound("someday", "Europe/Paris", now, end=False)


async def test_a_failed_read_is_reported_and_r_reads_again(tui_app, monkeypatch) -> None:
    from socialpub_tui.client.errors import ApiError

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot, app)  # the first page read before the test changes anything
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "one", "scheduledAt": in_days(1)}
        )
        await pilot.press("r")
        await until(pilot, lambda: shown_ids(app) == [post.id])
        real = app.client.list_posts
        reported: list[tuple[BaseException, str]] = []
        monkeypatch.setattr(app, "report", lambda exc, action="": reported.append((exc, action)))

        async def down(**params: Any) -> Any:
            raise ApiError(503, "service_unavailable", "the server is restarting")

        monkeypatch.setattr(app.client, "list_posts", down)
        app.screen.query_one("#posts-status", Select).value = "failed"
        await until(pilot, lambda: the_list(app).failed is not None)
        assert shown_ids(app) == []  # the rows of the previous filters are not shown under the new ones
        assert "r reads again" in line(app, 1)
        assert "could not read the posts" in status_line(app)
        assert [(e.code, action) for e, action in reported] == [("service_unavailable", "Reading the posts")]
        monkeypatch.setattr(app.client, "list_posts", real)
        await pilot.press("r")
        await until(pilot, lambda: the_list(app).failed is None and not the_list(app).reading)
        assert shown_ids(app) == [] and "no post matches" in line(app, 1)  # no failed post: read, not failing
        await pilot.press("x")
        await until(pilot, lambda: shown_ids(app) == [post.id])


async def test_an_account_connected_meanwhile_is_offered_by_the_filter_which_keeps_its_choice(
    tui_app,
) -> None:
    from tests.cli.conftest import invoke

    assert invoke("admin", "plan", "GROWTH").code == 0  # room for a sixth account
    app = tui_app(worker=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, PostsScreen))
        screen = app.screen
        # the account choices are read once the first page is drawn (a worker started after that refresh: waiting
        # for the app's workers can return before it exists)
        await until(pilot, lambda: screen.account_options)
        select = screen.query_one("#posts-account", Select)
        first = (await app.client.list_accounts()).items[0]
        select.value = first.id
        added = await app.client.add_sandbox_account("facebook", "Second page")
        await pilot.press("f4")  # the accounts screen, then back to the posts
        await until(pilot, lambda: app.screen is not screen)
        await pilot.press("f2")
        await until(pilot, lambda: app.screen is screen)
        await until(pilot, lambda: any(value == added.id for _, value in screen.account_options))
        assert select.value == first.id  # the filter in force is kept


async def test_a_filter_opens_with_an_option_highlighted_so_the_first_down_moves(tui_app) -> None:
    """Issue 33: `s` opened the status list with nothing highlighted: the first `down` seemed lost."""
    app = tui_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settled(pilot, app)
        await pilot.press("s")
        select = app.screen.query_one("#posts-status", Select)
        await pilot.pause()
        assert select.expanded
        await pilot.press("down", "enter")
        await pilot.pause()
        assert select.value == "scheduled"  # the first status after "any status"
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert select.value == "processing"  # from the current one


async def test_a_filter_list_stops_at_its_last_option(tui_app) -> None:
    app = tui_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await settled(pilot, app)
        await pilot.press("s")
        await pilot.pause()
        await pilot.press(*["down"] * 12, "enter")  # more than there are statuses: no wrap to the top
        await pilot.pause()
        assert app.screen.query_one("#posts-status", Select).value == "cancelled"
