"""The TUI's settings: the theme chosen is kept in tui.json beside the config file and applied at the next start;
what cannot be used (an unknown theme, a broken file) falls back to the defaults."""

from __future__ import annotations

import json
from pathlib import Path

from socialpub_tui.settings import TuiSettings, settings_path
from tests.tui.helpers import until

DEFAULT_THEME = "textual-dark"


def test_the_settings_live_beside_the_config_file(tmp_path: Path) -> None:
    assert (
        settings_path({"SOCIALPUB_CONFIG": str(tmp_path / "cfg" / "config.yaml")})
        == tmp_path / "cfg" / "tui.json"
    )


async def test_the_chosen_theme_is_applied_at_the_next_start(tui_app, tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "tui.json"
    first = tui_app(settings=TuiSettings.load(path))
    async with first.run_test(size=(100, 30)) as pilot:
        # the posts screen's first reads done (its account choices are read by a worker of their own)
        await until(pilot, lambda: getattr(first.screen, "account_options", None), what="the account choices")
        assert first.theme == DEFAULT_THEME and not path.exists()  # nothing chosen yet: nothing written
        first.theme = "nord"  # what the palette's "Change theme" does
        await until(
            pilot,
            lambda: path.exists() and json.loads(path.read_text())["theme"] == "nord",
            what="the theme kept",
        )
    again = tui_app(settings=TuiSettings.load(path))
    async with again.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert again.theme == "nord"


async def test_an_unknown_or_unreadable_theme_falls_back_to_the_default(tui_app, tmp_path: Path) -> None:
    path = tmp_path / "tui.json"
    path.write_text(json.dumps({"theme": "no-such-theme"}))
    app = tui_app(settings=TuiSettings.load(path))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == DEFAULT_THEME and app.is_running
    path.write_text("{not json")
    assert TuiSettings.load(path).theme is None
    path.write_text('["a list"]')
    assert TuiSettings.load(path).theme is None
    assert TuiSettings.load(tmp_path / "missing.json").theme is None
