"""backend/store/statements.py: the job claim, on SQLite and on PostgreSQL (`--db=postgres`).

One atomic statement: claimers running at the same time never get the same job; expired leases are claimed
again (with the previous holder recorded); lanes at their cap are skipped, jobs without a lane never are.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import time_machine

from backend import clock, queue
from backend.store import statements
from backend.store.db import database, tx
from backend.store.models import Job


def _jobs(n: int, kind: str = "t.claim", lane: str | None = None, **kw) -> list[str]:  # type: ignore[no-untyped-def]
    with tx():
        return [queue.enqueue(kind, {"i": i}, lane=lane, **kw).id for i in range(n)]


def test_claim_takes_due_jobs_oldest_first_with_a_lease(settings):
    now = clock.now()
    with tx():
        late = queue.enqueue("t.claim", run_at=now - timedelta(seconds=5)).id
        later = queue.enqueue("t.claim", run_at=now - timedelta(seconds=1)).id
        queue.enqueue("t.claim", run_at=now + timedelta(minutes=5))
    got = statements.claim_jobs("w1#1", now=clock.now(), lease_s=10, limit=5)
    assert [j.id for j in got] == [late, later]
    for j in got:
        assert (
            isinstance(j, Job) and j.status == "running" and j.locked_by == f"w1#1/{j.id}" and j.attempts == 1
        )
        assert j.lease_until is not None and abs((j.lease_until - clock.now()).total_seconds() - 10) < 2
        assert (
            j.payload == {} and j.run_at.tzinfo is not None
        )  # converted like any row read through the model
    row = Job.get_by_id(late)
    assert (row.status, row.locked_by, row.attempts) == ("running", f"w1#1/{late}", 1)
    assert statements.claim_jobs("w2#1", now=clock.now(), lease_s=10, limit=5) == []


def test_concurrent_claimers_never_get_the_same_job(settings):
    """8 threads (each its own connection) claim one job at a time until none is left: every job exactly once."""
    ids = _jobs(300)
    got: list[tuple[str, str]] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def claimer(n: int) -> None:
        try:
            start.wait()
            while True:
                jobs = statements.claim_jobs(f"w{n}#1", now=clock.now(), lease_s=30, limit=1)
                if not jobs:
                    return
                with lock:
                    got.extend((j.id, f"w{n}") for j in jobs)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            if not database.is_closed():
                database.close()

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    counts = Counter(job_id for job_id, _ in got)
    assert sorted(counts) == sorted(ids) and set(counts.values()) == {1}
    assert len({w for _, w in got}) > 1, "the claimers should have shared the jobs"
    assert Counter(j.attempts for j in Job.select(Job.attempts)) == {1: 300}


def test_an_expired_lease_is_claimed_again_and_names_the_previous_holder(settings):
    (job_id,) = _jobs(1)
    (first,) = statements.claim_jobs("dead-worker#7", now=clock.now(), lease_s=10)
    assert statements.claim_jobs("w2#1", now=clock.now() + timedelta(seconds=9), lease_s=10) == []
    with time_machine.travel(clock.now() + timedelta(seconds=11), tick=False):
        (again,) = statements.claim_jobs("w2#1", now=clock.now(), lease_s=10)
    assert again.id == job_id and again.attempts == 2 and again.locked_by == f"w2#1/{job_id}"
    assert again.last_error == statements.TAKEN_OVER + f"dead-worker#7/{job_id}"
    assert queue.taken_over_from(again) == f"dead-worker#7/{job_id}" and queue.taken_over_from(first) is None
    assert queue.complete(first) is False  # fenced: the old holder records nothing
    assert queue.complete(again) is True
    assert Job.get_by_id(job_id).last_error is None


def test_lanes_at_their_cap_are_skipped_jobs_without_a_lane_never(settings):
    now = clock.now()
    with tx():
        yt = [
            queue.enqueue("t.claim", lane="youtube", run_at=now - timedelta(seconds=10 - i)).id
            for i in range(3)
        ]
        fb = queue.enqueue("t.claim", lane="facebook", run_at=now - timedelta(seconds=2)).id
        free = queue.enqueue("t.claim", run_at=now - timedelta(seconds=1)).id
    got = statements.claim_jobs("w#1", now=clock.now(), lease_s=10, limit=10, skip_lanes=["youtube"])
    assert [j.id for j in got] == [fb, free]
    assert statements.claim_jobs("w#2", now=clock.now(), lease_s=10, limit=10, skip_lanes=["youtube"]) == []
    (first,) = statements.claim_jobs("w#3", now=clock.now(), lease_s=10, limit=1, skip_lanes=["facebook"])
    assert first.id == yt[0] and first.lane == "youtube"


def test_only_unlaned_and_kinds_filters(settings):
    with tx():
        laned = queue.enqueue("t.a", lane="linkedin").id
        other_kind = queue.enqueue("t.b").id
        plain = queue.enqueue("t.a").id
    assert [
        j.id
        for j in statements.claim_jobs(
            "w#1", now=clock.now(), lease_s=10, limit=5, only_unlaned=True, kinds=["t.a"]
        )
    ] == [plain]
    assert [j.id for j in statements.claim_jobs("w#2", now=clock.now(), lease_s=10, limit=5)] == [
        laned,
        other_kind,
    ]


def test_a_claimed_job_is_the_row_as_stored(settings):
    """Every column comes back, converted as the model reads it (a column added to Job must be returned too)."""
    from playhouse.shortcuts import model_to_dict

    with tx():
        queue.enqueue(
            "t.claim",
            {"nested": {"a": [1, 2]}},
            workspace_id="ws_1",
            dedupe_key="k:1",
            lane="tiktok",
            max_attempts=7,
            last_error="why it exists",
        )
    (job,) = statements.claim_jobs("w#1", now=clock.now(), lease_s=10)
    assert model_to_dict(job) == model_to_dict(Job.get_by_id(job.id))
    assert job.payload == {"nested": {"a": [1, 2]}} and job.lane == "tiktok" and job.max_attempts == 7


CLAIMER = """
import sys
from backend.config import Settings
from backend.store import statements
from backend.store.db import init_database
from backend import clock
import time
init_database(Settings(data_dir=sys.argv[1]), run_migrations=False)
print("ready", flush=True)
sys.stdin.readline()  # start together
while True:
    jobs = statements.claim_jobs(sys.argv[2], now=clock.now(), lease_s=60, limit=1)
    if not jobs:
        break
    print(jobs[0].id, flush=True)
    time.sleep(0.001)  # a worker does its job between claims: the two processes interleave
"""


def test_processes_claiming_from_one_sqlite_file_never_share_a_job(settings, db_kind):
    """Two processes (SQLite's own file lock between them, not this process's writer lock) claim from one file."""
    import os
    import subprocess
    import sys

    import pytest

    if db_kind != "sqlite":
        pytest.skip("the PostgreSQL claim is raced by threads with their own connections above")
    ids = _jobs(1000)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIMER, str(settings.data_dir), f"proc{i}#1"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    claimed = outs[0] + outs[1]
    assert sorted(claimed) == sorted(ids)  # each exactly once
    assert outs[0] and outs[1], "both processes should have claimed some"
