"""The app shell: modes, help, the palette's commands, quitting from every screen."""

from __future__ import annotations

import pytest

from socialpub_tui.screens.help import HelpScreen


@pytest.mark.parametrize("key,screen", [("f2", "PostsScreen"), ("f3", "CalendarScreen"),
                                        ("f4", "AccountsScreen"), ("f5", "ActivityScreen"), ("f6", "GenerationsScreen")])
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
