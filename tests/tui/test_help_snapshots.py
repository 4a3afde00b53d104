"""The help screen (f1) over the posts screen, on the canned backend."""

from __future__ import annotations

from typing import Any

from socialpub_tui.screens.help import HelpScreen
from tests.tui.canned import canned_app
from tests.tui.helpers import footer_keys_shown, press_until, until


async def to_help(pilot: Any) -> None:
    app = pilot.app
    await app.workers.wait_for_complete()
    await until(pilot, lambda: footer_keys_shown(app), what="the posts screen's footer")
    await press_until(pilot, "f1", lambda: isinstance(app.screen, HelpScreen))
    await pilot.pause()


def test_help_lists_the_keys_of_the_posts_screen_and_the_app(snap_compare):
    app = canned_app({("GET", "/v1/posts"): {"items": [], "nextCursor": None},
                      ("GET", "/v1/accounts"): {"items": [], "limit": 5, "used": 0}})
    assert snap_compare(app, terminal_size=(100, 30), run_before=to_help)
