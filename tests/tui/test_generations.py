# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""The generations screen (f6) against the embedded backend with the test generation provider: the list and its
refresh while a creation is made, the create form's cost preview and its refusal when the credits are short,
"use in a new post", delete with its confirmation, a failed creation's error, compose's picker (ctrl+g), and the
credits history on the activity screen (k)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Select, Static

from socialpub_tui.screens.activity import ActivityScreen
from socialpub_tui.screens.compose import ComposeScreen
from socialpub_tui.screens.confirm import ConfirmScreen
from socialpub_tui.screens.generations import (
    CreateGenerationScreen,
    GenerationDetailScreen,
    GenerationPickerScreen,
    GenerationsScreen,
)
from socialpub_tui.widgets.media_preview import MediaPreview
from tests.cli.conftest import invoke
from tests.support.gen_fixtures import gen_provider_dir  # noqa: F401  (fixture)
from tests.tui.helpers import record_notifications, until

pytestmark = pytest.mark.usefixtures("gen_provider_dir")


@pytest.fixture
def growth(embedded):  # type: ignore[no-untyped-def]
    """A current subscription: 1,000 credits."""
    end = (datetime.now(UTC) + timedelta(days=60)).isoformat()
    assert invoke("admin", "plan", "GROWTH", "--status", "active", "--period-end", end).code == 0
    return embedded


async def to_generations(pilot: Any, count: int | None = None) -> GenerationsScreen:
    await pilot.press("f6")
    screen = await until(
        pilot,
        lambda: (
            isinstance(pilot.app.screen, GenerationsScreen) and pilot.app.screen.loads and pilot.app.screen
        ),
        what="the generations list",
    )
    if count is not None:
        await until(pilot, lambda: len(screen.items) == count, what=f"{count} generations")
    return screen


def text(widget: Any) -> str:
    return str(widget.render())


async def test_the_list_refreshes_while_one_is_made_and_stops_when_final(
    tui_app, growth, monkeypatch
) -> None:
    monkeypatch.setenv("SOCIALPUB_TEST_PROVIDER_SLOW_S", "1.5")
    app = tui_app()
    async with app.run_test(size=(110, 30)) as pilot:
        made = await app.client.create_generation(
            {"type": "image", "prompt": "Latte art [slow]\nsecond line"}
        )
        screen = await to_generations(pilot, 1)
        assert screen.items[0].status in ("pending", "processing") and screen.refreshing
        row = [str(c) for c in screen.query_one(DataTable).get_row_at(0)]
        assert row[0] in ("pending", "processing") and row[1:3] == ["image", "2"]
        assert row[3].endswith("ago") and row[4] == "Latte art [slow]"
        assert "in production" in text(screen.query_one("#gen-status-line"))
        assert "Credits 998" in text(screen.query_one("#gen-credits"))
        await until(pilot, lambda: screen.items[0].status == "completed", what="the creation to complete")
        assert str(screen.query_one(DataTable).get_row_at(0)[0]) == "completed"
        assert not screen.refreshing  # nothing live: no more reads
        loads = screen.loads
        await pilot.pause(2.5)
        assert screen.loads == loads
        assert screen.items[0].id == made.id


