"""The statements that need more than a plain peewee query: one function each, the same on SQLite and PostgreSQL.

Everything else in the product reads and writes through peewee queries on the models. What lives here needs a
database feature that must be used with care (row locks skipped by other transactions, RETURNING, the write
lock taken up front), so it is written once, documented once and tested on both databases
(tests/jobs/test_statements.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from backend import clock
from backend.store.db import database, is_sqlite
from backend.store.models import Job

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
    stalled). The claimed rows become `running`, locked by `locked_by` until `now + lease_s`, with one more
    attempt. `now` (default: the clock, read inside the transaction, so that a claim that waited for the write
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
    params: list[Any] = []
    branch_filter = ""
    if only_unlaned:
        branch_filter += ' AND "lane" IS NULL'
    elif skip_lanes:
        branch_filter += f' AND ("lane" IS NULL OR "lane" NOT IN ({", ".join(["{p}"] * len(skip_lanes))}))'
        params += list(skip_lanes)
    if kinds:
        branch_filter += f' AND "kind" IN ({", ".join(["{p}"] * len(kinds))})'
        params += list(kinds)
    sql = _claim_sql(branch_filter)

    def run() -> list[tuple[Any, ...]]:
        at_now = clock.now() if now is None else now  # read once the transaction holds the write lock
        at = Job.run_at.db_value(at_now)
        values = [
            locked_by,
            Job.lease_until.db_value(at_now + timedelta(seconds=lease_s)),
            at,
            TAKEN_OVER,
            "running",
            at,
            *params,
            limit,
            "queued",
            at,
            *params,
            limit,
            limit,
        ]
        return database.execute_sql(sql, values).fetchall()

    with database.atomic("IMMEDIATE") if is_sqlite() else database.atomic():
        rows = run()
    jobs = [Job(**{f.name: f.python_value(v) for f, v in zip(_FIELDS, row, strict=True)}) for row in rows]
    jobs.sort(key=lambda j: (not (j.last_error or "").startswith(TAKEN_OVER), j.run_at))
    return jobs


# The columns a claim returns, as the model's fields (each converts its column with python_value).
_FIELDS = (
    Job.id,
    Job.kind,
    Job.payload,
    Job.status,
    Job.run_at,
    Job.attempts,
    Job.max_attempts,
    Job.lease_until,
    Job.locked_by,
    Job.last_error,
    Job.dedupe_key,
    Job.workspace_id,
    Job.lane,
    Job.created_at,
    Job.updated_at,
)
_CLAIM_SQL: dict[tuple[str, str], str] = {}


def _claim_sql(branch_filter: str) -> str:
    """The claim statement for one dialect and one shape of filter (built once; the claim runs for every job).
    `branch_filter` holds `{p}` where a parameter goes."""
    key = ("sqlite" if is_sqlite() else "postgresql", branch_filter)
    sql = _CLAIM_SQL.get(key)
    if sql is None:
        p = database.param
        lock = "" if is_sqlite() else " FOR UPDATE SKIP LOCKED"
        where = branch_filter.format(p=p)
        columns = ", ".join(f'"{f.column_name}"' for f in _FIELDS)
        sql = (
            f'UPDATE "job" SET "status" = \'running\', "locked_by" = {p}, "lease_until" = {p}, '
            f'"attempts" = "attempts" + 1, "updated_at" = {p}, '
            f'"last_error" = CASE WHEN "status" = \'running\' THEN {p} || "locked_by" ELSE "last_error" END '
            f'WHERE "id" IN ('
            f'SELECT "id" FROM (SELECT "id" FROM "job" WHERE "status" = {p} AND "lease_until" < {p}{where} '
            f'ORDER BY "lease_until" LIMIT {p}{lock}) AS "expired" '
            f"UNION ALL "
            f'SELECT "id" FROM (SELECT "id" FROM "job" WHERE "status" = {p} AND "run_at" <= {p}{where} '
            f'ORDER BY "run_at" LIMIT {p}{lock}) AS "due" '
            f"LIMIT {p}) "
            f"RETURNING {columns}"
        )
        _CLAIM_SQL[key] = sql
    return sql
