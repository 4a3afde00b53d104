# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""A real `socialpub worker` process killed (SIGKILL) while it produces a generation: the charge is in the ledger, the
file was never made. The next worker to start fails the generation (interrupted by a restart), refunds it exactly
once and records `generation.failed`; it does not produce it a second time behind the user's back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from backend.services import generations
from backend.store.models import Event, Generation
from tests.support.gen_fixtures import balance_is_the_ledger, gen_provider_dir, ledger, subscribed  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def _worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "backend.operator", "worker", "--concurrency", "2"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )


def _until(check, timeout: float, what: str, log: Path) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} within {timeout} s; worker log:\n{log.read_text()[-4000:]}")


def _status(generation_id: str) -> str:
    from backend.store.db import database

    try:
        return Generation.get_by_id(generation_id).status
    finally:
        database.close()  # a fresh snapshot on each read (SQLite WAL, PostgreSQL)


def test_a_worker_killed_mid_production_leaves_it_failed_and_refunded_once(
    settings, subscribed, gen_provider_dir, tmp_path
):
    marker = tmp_path / "production-started.txt"
    log = tmp_path / "workers.log"
    env = {
        **os.environ,
        "SOCIALPUB_DATA_DIR": str(settings.data_dir),
        "SOCIALPUB_GENERATION_PROVIDER": "test",
        "PYTHONPATH": os.pathsep.join([str(gen_provider_dir), str(ROOT)]),
        "SOCIALPUB_TEST_PROVIDER_MARKER": str(marker),
        "SOCIALPUB_TEST_PROVIDER_SLOW_S": "120",
        "SOCIALPUB_JOB_LEASE_S": "2",
        "SOCIALPUB_WORKER_POLL_S": "0.1",
        "SOCIALPUB_LOG_LEVEL": "INFO",
    }
    if settings.database_url:
        env["SOCIALPUB_DATABASE_URL"] = settings.database_url
    g = generations.accept(
        settings, subscribed.workspace_id, {"type": "video", "prompt": "beans [slow]", "duration_sec": 10}
    )
    assert balance_is_the_ledger(subscribed.workspace_id) == 970

    first = _worker(env, log)
    try:
        _until(
            lambda: marker.exists() and _status(g["id"]) == "processing", 60, "production did not start", log
        )
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    assert _status(g["id"]) == "processing"
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -30)]

    second = _worker(env, log)
    try:
        _until(lambda: _status(g["id"]) == "failed", 60, "the interrupted generation was not failed", log)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(30)

    row = Generation.get_by_id(g["id"])
    assert row.error.startswith("Production was interrupted by a restart of the service")
    assert row.error.endswith("Your 30 credits were refunded.") and row.completed_at is not None
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -30), ("refund", 30)]
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000
    assert marker.read_text().splitlines() == ["beans [slow]"]  # produced once: never started again
    events = [(e.type, e.data["status"]) for e in Event.select().where(Event.subject_id == g["id"])]
    assert events == [("generation.failed", "failed")]
    assert "interrupted mid-production" in log.read_text()
