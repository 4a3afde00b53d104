"""The durable job queue: enqueue in the caller's transaction; claim due jobs with a lease; record results.

The claim is ONE atomic statement (backend/store/statements.py: `FOR UPDATE SKIP LOCKED` on PostgreSQL, an
`UPDATE … RETURNING` under `BEGIN IMMEDIATE` on SQLite). A running job whose lease has expired (its worker
died) is claimable again. Every result is fenced: a job is renewed, completed, retried or buried only by the
claim that holds it (same `locked_by`, still `running`); the functions return False when the lease was lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from peewee import fn

from backend import clock
from backend.ids import new_id
from backend.schemas.statuses import JobStatus
from backend.store import statements
from backend.store.db import database, locked, tx
from backend.store.models import Job
from backend.store.shapes import ListShape, Shape, Slot, insert_shape

# Set when a job is enqueued (or queued again) in this process: the worker's watcher reads the next due times again.
WAKE = threading.Event()
# Set with WAKE when such a job is due at once: the watcher wakes a thread to claim it. A job due later wakes no
# thread (a claim that would find nothing is a write transaction for nothing); the watcher wakes one at its time.
DUE = threading.Event()


def _wake() -> None:
    WAKE.set()


def _wake_due() -> None:
    DUE.set()
    WAKE.set()


@dataclass(frozen=True)
class JobSpec:
    """A job to enqueue: the one shape of it (enqueue's keyword arguments build one; enqueue_many takes them; the
    publishing decisions' follow-up jobs are these).

    run_at: None is now. attempts: tries already made elsewhere; last_error: why the job exists; lane: the network
    the job calls (the worker bounds how many threads one lane may hold), None otherwise."""

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    run_at: datetime | None = None
    workspace_id: str | None = None
    dedupe_key: str | None = None
    max_attempts: int = 5
    attempts: int = 0
    last_error: str | None = None
    lane: str | None = None


def enqueue(
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    run_at: datetime | None = None,
    workspace_id: str | None = None,
    dedupe_key: str | None = None,
    max_attempts: int = 5,
    attempts: int = 0,
    last_error: str | None = None,
    if_absent: bool = False,
    lane: str | None = None,
) -> Job:
    """Insert a job row (JobSpec's fields). Call it inside the transaction of the state change that needs it.

    if_absent: a job with the same dedupe key already there is kept, nothing is inserted (the row as given is
    returned either way)."""
    spec = JobSpec(
        kind,
        payload or {},
        run_at=run_at,
        workspace_id=workspace_id,
        dedupe_key=dedupe_key,
        max_attempts=max_attempts,
        attempts=attempts,
        last_error=last_error,
        lane=lane,
    )
    return enqueue_many([spec], if_absent=if_absent)[0]


def enqueue_many(jobs: Sequence[JobSpec], *, if_absent: bool = False) -> list[Job]:
    """Insert job rows in one statement (inside the caller's transaction); if_absent as `enqueue`'s."""
    now = clock.now()
    rows = [
        {
            **asdict(j),
            "id": new_id("job"),
            "status": JobStatus.QUEUED,
            "run_at": j.run_at or now,
            "created_at": now,
            "updated_at": now,
        }  # lease_until, locked_by: NULL until claimed
        for j in jobs
    ]
    if not rows:
        return []
    insert_shape(Job, len(rows), if_absent=if_absent).insert(rows)  # rendered once (backend/store/shapes.py)
    database.after_commit(_wake_due if any(row["run_at"] <= now for row in rows) else _wake)
    return [Job(**values) for values in rows]


def revive(dedupe_keys: Sequence[str], *, dead_before: datetime) -> int:
    """Queue again the `dead` jobs holding these dedupe keys that died before `dead_before` (attempts from zero,
    their last error kept): a key a dead job holds would otherwise refuse its work for ever. Call it inside a
    transaction. Returns how many were revived."""
    if not dedupe_keys:
        return 0
    now = clock.now()
    n: int = (
        Job.update(
            status=JobStatus.QUEUED, attempts=0, run_at=now, lease_until=None, locked_by=None, updated_at=now
        )
        .where(
            Job.dedupe_key.in_(list(dedupe_keys))
            & (Job.status == JobStatus.DEAD)
            & (Job.updated_at <= dead_before)
        )
        .execute()
    )
    if n:
        database.after_commit(_wake_due)
    return n


def ensure(kind: str, dedupe_key: str, run_at: datetime, payload: dict[str, Any] | None = None) -> None:
    """Insert a job with a unique dedupe key unless it exists (periodic jobs)."""
    now = clock.now()
    Job.insert(
        id=new_id("job"),
        kind=kind,
        payload=payload or {},
        status=JobStatus.QUEUED,
        run_at=run_at,
        attempts=0,
        max_attempts=1_000_000,
        dedupe_key=dedupe_key,
        created_at=now,
        updated_at=now,
    ).on_conflict_ignore().execute()


def move(dedupe_key: str, run_at: datetime) -> int:
    """Reschedule a queued job (e.g. a scheduled post whose time was edited)."""
    return int(
        Job.update(run_at=run_at, updated_at=clock.now())
        .where((Job.dedupe_key == dedupe_key) & (Job.status == JobStatus.QUEUED))
        .execute()
    )


def cancel(dedupe_key: str) -> int:
    return int(
        Job.delete().where((Job.dedupe_key == dedupe_key) & (Job.status == JobStatus.QUEUED)).execute()
    )


def claim(
    worker_id: str,
    *,
    limit: int = 1,
    lease_s: float = 10.0,
    kinds: list[str] | None = None,
    skip_lanes: Sequence[str] = (),
    only_unlaned: bool = False,
) -> list[Job]:
    """Claim up to `limit` due jobs (or jobs whose lease expired) for `worker_id`, oldest due first, with a lease
    of `lease_s`. One atomic statement: see statements.claim_jobs."""
    return statements.claim_jobs(
        worker_id, lease_s=lease_s, limit=limit, skip_lanes=skip_lanes, only_unlaned=only_unlaned, kinds=kinds
    )


def taken_over_from(job: Job) -> str | None:
    """The previous holder of a job this claim took over from an expired lease, None for an ordinary claim."""
    err = job.last_error or ""
    return err[len(statements.TAKEN_OVER) :] if err.startswith(statements.TAKEN_OVER) else None


def _mine() -> Any:
    """Fencing: a job is changed only by the claim that holds its lease (still running, still locked by it). The
    condition of the statement shapes below: Slots `id` and `by` (the job's id and locked_by)."""
    return (Job.id == Slot("id")) & (Job.locked_by == Slot("by")) & (Job.status == JobStatus.RUNNING)


# The worker's statements on its job (backend/store/shapes.py: each rendered once, executed with the job's values).
_RENEW = Shape(
    lambda: Job.update(
        lease_until=Slot("until", Job.lease_until), updated_at=Slot("now", Job.updated_at)
    ).where(_mine())
)
_HOLD = Shape(
    lambda: locked(
        Job.select(Job.status, Job.lease_until)
        .where((Job.id == Slot("id")) & (Job.locked_by == Slot("by")))
        .limit(1)
    )
)
# the heartbeat's renewal of every claim of a worker (1 to its pool's size: a shape per power of two of them)
_RENEW_ALL = ListShape(
    "locks",
    lambda locks: (
        Job.update(lease_until=Slot("until", Job.lease_until), updated_at=Slot("now", Job.updated_at))
        .where(Job.locked_by.in_(locks) & (Job.status == JobStatus.RUNNING))
        .returning(Job.id)
    ),
)
_COMPLETE = Shape(
    lambda: Job.update(
        status=JobStatus.DONE, lease_until=None, updated_at=Slot("now", Job.updated_at), last_error=None
    ).where(_mine())
)


def _retry_shape(count_attempt: bool) -> Shape:
    return Shape(
        lambda: Job.update(
            {
                Job.status: JobStatus.QUEUED,
                Job.run_at: Slot("run_at", Job.run_at),
                Job.lease_until: None,
                Job.locked_by: None,
                Job.last_error: Slot("error", Job.last_error),
                Job.updated_at: Slot("now", Job.updated_at),
                **({} if count_attempt else {Job.attempts: Job.attempts - 1}),
            }
        ).where(_mine())
    )


_RETRY = {count_attempt: _retry_shape(count_attempt) for count_attempt in (True, False)}
# a claimed job given back untouched: queued again where it was (its run_at kept), the claim's attempt not counted
_GIVE_BACK = Shape(
    lambda: Job.update(
        {
            Job.status: JobStatus.QUEUED,
            Job.lease_until: None,
            Job.locked_by: None,
            Job.attempts: Job.attempts - 1,
            Job.updated_at: Slot("now", Job.updated_at),
        }
    ).where(_mine())
)
_BURY = Shape(
    lambda: Job.update(
        status=JobStatus.DEAD,
        lease_until=None,
        last_error=Slot("error", Job.last_error),
        updated_at=Slot("now", Job.updated_at),
    ).where(_mine())
)


def renew(job: Job, lease_s: float) -> bool:
    """Extend the lease of a job this claim still holds. False when it was lost (reclaimed elsewhere)."""
    now = clock.now()
    until = now + timedelta(seconds=lease_s)
    ok = _RENEW.run(id=job.id, by=job.locked_by, until=until, now=now) == 1
    if ok:
        job.lease_until = until
    return ok


def hold(job: Job, need_s: float, lease_s: float) -> datetime | None:
    """The fence (backend/networks/fence.py): whether this claim still holds `job`, with at least `need_s` of its
    lease left; a lease shorter than that is renewed first (to max(lease_s, need_s) from now). Returns the end
    of the lease held, None when the claim lost the job. A job this claim completed itself (a handler that
    completes its job in the transaction of its outcome, then goes on) stays held: nobody else can run it. One read by the job's primary key (locked inside a
    transaction on PostgreSQL, so that what the transaction then writes is the holder's), and a renewal only
    when the lease is short.

    It reads the row the takeover writes (`locked_by`, `status`, `lease_until`): a claim that is still held
    has, by the lease, `need_s` during which no other worker can take the job over. A lease that ran out but
    was not taken over yet is still this claim's: the renewal (fenced by `locked_by`) keeps it."""
    row: Job | None = _HOLD.first(id=job.id, by=job.locked_by)
    now = clock.now()
    if (
        row is not None and row.status == JobStatus.DONE
    ):  # this claim finished it (its handler completed it): no one
        return now + timedelta(seconds=need_s)  # else will run it; what the run still does is its own
    if row is None or row.status != JobStatus.RUNNING:
        return None
    held: datetime | None = row.lease_until
    if held is not None and held >= now + timedelta(seconds=need_s):
        return held
    if not renew(job, max(lease_s, need_s)):
        return None
    renewed: datetime | None = job.lease_until
    return renewed


def renew_all(locks: Iterable[str], lease_s: float) -> set[str]:
    """The heartbeat: extend, in one statement, the lease of every running job held by one of `locks` (the
    `locked_by` of each claim a worker is running). Returns the ids of the jobs renewed: a running claim whose
    job is not among them has lost its lease (or just finished)."""
    locks = list(locks)
    if not locks:
        return set()
    with tx():  # the lease counted from when the write lock is held, not from before waiting for it
        now = clock.now()
        rows = _RENEW_ALL.rows(locks=locks, until=now + timedelta(seconds=lease_s), now=now)
        return {row.id for row in rows}


def complete(job: Job) -> bool:
    """Mark the job done (fenced). A handler that must complete its job in the same transaction as its outcome
    calls this inside that transaction; once that commits, the worker sees `job.status == "done"` and does not
    complete it again. False when this claim no longer holds the job."""
    ok = _COMPLETE.run(id=job.id, by=job.locked_by, now=clock.now()) == 1
    if ok:  # marked once it is committed: a rolled-back transaction leaves the job for the worker to record
        database.after_commit(lambda: _mark(job, "done"))
    return ok


def _mark(job: Job, status: str) -> None:
    job.status = status


def retry(job: Job, delay_s: float, error: str | None, *, count_attempt: bool = True) -> bool:
    """Queue the job again in `delay_s` (fenced). count_attempt=False: this try does not count."""
    now = clock.now()
    run_at = now + timedelta(seconds=delay_s)
    ok = _RETRY[count_attempt].run(id=job.id, by=job.locked_by, run_at=run_at, error=error, now=now) == 1
    if ok:
        job.status = JobStatus.QUEUED
        database.after_commit(_wake_due if delay_s <= 0 else _wake)
    return ok


def give_back(job: Job) -> bool:
    """A job claimed but not run (fenced): queued again as it was before the claim, at its own due time (a later
    job of its lane does not overtake it) and without the claim's attempt. False when this claim no longer holds
    it."""
    ok = _GIVE_BACK.run(id=job.id, by=job.locked_by, now=clock.now()) == 1
    if ok:
        job.status = JobStatus.QUEUED
        database.after_commit(_wake_due)
    return ok


def bury(job: Job, error: str) -> bool:
    """Attempts exhausted or a permanent error: the job stays visible, status `dead`, with its last error."""
    ok = _BURY.run(id=job.id, by=job.locked_by, error=error, now=clock.now()) == 1
    if ok:
        job.status = JobStatus.DEAD
    return ok


def holder(job_id: str) -> tuple[str, str | None] | None:
    """(status, locked_by) of a job as committed, None when it no longer exists."""
    row = Job.select(Job.status, Job.locked_by).where(Job.id == job_id).first()
    return None if row is None else (row.status, row.locked_by)


def next_due_in(now: datetime | None = None) -> float | None:
    """Seconds until the next queued job is due (0 if one is due now), None when the queue is empty."""
    now = now or clock.now()
    row = Job.select(Job.run_at).where(Job.status == JobStatus.QUEUED).order_by(Job.run_at).limit(1).first()
    lease = (
        Job.select(Job.lease_until)
        .where(Job.status == JobStatus.RUNNING)
        .order_by(Job.lease_until)
        .limit(1)
        .first()
    )
    candidates: list[datetime] = [
        r for r in (row.run_at if row else None, lease.lease_until if lease else None) if r is not None
    ]
    if not candidates:
        return None
    return max(0.0, (min(candidates) - now).total_seconds())


_NEXT_DUE = Shape(
    lambda: (
        Job.select(Job.run_at, Job.lane)
        .where((Job.status == JobStatus.QUEUED) & (Job.run_at > Slot("now")))
        .order_by(Job.run_at)
        .limit(Slot("limit"))
        .tuples()
    )
)
# the first lease to end among the running jobs of other holders than the one whose locks begin with `mine`
_NEXT_LEASE_END = Shape(
    lambda: (
        Job.select(Job.lease_until, Job.lane)
        .where(
            (Job.status == JobStatus.RUNNING)
            & (Job.lease_until > Slot("now"))
            & (fn.substr(Job.locked_by, 1, Slot("length")) != Slot("mine"))
        )
        .order_by(Job.lease_until)
        .limit(1)
        .tuples()
    )
)


@dataclass(frozen=True)
class Change:
    """A job that becomes claimable in `in_s` seconds (it falls due, or its holder's lease ends), on `lane`."""

    in_s: float
    lane: str | None


def next_changes_in(mine: str, now: datetime | None = None, limit: int = 1) -> list[Change]:
    """When the next jobs that are not claimable yet become claimable (queued jobs fall due, the first lease of
    another holder than `mine` expires), ascending: the next `limit` due times and that lease's end, the earliest
    `limit` of them; empty when there is none. `mine`: the beginning of the locks of the worker asking (its id):
    the leases of its own jobs are renewed by its heartbeat, so their ends are not changes. Jobs claimable already
    are left out: the worker has tried them (or runs their lanes at their cap), so this is when to look again. Two
    statements whatever `limit` (the worker's watcher reads several at once: it wakes a thread at each without
    reading again)."""
    now = now or clock.now()
    rows = _NEXT_DUE.rows(now=now, limit=limit)
    rows += _NEXT_LEASE_END.rows(now=now, length=len(mine), mine=mine)
    changes = [Change(max(0.0, (at - now).total_seconds()), lane) for at, lane in rows if at is not None]
    return sorted(changes, key=lambda c: c.in_s)[:limit]


def stats() -> dict[str, int]:
    counts = Job.select(Job.status, fn.COUNT(Job.id)).group_by(Job.status).tuples()
    # peewee's tuples() yields (status, count) tuples; its stubs still say Job rows
    return {status: int(n) for status, n in cast("Iterable[tuple[str, int]]", counts)}


def release_dead_holders(host: str, alive: Callable[[int], bool]) -> list[tuple[str, str, str]]:
    """Jobs still `running` under a process of `host` that no longer exists (`alive(pid)` is False: the
    process was killed): their leases end now, so a restarted worker takes them over at once instead of
    waiting out a dead process's lease. Holders are `name:host:pid:…` (Worker.id). Returns (job id, kind,
    previous holder) of each released job. Fenced: only the rows still held by that holder are changed.

    The rows are read to the end before the first write: on SQLite a write made while a read is still open must
    upgrade that read's snapshot, which fails at once ("database is locked", no busy wait) once another process
    has committed since."""
    released: list[tuple[str, str, str]] = []
    rows = list(
        Job.select(Job.id, Job.kind, Job.locked_by).where(
            (Job.status == JobStatus.RUNNING) & Job.locked_by.contains(f":{host}:")
        )
    )
    now = clock.now()
    for row in rows:
        holder = row.locked_by
        if holder is None:
            continue
        parts = holder.split(":")
        if len(parts) < 4 or parts[1] != host or not parts[2].isdigit() or alive(int(parts[2])):
            continue
        if (
            Job.update(lease_until=now - timedelta(seconds=1), updated_at=now)
            .where(  # expired (claim: < now)
                (Job.id == row.id) & (Job.status == JobStatus.RUNNING) & (Job.locked_by == holder)
            )
            .execute()
        ):
            released.append((row.id, row.kind, holder))
    return released
