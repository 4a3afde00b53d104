"""`socialpub tui` on a server profile: the owner's saved session when there is one (its refreshes and pages are
not counted against an API key's per-minute budget), else the profile's key."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from socialpub_tui.client.config import resolve_profile, save_session
from tests.cli.conftest import invoke


@pytest.fixture
def remote_profile(cli_env, monkeypatch):  # type: ignore[no-untyped-def]
    cfg = cli_env / "cfg" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        yaml.safe_dump(
            {
                "default": "work",
                "profiles": {"work": {"url": "http://127.0.0.1:9", "api_key_env": "WORK_KEY"}},
            }
        )
    )
    monkeypatch.setenv("WORK_KEY", "spk_live_v1-test")
    seen: dict[str, Any] = {}

    def run(self) -> None:  # type: ignore[no-untyped-def]  # the app is not started: what it was given
        seen.update(
            api_key=self.client.api_key,
            session=self.client.session_token,
            label=self.backend_label,
            settings=self.settings,
        )

    monkeypatch.setattr("socialpub_tui.app.SocialpubApp.run", run)
    return seen


def test_with_a_saved_session_the_tui_speaks_as_the_owner(remote_profile) -> None:  # type: ignore[no-untyped-def]
    save_session(resolve_profile("work"), {"token": "owner-token"})
    assert invoke("tui").code == 0
    assert remote_profile["api_key"] is None and remote_profile["session"] == "owner-token"
    assert remote_profile["label"].endswith("owner session")


def test_without_a_session_the_tui_uses_the_key(remote_profile) -> None:  # type: ignore[no-untyped-def]
    assert invoke("tui").code == 0
    assert remote_profile["api_key"] == "spk_live_v1-test" and remote_profile["session"] is None
    assert "owner session" not in remote_profile["label"]


def test_the_tui_gets_the_settings_kept_beside_the_config(remote_profile, cli_env) -> None:  # type: ignore[no-untyped-def]
    kept = cli_env / "cfg" / "tui.json"  # $SOCIALPUB_CONFIG is cfg/config.yaml in a temporary folder
    kept.write_text('{"theme": "nord"}')
    assert invoke("tui").code == 0
    assert remote_profile["settings"].path == kept and remote_profile["settings"].theme == "nord"


def test_the_terminal_probe_imports_in_its_own_thread_while_the_caller_goes_on(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys
    import threading

    from socialpub_tui.cli.tui import TerminalProbe

    started = threading.Event()
    release = threading.Event()
    (tmp_path / "slow_probe_mod.py").write_text(
        "import threading\nimport tests.cli.test_tui_cmd as t\n"
        "t.PROBE_SEEN['thread'] = threading.current_thread().name\n"
        "t.PROBE_SEEN['started'].set()\nassert t.PROBE_SEEN['release'].wait(10)\n"
    )
    PROBE_SEEN.update(started=started, release=release)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_probe_mod", raising=False)
    probe = TerminalProbe("slow_probe_mod")
    assert started.wait(10)  # the import is under way (it would wait on the terminal) and this thread is free
    assert probe.thread.is_alive()
    release.set()
    probe.wait()
    assert PROBE_SEEN["thread"] == "terminal-probe" and "slow_probe_mod" in sys.modules


def test_a_probe_that_failed_in_its_thread_raises_in_the_caller(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys

    from socialpub_tui.cli.tui import TerminalProbe

    monkeypatch.setitem(sys.modules, "textual_image.widget", None)  # importing it raises ImportError
    probe = TerminalProbe()
    with pytest.raises(ImportError):
        probe.wait()
    assert probe.failed


PROBE_SEEN: dict[str, Any] = {}


def test_an_app_that_stopped_on_an_error_exits_non_zero(remote_profile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def crashed(self) -> None:  # type: ignore[no-untyped-def]  # as Textual ends an app on an unhandled exception
        self.exit(return_code=1)

    monkeypatch.setattr("socialpub_tui.app.SocialpubApp.run", crashed)
    assert invoke("tui").code == 1  # `make run`, scripts and the tmux test see it (it was 0)
