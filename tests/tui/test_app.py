"""The app shell: modes, help, the palette's commands, quitting from every screen."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from socialpub_tui.screens import posts as posts_screen
from socialpub_tui.screens.help import HelpScreen


@pytest.mark.parametrize(
    "key,screen",
    [
        ("f2", "PostsScreen"),
        ("f3", "CalendarScreen"),
        ("f4", "AccountsScreen"),
        ("f5", "ActivityScreen"),
        ("f6", "GenerationsScreen"),
    ],
)
async def test_function_keys_switch_modes(tui_app, key: str, screen: str) -> None:
    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(key)
        await pilot.pause()
        assert type(app.screen).__name__ == screen


async def test_help_lists_the_keys_of_the_screen_below(tui_app) -> None:
    from textual.widgets import DataTable

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        described = {row[1] for row in rows}
        assert {"Quit", "Posts", "Calendar", "New post"} <= described
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_palette_offers_every_binding_by_its_description(tui_app) -> None:
    from socialpub_tui.commands import SocialpubCommands

    app = tui_app()
    async with app.run_test(size=(100, 30)):
        provider = SocialpubCommands(app.screen)
        found = [hit.text async for hit in provider.search("cal")]
        assert "Calendar" in found


@pytest.mark.parametrize("start", ["f2", "f3", "f4", "f5", "f6", "f1", "n"])
async def test_ctrl_q_quits_from_every_screen(tui_app, start: str) -> None:
    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(start)
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0 or app.return_code is None
    assert not app.is_running


async def test_the_embedded_worker_starts_once_the_first_page_is_drawn(data_dir, monkeypatch) -> None:
    """The worker is left out of the launch (AsyncClient.ready()): not running when the first page arrives,
    running soon after; a post created then goes out. (The latest start, READY_AT_THE_LATEST_S after mount, is
    put out of reach: on a loaded machine the first page came after it, and the worker rightly started first.)"""
    from socialpub_tui.app import SocialpubApp
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.client.embedded import client_kwargs
    from socialpub_tui.widgets.post_list import PostList
    from tests.tui.helpers import until

    monkeypatch.setattr(SocialpubApp, "READY_AT_THE_LATEST_S", 600.0)
    kwargs = client_kwargs(data_dir, asynchronous=True)
    backend = kwargs["on_ready"].__self__.backend
    assert backend.worker is None
    at_first_page: list[object] = []

    def hook(message: object) -> None:
        if isinstance(message, PostList.PageLoaded) and not at_first_page:
            at_first_page.append(backend.worker)

    app = SocialpubApp(AsyncClient(**kwargs))
    async with app.run_test(size=(100, 30), message_hook=hook) as pilot:
        await until(pilot, lambda: backend.worker is not None, what="the worker")
        assert at_first_page == [None]
        post = await app.client.create_post({"targets": ["linkedin"], "content": "sent by the TUI's worker"})
        assert (await app.client.wait_post(post.id, timeout=30, interval=0.1)).status == "completed"
    assert backend.stopped and backend.worker is None


async def test_the_launch_ends_with_the_collectors_defaults(tui_app) -> None:
    """socialpub_tui raises the collector's first threshold while the process starts; the first screen drawn
    ends that: what the start-up built is frozen and the default thresholds are back."""
    import gc

    import socialpub_tui
    from socialpub_tui.widgets.post_list import PostList
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await until(
            pilot, lambda: app.screen.query(PostList) and app.screen.query_one(PostList).window.complete
        )
        await until(
            pilot, lambda: gc.get_threshold() == socialpub_tui.DEFAULT_GC_THRESHOLD, what="the defaults"
        )
        assert gc.get_freeze_count() > 0
        assert socialpub_tui.STARTUP_GC_THRESHOLD[0] > socialpub_tui.DEFAULT_GC_THRESHOLD[0]
        await app.workers.wait_for_complete()  # the account filter's choices, read after the first page


async def test_the_posts_footer_is_built_once_with_the_first_page(tui_app, monkeypatch) -> None:
    """The posts screen's keys change with its first page (`Open` on a post): the footer waits for it and builds
    its keys once, not once before and once after."""
    from textual.widgets import Footer as TextualFooter

    from socialpub_tui.widgets.footer import Footer
    from socialpub_tui.widgets.post_list import PostList
    from tests.tui.helpers import until

    builds: list[bool] = []
    build = TextualFooter.recompose

    async def counted(self: TextualFooter) -> None:
        builds.append(True)
        await build(self)

    monkeypatch.setattr(TextualFooter, "recompose", counted)
    # the footer waits this long at most for the first page: longer than any first page on a loaded machine (with
    # the default 0.5 s, a first page later than that is drawn with a second build, as it should be)
    monkeypatch.setattr(posts_screen, "FOOTER_WAIT_S", 10.0)
    app = tui_app()
    await app.client.create_post({"targets": ["facebook"], "content": "one post to open"})
    real = app.client.list_posts

    async def slow_first_page(**params: Any) -> Any:
        await asyncio.sleep(0.15)  # the screen is up before its first page (a large store, a remote server)
        return await real(**params)

    monkeypatch.setattr(app.client, "list_posts", slow_first_page)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(
            pilot, lambda: app.screen.query(PostList) and app.screen.query_one(PostList).window.complete
        )
        footer = app.screen.query_one(Footer)
        await until(pilot, lambda: len(footer.children) > 0, what="the footer's keys")
        await pilot.pause(0.2)
        assert len(builds) == 1
        await app.workers.wait_for_complete()


def test_an_api_errors_details_name_their_network_once_each() -> None:
    """A per-target refusal repeats the message once per target: the notification names the networks instead."""
    from socialpub_tui.app import _details_text
    from socialpub_tui.client.errors import ApiError

    message = "scheduledAt 2026-11-24T08:00:00.000Z is already past"
    per_target = ApiError(
        400,
        "scheduled_at_in_past",
        message,
        [
            {"platform": p, "error": "scheduled_at_in_past", "message": message}
            for p in ("facebook", "instagram", "linkedin")
        ],
    )
    assert _details_text(per_target) == "facebook; instagram; linkedin"
    fields = ApiError(
        400,
        "validation_error",
        "invalid request: content",
        [{"field": "content", "error": "value_error", "message": "the NUL character is not allowed"}],
    )
    assert _details_text(fields) == "content: the NUL character is not allowed"
    assert _details_text(ApiError(409, "post_not_editable", "only scheduled posts can be edited")) == ""


# ---- leaving a draft: ctrl+q and the mode keys ------------------------------------------------------------


async def start_a_draft(pilot: Any, text: str = "draft") -> Any:
    from textual.widgets import TextArea

    from socialpub_tui.screens.compose import ComposeScreen
    from tests.tui.helpers import until

    await pilot.press("n")
    screen = await until(
        pilot,
        lambda: isinstance(pilot.app.screen, ComposeScreen) and pilot.app.screen,
        what="the compose screen",
    )
    await until(
        pilot, lambda: pilot.app.focused is screen.query_one("#compose-text", TextArea), what="the text"
    )
    await pilot.press(*text)
    await until(
        pilot, lambda: screen.query_one("#compose-text", TextArea).text == text, what="the text typed"
    )
    return screen


async def test_ctrl_q_with_an_unsent_draft_asks_and_escape_keeps_it(tui_app) -> None:
    from textual.widgets import TextArea

    from socialpub_tui.screens.confirm import ConfirmScreen
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        compose = await start_a_draft(pilot)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert app.is_running and "not sent" in app.screen.question
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is compose, what="back to the draft")
        assert compose.query_one("#compose-text", TextArea).text == "draft"
        assert app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("ctrl+q")  # a second ctrl+q quits
        await until(pilot, lambda: not app.is_running, what="the app to quit")
    assert not app.is_running


async def test_ctrl_q_asks_for_a_draft_left_in_another_mode_and_y_quits(tui_app) -> None:
    from socialpub_tui.screens.compose import ComposeScreen
    from socialpub_tui.screens.confirm import ConfirmScreen
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        compose = await start_a_draft(pilot)
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "CalendarScreen", what="the calendar")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "(in Posts: f2)" in app.screen.question
        await pilot.press("n")  # back to the draft: its mode is shown
        await until(pilot, lambda: app.screen is compose, what="the draft, in the posts mode")
        assert app.current_mode == "posts" and isinstance(app.screen, ComposeScreen)
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, what="the app to quit")


async def test_ctrl_q_on_the_posts_screen_quits_with_one_key(tui_app) -> None:
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: type(app.screen).__name__ == "PostsScreen", what="the posts screen")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running, limit_s=2, what="the app to quit")


async def test_the_posts_key_goes_back_to_the_list_from_a_post_detail(tui_app) -> None:
    from socialpub_tui.screens.post_detail import PostDetailScreen
    from socialpub_tui.screens.posts import PostsScreen
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "hello", "scheduledAt": "2099-01-01T09:00:00Z"}
        )
        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post, what="the detail"
        )
        await pilot.press("f2")  # in the posts mode already: back to its list
        await until(pilot, lambda: isinstance(app.screen, PostsScreen), what="the list")
        assert len(app.screen_stack) == 1
        # the same from another mode: the posts mode left on a detail comes back at its list
        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post, what="the detail"
        )
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "CalendarScreen", what="the calendar")
        await pilot.press("f2")
        await until(pilot, lambda: isinstance(app.screen, PostsScreen), what="the list")
        assert app.current_mode == "posts" and len(app.screen_stack) == 1
        # every mode key does the same: the calendar's detail closes on f3
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "CalendarScreen", what="the calendar")
        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post, what="the detail"
        )
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "CalendarScreen", what="the calendar again")


async def test_the_posts_key_never_drops_a_draft_it_shows_it(tui_app) -> None:
    from textual.widgets import TextArea

    from tests.tui.helpers import record_notifications, until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        seen = record_notifications(app)
        compose = await start_a_draft(pilot, "keep me")
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "CalendarScreen", what="the calendar")
        await pilot.press("f2")
        await until(pilot, lambda: app.current_mode == "posts" and app.screen is compose, what="the draft")
        assert compose.query_one("#compose-text", TextArea).text == "keep me"
        await pilot.press("f2")  # on the draft itself: it stays, and says how to leave it
        await until(pilot, lambda: any(n["title"] == "Draft kept" for n in seen), what="the notification")
        assert app.screen is compose


async def test_a_palette_command_of_the_app_runs_from_any_screen(tui_app) -> None:
    from socialpub_tui.commands import SocialpubCommands
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f3")
        await until(pilot, lambda: type(app.screen).__name__ == "CalendarScreen", what="the calendar")
        hits = [hit async for hit in SocialpubCommands(app.screen).search("posts")]
        command = next(hit for hit in hits if hit.text == "Posts")
        await command.command()  # as the palette runs it: the app's action, not the calendar's
        await until(pilot, lambda: type(app.screen).__name__ == "PostsScreen", what="the posts screen")


async def test_ctrl_q_with_unsaved_changes_to_a_scheduled_post_asks_about_them(tui_app) -> None:
    from socialpub_tui.screens.compose import ComposeScreen
    from socialpub_tui.screens.confirm import ConfirmScreen
    from socialpub_tui.screens.post_detail import PostDetailScreen
    from tests.tui.helpers import until

    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "hello", "scheduledAt": "2099-01-01T09:00:00Z"}
        )
        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post, what="the detail"
        )
        await pilot.press("e")
        edit = await until(
            pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen, what="the edit"
        )
        await pilot.press("ctrl+q")  # nothing changed yet: quits at once
        await until(pilot, lambda: not app.is_running, what="the app to quit")
    app = tui_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post, what="the detail"
        )
        await pilot.press("e")
        edit = await until(
            pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen, what="the edit"
        )
        await pilot.press("!")
        await until(pilot, edit.holds_unsent_draft, what="a change")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert f"Your changes to {post.id} were not saved" in app.screen.question


async def test_help_lists_socialpubs_keys_as_the_screen_means_them(tui_app) -> None:
    """Issue 33: f1 listed framework internals (Focus Next, Copy selected text, a `DataTable` column) and said
    `n New post — everywhere` where `n` makes a generation."""
    from textual.widgets import DataTable

    app = tui_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f6")
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        described = {row[1] for row in rows}
        assert (
            not {"Focus Next", "Focus Previous", "Copy selected text", "Cursor left", "Page Left"} & described
        )
        assert not any("DataTable" in row[2] or "RowTable" in row[2] for row in rows), rows
        assert ["n", "New generation", "this screen"] in rows and "New post" not in described, rows
        assert ["home", "First row", "the list"] in rows and ["f6", "Generations", "everywhere"] in rows


async def test_palette_entries_say_the_key_in_words_and_where_it_works(tui_app) -> None:
    """Issue 33: palette entries said only `key: ⏎`."""
    from socialpub_tui.commands import SocialpubCommands

    app = tui_app()
    async with app.run_test(size=(100, 30)):
        provider = SocialpubCommands(app.screen)
        hits = {hit.text: hit.help async for hit in provider.search("quit")}
        assert hits["Quit"] == "key ^q (ctrl+q) · everywhere", hits
        hits = {hit.text: hit.help async for hit in provider.search("search")}
        assert hits["Search"] == "key / · this screen", hits
        hits = {hit.text: hit.help async for hit in provider.search("gen")}
        assert hits["Generations"] == "key f6 · everywhere", hits


@pytest.mark.parametrize("width", [100, 120])
async def test_every_mode_is_named_in_the_header_and_the_footer_fits(tui_app, width: int) -> None:
    """Issue 33: the footer was cut, so `f6 Generations` never showed at 120 columns. The modes are in every
    screen's header; the footer keeps the screen's keys, and fits."""
    from textual.widgets import Footer

    app = tui_app()
    async with app.run_test(size=(width, 30)) as pilot:
        for key in ("f2", "f3", "f4", "f5", "f6"):
            await pilot.press(key)
            await pilot.pause(0.3)
            line = str(app.screen.query_one("HeaderTitle").render())
            for mode in ("f2 Posts", "f3 Calendar", "f4 Accounts", "f5 Activity", "f6 Generations"):
                assert mode in line, (key, line)
            footer = app.screen.query_one(Footer)
            assert footer.virtual_size.width <= footer.size.width, (key, footer.virtual_size, footer.size)
