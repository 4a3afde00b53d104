"""The TUI shows user and network text inert (issue 30 item 5): a post's text and an account's name holding escape
sequences (colours, OSC 0 window title, OSC 52 clipboard), BEL, C1 controls or markup are drawn with those escaped
and the markup shown as written — in the list, the detail, the editor and the notifications."""

from __future__ import annotations

import html
import re
from typing import Any

from socialpub_tui.app import utc_now
from socialpub_tui.screens.compose import ComposeScreen
from socialpub_tui.screens.post_detail import PostDetailScreen
from tests.cli.conftest import invoke
from tests.tui.helpers import until

PAYLOAD = "Sale \x1b[31mred\x1b[0m \x07 \x1b]52;c;SGVsbG8=\x07 \x1b]0;title\x1b\\ \x9b2J [@click=app.quit]quit[/] end"
NAME = "Acme \x1b]0;name\x07 [b]bold[/b]"
RAW = ["\x1b[31m", "\x1b]", "\x07", "\x9b"]
SIZE = (140, 40)


def _screen_text(app: Any) -> str:
    """The text drawn on the screen, toasts included (the screenshot's text, as the terminal is sent it)."""
    svg = str(app.export_screenshot())
    return "\n".join(
        html.unescape(t).replace("\xa0", " ") for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    )


def _assert_inert(text: str) -> None:
    for raw in RAW:
        assert raw not in text, (raw, text[:2000])


async def test_list_detail_editor_and_notifications_show_controls_escaped(tui_app) -> None:
    assert invoke("admin", "plan", "GROWTH").code == 0
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        account = await app.client.add_sandbox_account("linkedin", NAME, "ok")
        post = await app.client.create_post(
            {
                "targets": [{"platform": "linkedin", "channelId": account.id}],
                "content": PAYLOAD,
                "scheduledAt": "2099-01-01T09:00:00Z",
            }
        )
        app.announce(post, "created")
        await until(pilot, lambda: "Sale" in _screen_text(app), what="the post in the list")
        shown = _screen_text(app)
        _assert_inert(shown)
        assert "\\x1b[31mred" in shown

        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot,
            lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post is not None,
            what="the detail",
        )
        await pilot.pause(0.2)
        shown = _screen_text(app)
        _assert_inert(shown)
        assert "\\x1b]52;c;SGVsbG8=\\x07" in shown and "[@click=app.quit]quit[/]" in shown
        assert "\\x1b]0;name\\x07" in shown

        app.notify(
            "Copied [@click=app.quit]q[/]\x1b]0;t\x07"
        )  # a notification echoing user text: plain, inert
        await until(
            pilot, lambda: "[@click=app.quit]q[/]\\x1b]0;t\\x07" in _screen_text(app), what="the toast"
        )
        _assert_inert(_screen_text(app))

        app.push_screen(ComposeScreen(post))
        await until(pilot, lambda: isinstance(app.screen, ComposeScreen), what="the editor")
        await pilot.pause(0.3)
        shown = _screen_text(app)
        _assert_inert(shown)
        screen = app.screen
        assert isinstance(screen, ComposeScreen)
        body, why = screen.body()
        assert (
            why is None and body is not None and body["content"] == PAYLOAD
        )  # unchanged: the text as it was
