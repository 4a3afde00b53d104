"""The statements that need more than a plain query: one function each, the same on SQLite and PostgreSQL.

Written in peewee like every other statement (a statement shape, backend/store/shapes.py: rendered once). What
lives here needs a database feature that must be used with care (row locks skipped by other transactions,
RETURNING, the write lock taken up front), so it is written once, documented once and tested on both databases
(tests/jobs/test_statements.py). The store's own job statuses are spelled here as the column holds them (the store
imports no schema).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from peewee import Case, Select

from backend import clock
from backend.store.db import database, is_sqlite
from backend.store.models import Job
from backend.store.shapes import Shape, Slot

# The prefix of `last_error` set on a job taken over from a worker whose lease expired (followed by the holder).
TAKEN_OVER = "lease expired: taken over from "


def claim_jobs(
    locked_by: str,
    *,
    now: datetime | None = None,
    lease_s: float,
    limit: int = 1,
    skip_lanes: Sequence[str] = (),
    only_unlaned: bool = False,
    kinds: Sequence[str] | None = None,
) -> list[Job]:
    """Claim up to `limit` jobs for `locked_by` in ONE atomic statement; returns them, expired leases first,
    then by due time.

    Claimable: `queued` and due (`run_at <= now`), or `running` with an expired lease (its worker died or
    stalled). The claimed rows become `running`, each locked by `locked_by` + "/" + its id (so that every job of
    a claim of several is fenced by a claim of its own) until `now + lease_s`, with one more attempt. `now` (default: the clock, read inside the transaction, so that a claim that waited for the write
    lock neither misses what fell due meanwhile nor starts with a lease already shortened by the wait). A job
    taken over from an expired lease keeps a trace of it: its `last_error` becomes
    TAKEN_OVER + the previous holder (the RETURNING clause sees only the new row, so this is how the caller
    learns who held it; the job's next recorded result overwrites it).

    skip_lanes: lanes not to claim from (the caller runs them at their cap); jobs without a lane are never
    skipped by it. only_unlaned: claim only jobs without a lane. kinds: claim only these kinds.

        PostgreSQL: UPDATE job SET … WHERE id IN (
                      SELECT id FROM (SELECT id FROM job WHERE <running, lease expired> ORDER BY lease_until
                                      LIMIT n FOR UPDATE SKIP LOCKED) expired
                      UNION ALL
                      SELECT id FROM (SELECT id FROM job WHERE <queued, due> ORDER BY run_at
                                      LIMIT n FOR UPDATE SKIP LOCKED) due
                      LIMIT n) RETURNING job.*
                    Concurrent claimers skip each other's locked rows: any number of workers share the queue.
        SQLite:     the same UPDATE … RETURNING (no FOR UPDATE) inside BEGIN IMMEDIATE: the write lock is taken
                    before the candidates are read, so two claimers are serialised and never get the same job.
    """
    shape = _claim_shape(only_unlaned, len(skip_lanes) if not only_unlaned else 0, len(kinds or ()))
    lanes = {f"lane{i}": lane for i, lane in enumerate(() if only_unlaned else skip_lanes)}
    kinds_given = {f"kind{i}": kind for i, kind in enumerate(kinds or ())}
    with database.atomic("IMMEDIATE") if is_sqlite() else database.atomic():
        at_now = clock.now() if now is None else now  # read once the transaction holds the write lock
        jobs: list[Job] = shape.rows(
            by=locked_by,
            until=at_now + timedelta(seconds=lease_s),
            now=at_now,
            taken=TAKEN_OVER,
            limit=limit,
            **lanes,
            **kinds_given,
        )
    jobs.sort(key=lambda j: (not (j.last_error or "").startswith(TAKEN_OVER), j.run_at))
    return jobs


# The claim's statement for each shape of filter: (only_unlaned, how many lanes skipped, how many kinds).
_CLAIMS: dict[tuple[bool, int, int], Shape] = {}


def _claim_shape(only_unlaned: bool, n_lanes: int, n_kinds: int) -> Shape:
    key = (only_unlaned, n_lanes, n_kinds)
    shape = _CLAIMS.get(key)
    if shape is None:
        shape = _CLAIMS[key] = Shape(lambda: _claim_query(only_unlaned, n_lanes, n_kinds))
    return shape


def _claim_query(only_unlaned: bool, n_lanes: int, n_kinds: int) -> Any:
    """UPDATE job … WHERE id IN (expired UNION ALL due LIMIT n) RETURNING job.*, built once per kind of database
    (PostgreSQL: each branch FOR UPDATE SKIP LOCKED) and filter shape. Slots: by, until, now, taken, limit,
    lane0…, kind0…"""

    def branch(condition: Any, order: Any, name: str) -> Any:
        if only_unlaned:
            condition &= Job.lane.is_null()
        elif n_lanes:
            condition &= Job.lane.is_null() | Job.lane.not_in([Slot(f"lane{i}") for i in range(n_lanes)])
        if n_kinds:
            condition &= Job.kind.in_([Slot(f"kind{i}") for i in range(n_kinds)])
        candidates = Job.select(Job.id).where(condition).order_by(order).limit(Slot("limit"))
        if not is_sqlite():
            candidates = candidates.for_update(skip_locked=True)
        source = candidates.alias(name)
        return Select([source], [source.c.id])

    now = Slot("now")
    expired = branch((Job.status == "running") & (Job.lease_until < now), Job.lease_until, "expired")
    due = branch((Job.status == "queued") & (Job.run_at <= now), Job.run_at, "due")
    taken_over = Case(
        None,
        [(Job.status == "running", Slot("taken", Job.last_error).concat(Job.locked_by))],
        Job.last_error,
    )
    return (
        Job.update(
            status="running",
            locked_by=Slot("by", Job.locked_by).concat("/").concat(Job.id),  # each job a claim of its own
            lease_until=Slot("until", Job.lease_until),
            attempts=Job.attempts + 1,
            updated_at=Slot("now", Job.updated_at),
            last_error=taken_over,  # SET's expressions read the row as it was: the previous holder
        )
        .where(Job.id.in_((expired + due).limit(Slot("limit"))))
        .returning(Job)
    )
