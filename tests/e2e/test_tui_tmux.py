"""End to end: the real `socialpub` commands in a real terminal (tmux, fixed size). A sandbox data dir is
initialised, a post to publish now is created with the CLI, `socialpub tui` opens on it, the screen shows the
post going out until it is `completed`; ctrl+q ends the process with status 0.

tmux is installed by .ci/ensure-tools.sh (`make test-sqlite`); without it the test is skipped, saying so — except
under CI (CI=true), where a missing tmux fails the test: CI installs it, so its absence is a broken setup."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.tmux import private_tmux

ROOT = Path(__file__).resolve().parents[2]
SOCIALPUB = str(Path(sys.executable).with_name("socialpub"))
TEXT = "E2E hello from tmux"


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([SOCIALPUB, *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def environment(data_dir: Path, tmp_path: Path, pg_url: str | None, **extra: str) -> dict[str, str]:
    """This process's environment without its SOCIALPUB_ settings, pointed at `data_dir` (and PostgreSQL's `pg_url`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env |= {
        "SOCIALPUB_DATA_DIR": str(data_dir),
        "SOCIALPUB_CONFIG": str(tmp_path / "cfg" / "config.yaml"),
        "SOCIALPUB_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
    if pg_url:
        env["SOCIALPUB_DATABASE_URL"] = pg_url
    return env


@pytest.fixture
def tmux():  # type: ignore[no-untyped-def]
    with private_tmux() as call:
        yield call


def test_tui_shows_a_post_going_out_and_quits(tmux, settings, tmp_path, pg_url) -> None:  # type: ignore[no-untyped-def]
    # `settings`: on PostgreSQL, a clean store (the data dir itself is a fresh one, below)
    data_dir = tmp_path / "e2e"
    env = environment(data_dir, tmp_path, pg_url, SOCIALPUB_SANDBOX_DELAY_S="0", TZ="Europe/Paris")
    run("init", "--sandbox", "--password", "e2e-password", env=env)
    created = run("posts", "create", TEXT, "--to", "facebook", "--to", "linkedin", "--json", env=env)
    assert '"id"' in created.stdout

    rc_file = tmp_path / "tui.rc"
    command = " ".join(
        [
            *(f"{k}='{v}'" for k, v in env.items() if k.startswith(("SOCIALPUB_", "PYTHONPATH", "TZ"))),
            SOCIALPUB,
            "tui",
            "--data-dir",
            f"'{data_dir}'",
            f"; echo $? > '{rc_file}'",
        ]
    )
    started = tmux("new-session", "-d", "-s", "tui", "-x", "100", "-y", "30", f"env {command}")
    assert started.returncode == 0, started.stderr

    screen = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        screen = tmux("capture-pane", "-p", "-t", "tui").stdout
        if any(TEXT in line and "completed" in line for line in screen.splitlines()):
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"the post never showed as completed; the screen:\n{screen}")
    row = next(line for line in screen.splitlines() if TEXT in line)
    assert "FB" in row and "LI" in row
    assert "search" in screen and "when" in screen  # the posts screen, with its filters and header

    tmux("send-keys", "-t", "tui", "C-q")
    deadline = time.monotonic() + 30
    while tmux("has-session", "-t", "tui").returncode == 0:  # the session ends with its one process
        assert time.monotonic() < deadline, "ctrl+q did not end the TUI"
        time.sleep(0.1)
    assert rc_file.read_text().strip() == "0"


def test_the_tui_exits_when_its_terminal_is_gone(tmux, settings, tmp_path, pg_url) -> None:  # type: ignore[no-untyped-def]
    """A killed tmux session (a dropped ssh connection) hangs the terminal up, and the kernel sends SIGHUP to the
    session's leader only. Under `make run` that leader is make, which waits for its child: the TUI got no signal
    and Textual's input thread spun on the hung-up input at 26–55 % of a core, for ever. Here the leader is a small
    Python process that, like make, survives the hang-up and waits; the TUI must notice the terminal is gone and exit (129)."""
    data_dir = tmp_path / "hangup"
    env = environment(data_dir, tmp_path, pg_url)
    run("init", "--sandbox", "--password", "e2e-password", env=env)
    rc_file = tmp_path / "tui.rc"
    # the session's leader, like make: it outlives the hang-up (a handler, not an ignored signal, which the TUI
    # would inherit), waits for the TUI and writes down its exit status
    leader = tmp_path / "leader.py"
    leader.write_text(
        "import signal, subprocess, sys\n"
        "signal.signal(signal.SIGHUP, lambda *_: None)\n"
        "rc = subprocess.call(sys.argv[2:])\n"
        "open(sys.argv[1], 'w').write(str(rc))\n"
    )
    assignments = " ".join(f"{k}='{v}'" for k, v in env.items() if k.startswith(("SOCIALPUB_", "PYTHONPATH")))
    command = (
        f"env {assignments} {sys.executable} '{leader}' '{rc_file}' {SOCIALPUB} tui --data-dir '{data_dir}'"
    )
    started = tmux("new-session", "-d", "-s", "tui", "-x", "100", "-y", "30", command)
    assert started.returncode == 0, started.stderr
    try:
        deadline = time.monotonic() + 60
        while "search" not in (screen := tmux("capture-pane", "-p", "-t", "tui").stdout):
            assert time.monotonic() < deadline, f"the TUI never showed its posts screen:\n{screen}"
            time.sleep(0.2)
        tmux("kill-session", "-t", "tui")
        deadline = time.monotonic() + 20
        while not rc_file.exists():
            assert time.monotonic() < deadline, "the TUI was still running 20 s after its terminal was gone"
            time.sleep(0.2)
        assert rc_file.read_text().strip() == "129"
    finally:
        subprocess.run(["pkill", "-9", "-f", f"tui --data-dir {data_dir}"], check=False)
