"""Housekeeping jobs: prune finished rate-limit windows, old finished jobs and expired OAuth sessions."""

from __future__ import annotations

from datetime import timedelta

from backend.jobs.registry import JobContext, periodic
from backend.schemas.statuses import JobStatus
from backend.services import oauth_connect, ratelimit
from backend.store.models import Job

DONE_JOB_RETENTION = timedelta(days=7)


@periodic("housekeeping.prune", every_s=300)
def prune(ctx: JobContext) -> None:
    ratelimit.prune()
    oauth_connect.prune_sessions(ctx.now())
    cutoff = ctx.now() - DONE_JOB_RETENTION
    Job.delete().where((Job.status == JobStatus.DONE) & (Job.updated_at < cutoff)).execute()
