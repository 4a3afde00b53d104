"""The durable job queue: enqueue in the caller's transaction; claim due jobs with a lease.

Claim: `FOR UPDATE SKIP LOCKED` on PostgreSQL (any number of workers on any number of machines);
on SQLite inside `BEGIN IMMEDIATE` (one writer at a time). A running job whose lease has expired
(its worker died) is claimable again.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

from backend import clock
from backend.ids import new_id
from backend.store import fast
from backend.store.db import database, is_sqlite, tx
from backend.store.models import Job

WAKE = threading.Event()  # set when a job is enqueued in this process: workers wake at once


def _wake() -> None:
    WAKE.set()


def enqueue(kind: str, payload: dict[str, Any] | None = None, *, run_at: datetime | None = None,
            workspace_id: str | None = None, dedupe_key: str | None = None, max_attempts: int = 5,
            attempts: int = 0, last_error: str | None = None, if_absent: bool = False,
            lane: str | None = None) -> Job:
    """Insert a job row. Call it inside the transaction of the state change that needs it.

    attempts: tries already made elsewhere (a target's first try made in its post's batch); last_error: why the
    job exists; if_absent: a job with the same dedupe key already there is kept, nothing is inserted."""
    now = clock.now()
    values = dict(id=new_id("job"), kind=kind, payload=payload or {}, status="queued", run_at=run_at or now,
                  attempts=attempts, max_attempts=max_attempts, dedupe_key=dedupe_key, workspace_id=workspace_id,
                  last_error=last_error, lane=lane, created_at=now, updated_at=now)
    job = fast.insert_if_absent(Job, **values)[0] if if_absent else fast.insert(Job, **values)
    database.after_commit(_wake)
    return job


def ensure(kind: str, dedupe_key: str, run_at: datetime, payload: dict[str, Any] | None = None) -> None:
    """Insert a job with a unique dedupe key unless it exists (periodic jobs)."""
    now = clock.now()
    Job.insert(
        id=new_id("job"), kind=kind, payload=payload or {}, status="queued", run_at=run_at, attempts=0,
        max_attempts=1_000_000, dedupe_key=dedupe_key, created_at=now, updated_at=now,
    ).on_conflict_ignore().execute()


def move(dedupe_key: str, run_at: datetime) -> int:
    """Reschedule a queued job (e.g. a scheduled post whose time was edited)."""
    return (Job.update(run_at=run_at, updated_at=clock.now())
            .where((Job.dedupe_key == dedupe_key) & (Job.status == "queued")).execute())


def cancel(dedupe_key: str) -> int:
    return Job.delete().where((Job.dedupe_key == dedupe_key) & (Job.status == "queued")).execute()


def claim(worker_id: str, *, limit: int = 1, lease_s: float = 60.0, kinds: list[str] | None = None) -> list[Job]:
    """Claim up to `limit` due jobs for `worker_id`, oldest due first, with a lease of `lease_s`.
    The statements are built once per dialect (the claim runs for every batch of jobs)."""
    now = clock.now()
    lease_until = now + timedelta(seconds=lease_s)
    n_kinds = len(kinds) if kinds else 0
    sql = _claim_sql(n_kinds)
    at = Job.run_at.db_value(now)
    with tx():
        ids = [r[0] for r in database.execute_sql(sql, ["queued", at, "running", at, *(kinds or []), limit])]
        if not ids:
            return []
        fast.update(Job, ids, {"status": "running", "lease_until": lease_until, "locked_by": worker_id,
                               "updated_at": now}, increment=("attempts",))
        jobs = fast.select_in(Job, "id", ids)
    jobs.sort(key=lambda j: (j.run_at, j.id))
    return jobs


_CLAIM_SQL: dict[tuple[str, int], str] = {}


def _claim_sql(n_kinds: int) -> str:
    db = database.obj
    key = (type(db).__name__, n_kinds)
    sql = _CLAIM_SQL.get(key)
    if sql is None:
        p = db.param
        sql = (f'SELECT "id" FROM "job" WHERE (("status" = {p} AND "run_at" <= {p}) '
               f'OR ("status" = {p} AND "lease_until" < {p}))')
        if n_kinds:
            sql += f' AND "kind" IN ({", ".join([p] * n_kinds)})'
        sql += f' ORDER BY "run_at", "id" LIMIT {p}'
        if not is_sqlite():
            sql += " FOR UPDATE SKIP LOCKED"
        _CLAIM_SQL[key] = sql
    return sql


def _mine(job: Job) -> dict[str, Any]:
    """Fencing: a job is changed only by the worker that holds its lease (still running, still locked by it)."""
    return {"locked_by": job.locked_by, "status": "running"}


def renew(job: Job, lease_s: float) -> bool:
    """Extend the lease of a job this worker still holds. False when it was lost (reclaimed elsewhere)."""
    until = clock.now() + timedelta(seconds=lease_s)
    ok = fast.update(Job, job.id, {"lease_until": until, "updated_at": clock.now()}, where=_mine(job)) == 1
    if ok:
        job.lease_until = until
    return ok


def complete(job: Job) -> bool:
    return fast.update(Job, job.id, {"status": "done", "lease_until": None, "updated_at": clock.now(),
                                     "last_error": None}, where=_mine(job)) == 1


_current = threading.local()


def set_current(job: Job | None) -> None:
    """The job this thread runs (set by the worker around its handler), for `complete_current`."""
    _current.job = job
    _current.done = False


def complete_current() -> None:
    """Complete the running job inside the caller's transaction: the job's `done` commits with the state change
    that finished it (one write transaction less per job), fenced like `complete`. The worker then skips its own
    `complete`. A rollback of that transaction leaves the job running; only an exception causes one, and on an
    exception the worker retries or buries the job (fenced) and never looks at this flag."""
    job = getattr(_current, "job", None)
    if job is not None and not _current.done:
        _current.done = complete(job)


def completed_current() -> bool:
    return bool(getattr(_current, "done", False))


def retry(job: Job, delay_s: float, error: str | None, *, count_attempt: bool = True) -> bool:
    values: dict[Any, Any] = {
        Job.status: "queued", Job.run_at: clock.now() + timedelta(seconds=delay_s), Job.lease_until: None,
        Job.locked_by: None, Job.last_error: error, Job.updated_at: clock.now(),
    }
    if not count_attempt:
        values[Job.attempts] = Job.attempts - 1
    ok = Job.update(values).where((Job.id == job.id) & (Job.locked_by == job.locked_by)
                                  & (Job.status == "running")).execute() == 1
    if delay_s <= 0:
        database.after_commit(_wake)
    return ok


def bury(job: Job, error: str) -> bool:
    """Attempts exhausted or a permanent error: the job stays visible, status `dead`, with its last error."""
    return fast.update(Job, job.id, {"status": "dead", "lease_until": None, "last_error": error,
                                     "updated_at": clock.now()}, where=_mine(job)) == 1


def next_due_in(now: datetime | None = None) -> float | None:
    """Seconds until the next queued job is due (0 if one is due now), None when the queue is empty."""
    now = now or clock.now()
    row = (Job.select(Job.run_at).where(Job.status == "queued").order_by(Job.run_at).limit(1).first())
    lease = (Job.select(Job.lease_until).where(Job.status == "running").order_by(Job.lease_until).limit(1).first())
    candidates = [r for r in (row.run_at if row else None, lease.lease_until if lease else None) if r is not None]
    if not candidates:
        return None
    return max(0.0, (min(candidates) - now).total_seconds())


def stats() -> dict[str, int]:
    from peewee import fn

    return {row.status: row.n for row in Job.select(Job.status, fn.COUNT(Job.id).alias("n")).group_by(Job.status)}
