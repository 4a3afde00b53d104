"""The README's crontab line, run the way cron runs it: `/bin/sh -c LINE` under `env -i` — no TTY, PATH
/usr/bin:/bin, no HOME, nothing but the data dir. (PYTHONPATH points at this checkout only because the venv's
`socialpub` may be installed from another one; SOCIALPUB_SANDBOX_DELAY_S=0 only makes the sandbox answer at
once.)"""

from __future__ import annotations

import os
import re
import subprocess
import time
from datetime import UTC, datetime, timedelta

from recipes.model import LABEL_KEY
from tests.recipes.helpers import entry, jpeg, recipe, set_posts, write
from tests.recipes.watching import ROOT, SOCIALPUB


def cron_line(folder: str) -> str:
    """As in README.md (paths absolute: cron's PATH has no venv)."""
    return f"{SOCIALPUB} recipes apply {folder} && {SOCIALPUB} tick"


def run_like_cron(line: str, data_dir: str) -> subprocess.CompletedProcess[str]:
    store = os.environ.get("SOCIALPUB_DATABASE_URL")  # the suite's PostgreSQL pass (cli_env sets it)
    return subprocess.run(
        [
            "env",
            "-i",
            "PATH=/usr/bin:/bin",
            f"SOCIALPUB_DATA_DIR={data_dir}",
            f"PYTHONPATH={ROOT}",
            "SOCIALPUB_SANDBOX_DELAY_S=0",
            "SOCIALPUB_SANDBOX_PROCESSING_S=0",
            *([f"SOCIALPUB_DATABASE_URL={store}"] if store else []),
            "/bin/sh",
            "-c",
            line,
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
        cwd="/",
    )


def statuses() -> dict[str, str]:
    return {p.labels[LABEL_KEY].partition("#")[2]: p.status for p in set_posts("content")}


def test_the_crontab_line_works_from_crons_minimal_environment(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    data_dir = str(tmp_path / "d")  # cli_env's data dir, initialised by the `backend` fixture
    folder = tmp_path / "content"
    (folder / "media").mkdir(parents=True)
    (folder / "media" / "a.jpg").write_bytes(jpeg(3))
    later = entry("later", "2027-02-01 10:00", "Later", "media/a.jpg")
    write(folder, "a.yaml", recipe(later))
    first = run_like_cron(cron_line(str(folder)), data_dir)
    assert first.returncode == 0, first.stderr
    assert "1 created" in first.stdout and "ran " in first.stdout  # apply's summary, then tick's
    assert not re.search(r"\x1b\[", first.stdout + first.stderr)  # no colour, no progress bar: not a terminal
    assert statuses() == {"later": "scheduled"}

    # the next run: an entry due soon is created (with room for a slow machine: an occurrence already past
    # when apply reads it is skipped, rightly), and a run of the line once it is due sends it
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=30)
    soon = due.strftime("%Y-%m-%dT%H:%M:%SZ")
    write(folder, "a.yaml", recipe(later, entry("soon", soon, "Soon", "media/a.jpg", targets="[facebook]")))
    second = run_like_cron(cron_line(str(folder)), data_dir)
    assert second.returncode == 0, second.stderr
    assert "1 created" in second.stdout and "media 0 uploaded, 1 reused" in second.stdout
    time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 0.5)
    sent = run_like_cron(cron_line(str(folder)), data_dir)
    assert sent.returncode == 0, sent.stderr
    assert statuses() == {"later": "scheduled", "soon": "completed"}

    third = run_like_cron(cron_line(str(folder)), data_dir)  # nothing to do: the sent post is left alone
    assert third.returncode == 0, third.stderr
    assert "0 created, 0 updated, 0 cancelled, 2 unchanged" in third.stdout


def test_a_failing_apply_stops_the_line_with_exit_1(backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "content"
    write(folder, "a.yaml", "posts: [oops\n")
    done = run_like_cron(cron_line(str(folder)) + " && echo TICKED", str(tmp_path / "d"))
    assert done.returncode == 1 and "TICKED" not in done.stdout
    assert "a.yaml:" in done.stderr