async def test_create_shows_the_cost_and_refuses_when_credits_are_short(tui_app, growth) -> None:
    app = tui_app()
    async with app.run_test(size=(110, 34)) as pilot:
        screen = await to_generations(pilot, 0)
        await pilot.press("n")
        form = await until(pilot, lambda: isinstance(app.screen, CreateGenerationScreen) and app.screen)
        quote = form.query_one("#gc-quote", Static)
        await until(
            pilot, lambda: "An image costs 2 credits · balance 1000 → 998" in text(quote), what="quote"
        )
        assert not form.query_one("#gc-duration").display  # image: no duration
        await pilot.press(*"ab")
        assert text(form.query_one("#gc-count")).startswith("2 / 1800")
        await pilot.press("ctrl+s")
        assert "at least 3 characters" in text(form.query_one("#gc-problem"))  # refused locally
        await pilot.press(*"c crema")
        assert text(form.query_one("#gc-count")).startswith("9 / 1800")

        assert invoke("admin", "credits", "--set", "20").code == 0
        form.query_one("#gc-type", Select).value = "video"
        await pilot.pause()
        assert form.query_one("#gc-duration").display
        form.query_one("#gc-duration", Select).value = 15
        await until(
            pilot,
            lambda: "Not enough credits" in text(quote) and "costs 45, the balance is 20" in text(quote),
            what="the shortfall",
        )
        await pilot.press("ctrl+s")
        assert "Not enough credits" in text(form.query_one("#gc-problem"))
        assert isinstance(app.screen, CreateGenerationScreen)
        assert (await app.client.list_generations()).items == []  # nothing created, nothing charged

        form.query_one("#gc-duration", Select).value = 5
        await until(pilot, lambda: "A 5-second video costs 15 credits · balance 20 → 5" in text(quote))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen, what="back to the list")
        await until(pilot, lambda: len(screen.items) == 1, what="the new item")
        table = screen.query_one(DataTable)
        assert screen.items[table.cursor_row].prompt == "abc crema" and screen.items[0].duration_sec == 5


async def test_use_in_a_new_post_opens_compose_with_the_file(tui_app, growth) -> None:
    app = tui_app()
    async with app.run_test(size=(110, 30)) as pilot:
        made = await app.client.create_generation(
            {"type": "image", "prompt": "A flat white", "aspectRatio": "1:1"}
        )
        done = await app.client.wait_generation(made.id, timeout=30, interval=0.1)
        screen = await to_generations(pilot, 1)
        await until(pilot, lambda: screen.items[0].status == "completed")
        await pilot.press("enter")  # the detail: the picture of the file
        detail = await until(pilot, lambda: isinstance(app.screen, GenerationDetailScreen) and app.screen)
        preview = await until(pilot, lambda: detail.query(MediaPreview).first(None), what="the preview")
        await until(pilot, lambda: preview.decoded is not None, what="the decoded file")
        assert preview.decoded.kind == "image" and preview.decoded.picture is not None
        await pilot.press("u")
        compose = await until(
            pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen, what="compose"
        )
        assert [m.url for m in compose.media] == [done.media_url] and compose.media[0].kind == "image"
        assert compose.is_dirty()  # leaving asks before dropping the attached file


async def test_a_failed_one_shows_the_apis_sentence_and_delete_asks_first(tui_app, growth) -> None:
    app = tui_app()
    seen = record_notifications(app)
    async with app.run_test(size=(110, 30)) as pilot:
        made = await app.client.create_generation({"type": "video", "prompt": "A cup [refuse]"})
        failed = await app.client.wait_generation(made.id, timeout=30, interval=0.1)
        assert failed.status == "failed" and failed.error
        screen = await to_generations(pilot, 1)
        await pilot.press("enter")
        detail = await until(pilot, lambda: isinstance(app.screen, GenerationDetailScreen) and app.screen)
        await until(pilot, lambda: detail.generation and detail.generation.status == "failed")
        await pilot.pause()
        assert failed.error in text(detail.query_one("#gd-error")).replace("\n", " ") or failed.error[
            :40
        ] in text(detail.query_one("#gd-error"))
        assert not detail.query_one("#gd-media").display and not detail.query_one("#gd-progress").display
        await pilot.press("u")  # nothing to post: the key is disabled
        assert app.screen is detail
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")  # keep it
        await pilot.pause()
        assert app.screen is detail
        await pilot.press("delete")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: app.screen is screen and not screen.items, what="the list without it")
        answer = next(n for n in seen if n["title"] == "Deleted")
        assert answer["message"].startswith(f"{made.id} deleted") and "refunded" not in answer["message"]
        assert (await app.client.list_generations()).items == []


