"""Job handlers of the publishing engine (logic in backend/services/publishing.py)."""

from __future__ import annotations

from typing import Any

from backend.jobs.registry import job_handler
from backend.services import publishing


def _target_dead(job: Any, error: str) -> None:
    publishing.give_up(job.payload["target_id"], error)


def _post_dead(job: Any, error: str) -> None:
    publishing.give_up_post(job.payload["post_id"], error)


@job_handler("post.publish", on_dead=_post_dead)
def post_publish(job: Any, ctx: Any) -> None:
    publishing.start_post(job.payload["post_id"], ctx.settings)


@job_handler("target.publish", on_dead=_target_dead)
def target_publish(job: Any, ctx: Any) -> None:
    publishing.publish_target(job.payload["target_id"], ctx.settings, job.attempts, job.max_attempts)


@job_handler("target.track", on_dead=_target_dead)
def target_track(job: Any, ctx: Any) -> None:
    publishing.track_target(job.payload["target_id"], ctx.settings, job.attempts, job.max_attempts)
