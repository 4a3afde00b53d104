"""How the post detail looks (canned backend: fixed ids, texts and times). Review a changed picture by eye
before accepting it: `rsvg-convert -o x.png tests/tui/__snapshots__/…/….svg`."""

from __future__ import annotations

from typing import Any

import pytest

from socialpub_tui.screens.post_detail import PostDetailScreen
from socialpub_tui.widgets.media_preview import MediaPreview
from tests.tui.canned import canned_app
from tests.tui.helpers import until
from tests.tui.snapshot_data import CANCELLED, PARTIAL, SCHEDULED, routes

SIZES = [(120, 40), (100, 30), (80, 24)]  # at 120 columns every column of the targets shows


def showing(post_id: str) -> Any:
    async def run_before(pilot: Any) -> None:
        pilot.app.push_screen(PostDetailScreen(post_id))
        screen = await until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, PostDetailScreen) and pilot.app.screen.post and pilot.app.screen
            ),
            what="the detail",
        )
        await until(pilot, lambda: all(p.decoded for p in screen.query(MediaPreview)), what="the previews")
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_partial_post(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(canned_app(routes(PARTIAL)), terminal_size=size, run_before=showing("post_partial"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_scheduled_post(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(canned_app(routes(SCHEDULED)), terminal_size=size, run_before=showing("post_sched"))


def test_cancel_confirmation(snap_compare) -> None:
    assert snap_compare(
        canned_app(routes(SCHEDULED)), terminal_size=(100, 30), run_before=showing("post_sched"), press=["c"]
    )


def test_cancelled_post(snap_compare) -> None:
    """Its targets read `not sent` in the colour of a cancelled post, not the API's `pending`."""
    assert snap_compare(
        canned_app(routes(CANCELLED)), terminal_size=(100, 30), run_before=showing("post_cancelled")
    )
