"""The statements that need more than a plain peewee query: one function each, the same on SQLite and PostgreSQL.

Everything else in the product reads and writes through peewee queries on the models. What lives here needs a
database feature that must be used with care (row locks skipped by other transactions, RETURNING, the write
lock taken up front), so it is written once, documented once and tested on both databases
(tests/jobs/test_statements.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from peewee import Case, Value

from backend.store.db import database, is_sqlite
from backend.store.models import Job

# The prefix of `last_error` set on a job taken over from a worker whose lease expired (followed by the holder).
TAKEN_OVER = "lease expired: taken over from "


def claim_jobs(locked_by: str, *, now: datetime, lease_s: float, limit: int = 1,
               skip_lanes: Sequence[str] = (), only_unlaned: bool = False,
               kinds: Sequence[str] | None = None) -> list[Job]:
    """Claim up to `limit` jobs for `locked_by` in ONE atomic statement; returns them, oldest due first.

    Claimable: `queued` and due (`run_at <= now`), or `running` with an expired lease (its worker died or
    stalled). The claimed rows become `running`, locked by `locked_by` until `now + lease_s`, with one more
    attempt. A job taken over from an expired lease keeps a trace of it: its `last_error` becomes
    TAKEN_OVER + the previous holder (the RETURNING clause sees only the new row, so this is how the caller
    learns who held it; the job's next recorded result overwrites it).

    skip_lanes: lanes not to claim from (the caller runs them at their cap); jobs without a lane are never
    skipped by it. only_unlaned: claim only jobs without a lane. kinds: claim only these kinds.

        PostgreSQL: UPDATE job SET … WHERE id IN (SELECT id FROM job WHERE <claimable> ORDER BY run_at, id
                    LIMIT n FOR UPDATE SKIP LOCKED) RETURNING job.*
                    Concurrent claimers skip each other's locked rows: any number of workers share the queue.
        SQLite:     the same UPDATE … RETURNING (no FOR UPDATE) inside BEGIN IMMEDIATE: the write lock is taken
                    before the candidates are read, so two claimers are serialised and never get the same job.
    """
    claimable = (((Job.status == "queued") & (Job.run_at <= now))
                 | ((Job.status == "running") & (Job.lease_until < now)))
    if only_unlaned:
        claimable &= Job.lane.is_null()
    elif skip_lanes:
        claimable &= (Job.lane.is_null() | Job.lane.not_in(list(skip_lanes)))
    if kinds:
        claimable &= Job.kind.in_(list(kinds))
    candidates = Job.select(Job.id).where(claimable).order_by(Job.run_at, Job.id).limit(limit)
    if not is_sqlite():
        candidates = candidates.for_update(skip_locked=True)
    statement = (Job.update({
        Job.status: "running",
        Job.locked_by: locked_by,
        Job.lease_until: now + timedelta(seconds=lease_s),
        Job.attempts: Job.attempts + 1,
        Job.updated_at: now,
        Job.last_error: Case(None, [(Job.status == "running", Value(TAKEN_OVER).concat(Job.locked_by))],
                             Job.last_error),
    }).where(Job.id.in_(candidates)).returning(Job))
    if is_sqlite():
        with database.atomic("IMMEDIATE"):
            jobs = list(statement.execute())
    else:
        with database.atomic():
            jobs = list(statement.execute())
    jobs.sort(key=lambda j: (j.run_at, j.id))
    return jobs