async def test_compose_attaches_a_generation_with_ctrl_g(tui_app, growth) -> None:
    app = tui_app()
    async with app.run_test(size=(110, 34)) as pilot:
        made = await app.client.create_generation({"type": "image", "prompt": "Beans on a table"})
        done = await app.client.wait_generation(made.id, timeout=30, interval=0.1)
        await app.client.create_generation({"type": "image", "prompt": "Still pending [slow]"})
        await pilot.press("n")
        compose = await until(pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen)
        await pilot.press("ctrl+g")
        picker = await until(
            pilot,
            lambda: isinstance(app.screen, GenerationPickerScreen) and app.screen.items and app.screen,
            what="the picker's list",
        )
        assert [g.id for g in picker.items] == [made.id]  # only the completed ones
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is compose)
        assert [m.url for m in compose.media] == [done.media_url]


async def test_the_credits_history_on_the_activity_screen(tui_app, growth) -> None:
    app = tui_app()
    async with app.run_test(size=(110, 34)) as pilot:
        ok = await app.client.create_generation({"type": "image", "prompt": "A flat white"})
        bad = await app.client.create_generation({"type": "image", "prompt": "A cup [refuse]"})
        await app.client.wait_generation(ok.id, timeout=30, interval=0.1)
        await app.client.wait_generation(bad.id, timeout=30, interval=0.1)
        await pilot.press("f5")
        screen = await until(pilot, lambda: isinstance(app.screen, ActivityScreen) and app.screen)
        assert not screen.query_one("#act-credits").display
        await pilot.press("k")
        await until(pilot, lambda: screen.credits is not None, what="the credits history")
        table = screen.query_one("#act-credits", DataTable)
        rows = [[str(c).strip() for c in table.get_row_at(i)] for i in range(table.row_count)]
        moves = [(r[1], r[2], r[3]) for r in rows]
        assert moves[0] == ("+2", "998", "refunded") and rows[0][4].startswith(bad.id)
        assert ("-2", "998", "charged") in moves and ("-2", "996", "charged") in moves
        assert moves[-1] == ("+1000", "1000", "plan grant")
        assert "balance 998" in text(screen.query_one("#act-credits-title"))
        assert screen.query_one("#act-credits").display and not screen.query_one("#act-failures").display
        await pilot.press("k")
        assert screen.query_one("#act-failures").display


async def test_ctrl_q_while_this_process_makes_a_generation_asks_first(tui_app, growth, monkeypatch) -> None:
    """Quitting stops a production of the embedded worker (the next start fails it and refunds it): ctrl+q asks,
    `n` stays, a second ctrl+q quits. Once nothing is in production, one ctrl+q quits."""
    monkeypatch.setenv("SOCIALPUB_TEST_PROVIDER_SLOW_S", "3")
    app = tui_app()
    async with app.run_test(size=(110, 30)) as pilot:
        made = await app.client.create_generation({"type": "image", "prompt": "Latte art [slow]"})
        screen = await to_generations(pilot, 1)
        await until(pilot, lambda: screen.items[0].status == "processing", what="the production to start")
        await pilot.press("ctrl+q")
        question = await until(
            pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen, what="the quit question"
        )
        assert f"{made.id} is being made" in question.question and "credits come back" in question.question
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen, what="back on the generations screen")
        assert app.is_running
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running, what="the app to quit")


async def test_ctrl_q_with_nothing_in_production_quits_at_once(tui_app, growth) -> None:
    app = tui_app()
    async with app.run_test(size=(110, 30)) as pilot:
        made = await app.client.create_generation({"type": "image", "prompt": "Latte art"})
        screen = await to_generations(pilot, 1)
        await until(pilot, lambda: screen.items[0].status == "completed", what="the creation to complete")
        assert screen.items[0].id == made.id
        await pilot.press("ctrl+q")
        await until(pilot, lambda: not app.is_running, what="the app to quit")


