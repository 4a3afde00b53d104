"""The help screen (f1) over the posts screen, on the canned backend."""

from __future__ import annotations

from typing import Any

from tests.tui.canned import canned_app
from tests.tui.helpers import until


async def to_help(pilot: Any) -> None:
    from socialpub_tui.widgets.footer import Footer

    await pilot.app.workers.wait_for_complete()
    footer = pilot.app.screen.query_one(Footer)
    # built with the first page, by a callback of the footer's own: its keys are there once it has children
    await until(pilot, lambda: not footer.waiting and footer.children, what="the posts screen's keys")
    await pilot.pause()
    await pilot.press("f1")
    await pilot.pause()


def test_help_lists_the_keys_of_the_posts_screen_and_the_app(snap_compare):
    app = canned_app(
        {
            ("GET", "/v1/posts"): {"items": [], "nextCursor": None},
            ("GET", "/v1/accounts"): {"items": [], "limit": 5, "used": 0},
        }
    )
    assert snap_compare(app, terminal_size=(100, 30), run_before=to_help)
