"""Two workers share 2,000 jobs on PostgreSQL (FOR UPDATE SKIP LOCKED) with no double claim.

Runs under `--db=postgres` (pytest tests/jobs --db=postgres); skipped on SQLite, which has one writer.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from backend import queue
from backend.jobs.registry import HANDLERS
from backend.jobs.worker import Worker
from backend.store.db import database, is_sqlite, tx
from backend.store.models import Job

N_JOBS = 2000
pytestmark = pytest.mark.pg


@pytest.fixture
def postgres_only(settings):  # type: ignore[no-untyped-def]
    if is_sqlite():
        pytest.skip(
            "needs PostgreSQL (run with --db=postgres): SQLite has one writer, there is no concurrent "
            "claim to test"
        )
    return settings


def test_two_workers_share_2000_jobs_without_double_claim(postgres_only):
    settings = postgres_only
    ran: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(job, ctx):  # type: ignore[no-untyped-def]
        with lock:
            ran.append((job.payload["n"], ctx.worker_id))

    HANDLERS["t.record"] = record
    try:
        with tx():
            Job.insert_many(
                [
                    {
                        "id": f"job_pgtest{i:06d}",
                        "kind": "t.record",
                        "payload": {"n": f"job-{i}"},
                        "status": "queued",
                        "run_at": queue.clock.now(),
                        "attempts": 0,
                        "max_attempts": 3,
                        "created_at": queue.clock.now(),
                        "updated_at": queue.clock.now(),
                    }
                    for i in range(N_JOBS)
                ]
            ).execute()
        workers = [Worker(settings, name=f"w{i}", concurrency=4) for i in range(2)]
        errors: list[BaseException] = []

        def run(w: Worker) -> None:
            try:
                w.run_until_idle(max_seconds=120, settle_s=0)
            except BaseException as exc:  # surfaced below
                errors.append(exc)
            finally:
                if not database.is_closed():
                    database.close()  # this thread's connection

        threads = [threading.Thread(target=run, args=(w,)) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
        assert not errors, errors
    finally:
        HANDLERS.pop("t.record", None)

    counts = Counter(n for n, _ in ran)
    duplicates = {n: c for n, c in counts.items() if c > 1}
    assert not duplicates, f"jobs run more than once: {list(duplicates.items())[:10]}"
    assert len(counts) == N_JOBS
    by_worker = Counter(w for _, w in ran)
    assert len(by_worker) == 2, f"both workers should have claimed jobs: {by_worker}"
    statuses = Counter(j.status for j in Job.select(Job.status).where(Job.kind == "t.record"))
    assert statuses == {"done": N_JOBS}
    attempts = Counter(j.attempts for j in Job.select(Job.attempts).where(Job.kind == "t.record"))
    assert attempts == {1: N_JOBS}, "a job was claimed twice (attempts > 1)"