async def test_a_new_generation_is_selected_and_enter_opens_it_and_home_goes_to_the_top(
    tui_app, growth
) -> None:
    """Issue 33: after ctrl+s the cursor stayed on the generation selected before (the list's reload on resume
    overrode the new one's), so `enter` opened the previous one; `home` did nothing in the list."""
    app = tui_app()
    async with app.run_test(size=(110, 34)) as pilot:
        screen = await to_generations(pilot, 0)
        for n, prompt in enumerate(("first latte", "second latte", "third latte"), start=1):
            await pilot.press("n")
            await until(pilot, lambda: isinstance(app.screen, CreateGenerationScreen), what="the form")
            await pilot.press(*prompt)
            await pilot.press("ctrl+s")
            await until(pilot, lambda: app.screen is screen, what="back to the list")
            await until(pilot, lambda n=n: len(screen.items) == n, what=f"{n} generations")
            for _ in range(3):  # the resume's reload as well
                await app.workers.wait_for_complete()
                await pilot.pause()
            table = screen.query_one(DataTable)
            assert screen.items[table.cursor_row].prompt == prompt, (n, table.cursor_row)
            if n == 2:
                await pilot.press("down")  # the older one selected, then a third is made: it is selected
        await pilot.press("enter")
        detail = await until(pilot, lambda: isinstance(app.screen, GenerationDetailScreen) and app.screen)
        assert detail.generation_id == screen.items[0].id
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, what="the list")
        await pilot.press("end")
        assert screen.query_one(DataTable).cursor_row == 2
        await pilot.press("home")
        assert screen.query_one(DataTable).cursor_row == 0


async def test_the_type_list_does_not_wrap_around(tui_app, growth) -> None:
    """Issue 33: `down down enter` from `image` chose `image` (the list wrapped to the top)."""
    app = tui_app()
    async with app.run_test(size=(110, 34)) as pilot:
        await to_generations(pilot, 0)
        await pilot.press("n")
        form = await until(pilot, lambda: isinstance(app.screen, CreateGenerationScreen) and app.screen)
        kind = form.query_one("#gc-type", Select)
        kind.focus()
        await pilot.pause()
        await pilot.press("down")  # opens, on the current one (image)
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert kind.value == "video"
        await pilot.press("up")
        await pilot.pause()
        await pilot.press("up", "up", "up", "enter")
        await pilot.pause()
        assert kind.value == "image"


async def test_the_form_takes_a_background_photo_for_an_image(tui_app, growth, tmp_path) -> None:
    """Issue 33: the announcement card from the TUI: an image file behind the design (images only)."""
    from tests.support import gen_provider
    from tests.tui.helpers import png

    photo = png(tmp_path / "shop.png", (160, 120))
    app = tui_app()
    async with app.run_test(size=(110, 34)) as pilot:
        screen = await to_generations(pilot, 0)
        await pilot.press("n")
        form = await until(pilot, lambda: isinstance(app.screen, CreateGenerationScreen) and app.screen)
        assert form.query_one("#gc-background-row").display and not form.query_one("#gc-sources-row").display
        await pilot.press(*"Grand opening")
        form.query_one("#gc-background", Input).value = str(photo)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is screen, what="back to the list")
        await until(pilot, lambda: len(screen.items) == 1, what="the new item")
        assert screen.items[0].background_url and screen.items[0].background_url.endswith(".jpg")
        made = await app.client.wait_generation(screen.items[0].id, timeout=30, interval=0.1)
        assert made.status == "completed" and gen_provider.CALLS[-1].background is not None
        await pilot.press("n")
        form = await until(pilot, lambda: isinstance(app.screen, CreateGenerationScreen) and app.screen)
        form.query_one("#gc-type", Select).value = "video"
        await pilot.pause()
        assert not form.query_one("#gc-background-row").display  # a video takes start images instead
