"""How compose looks (canned backend: fixed accounts, clock and zone). Review a changed picture by eye before
accepting it: `rsvg-convert -o x.png tests/tui/__snapshots__/…/….svg`."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Checkbox, Input, RadioButton, TextArea

from socialpub_tui.screens.compose import ComposeScreen
from tests.tui.canned import canned_app
from tests.tui.helpers import until
from tests.tui.snapshot_data import SCHEDULED, routes

SIZES = [(100, 30), (80, 24)]


def steady(screen: ComposeScreen) -> None:
    """No blinking cursor: the same picture at any instant."""
    for widget in screen.query("TextArea, Input"):
        widget.cursor_blink = False  # type: ignore[attr-defined]


async def new_post(pilot: Any) -> ComposeScreen:
    await pilot.press("n")
    screen = await until(
        pilot,
        lambda: isinstance(pilot.app.screen, ComposeScreen) and pilot.app.screen.rows() and pilot.app.screen,
        what="compose with its targets",
    )
    steady(screen)
    return screen  # type: ignore[no-any-return]


async def filled(pilot: Any) -> None:
    """Text over Instagram's bound, three targets, no media: counters and problems beside the targets."""
    screen = await new_post(pilot)
    screen.query_one("#compose-text", TextArea).text = "Spring collection is live! " + "la " * 730
    for account_id in ("acc_fb", "acc_ig", "acc_li"):
        screen.query_one(f"#tgt-{account_id}", Checkbox).value = True
    await pilot.pause()
    screen.query_one("#compose-text", TextArea).focus()


async def scheduling(pilot: Any) -> None:
    """Scheduled in Europe/Paris: the wall time, the UTC instant and how far it is, live."""
    screen = await new_post(pilot)
    screen.query_one("#compose-text", TextArea).text = "See you tomorrow"
    screen.query_one("#tgt-acc_li", Checkbox).value = True
    screen.query_one("#when-at", RadioButton).value = True
    await pilot.pause()
    screen.query_one("#compose-body").scroll_to_widget(
        screen.query_one("#compose-when-preview"), animate=False
    )
    await pilot.pause()


async def dst_gap(pilot: Any) -> None:
    screen = await new_post(pilot)
    screen.query_one("#compose-text", TextArea).text = "Spring forward"
    screen.query_one("#tgt-acc_fb", Checkbox).value = True
    screen.query_one("#when-at", RadioButton).value = True
    screen.query_one("#compose-date", Input).value = "2027-03-28"
    screen.query_one("#compose-time", Input).value = "02:30"
    await pilot.pause()
    screen.query_one("#compose-body").scroll_to_widget(
        screen.query_one("#compose-when-preview"), animate=False
    )
    await pilot.pause()


async def editing(pilot: Any) -> None:
    from backend.schemas.posts import PostOut

    pilot.app.push_screen(ComposeScreen(PostOut.model_validate(SCHEDULED)))
    screen = await until(
        pilot,
        lambda: isinstance(pilot.app.screen, ComposeScreen) and pilot.app.screen.rows() and pilot.app.screen,
        what="compose in edit mode",
    )
    steady(screen)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_new_post_with_problems_beside_the_targets(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(canned_app(routes()), terminal_size=size, run_before=filled)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_schedule_preview(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(canned_app(routes()), terminal_size=size, run_before=scheduling)


def test_dst_gap_refused(snap_compare) -> None:
    assert snap_compare(canned_app(routes()), terminal_size=(100, 30), run_before=dst_gap)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_edit_keeps_the_targets(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(canned_app(routes(SCHEDULED)), terminal_size=size, run_before=editing)
