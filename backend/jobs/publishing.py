"""Job handlers of the publishing engine (logic in backend/services/publishing/)."""

from __future__ import annotations

from backend.jobs.registry import JobContext, job_handler
from backend.services import publishing
from backend.store.models import Job


def _target_dead(job: Job, error: str) -> None:
    publishing.give_up(job.payload["target_id"], error)


def _post_dead(job: Job, error: str) -> None:
    publishing.give_up_post(job.payload["post_id"], error)


@job_handler("post.publish", on_dead=_post_dead)
def post_publish(job: Job, ctx: JobContext) -> None:
    publishing.start_post(job, ctx.settings)


@job_handler("target.publish", on_dead=_target_dead)
def target_publish(job: Job, ctx: JobContext) -> None:
    publishing.publish_target(job, ctx.settings)


@job_handler("target.track", on_dead=_target_dead)
def target_track(job: Job, ctx: JobContext) -> None:
    publishing.track_target(job, ctx.settings)
