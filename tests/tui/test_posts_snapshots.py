"""How the posts screen looks (canned backend: fixed ids, texts and times; the clock at FIXED_NOW). Review a
changed picture by eye before accepting it: `rsvg-convert -o x.png tests/tui/__snapshots__/…/….svg` (rsvg
drops the non-breaking spaces that start a run of text: replace them with spaces first to see the columns
aligned, e.g. `sed 's/\\xc2\\xa0/ /g'`)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from textual.widgets import Select

from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.post_list import PostList
from tests.tui.canned import canned_app
from tests.tui.helpers import press_until
from tests.tui.posts_canned import routes

SIZES = [(100, 30), (80, 24)]


async def settle(pilot: Any) -> None:
    post_list = pilot.app.screen.query_one(PostList)
    deadline = time.monotonic() + 10
    footer = pilot.app.screen.query_one(Footer)
    # the footer's keys come with the first page (a callback of its own builds them: then it has children)
    while post_list.loading or post_list.reading or footer.waiting or not footer.children:
        assert time.monotonic() < deadline, "the list did not settle"
        await pilot.pause(0.02)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_posts(snap_compare, size: tuple[int, int]) -> None:
    """Next due first (the first is due in 3 minutes: live), then the post being sent, then the past by due
    time; every status in its colour, a badge per target in its status's colour, `+2` past five targets."""
    assert snap_compare(canned_app(routes()), terminal_size=size, run_before=settle)


def test_cursor_further_down(snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press(*["down"] * 6)
        await settle(pilot)

    assert snap_compare(canned_app(routes()), terminal_size=(100, 30), run_before=run_before)


def test_search_and_network_filter(snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await press_until(
            pilot, "slash", lambda: pilot.app.focused is pilot.app.screen.query_one("#posts-search")
        )
        await pilot.press(*"sale")
        pilot.app.screen.query_one("#posts-network", Select).value = "facebook"
        await pilot.pause(0.4)  # the search's debounce
        await settle(pilot)
        await pilot.press("enter")  # back to the list
        await settle(pilot)

    assert snap_compare(canned_app(routes()), terminal_size=(100, 30), run_before=run_before)


def test_no_posts_yet(snap_compare) -> None:
    assert snap_compare(canned_app(routes([])), terminal_size=(80, 24), run_before=settle)
