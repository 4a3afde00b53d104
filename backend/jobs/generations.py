"""Job handler of generations (logic in backend/services/generations.py): one `generation.produce` job per
creation, on the lane `generation` (at most a share of the worker's threads produce files at once)."""

from __future__ import annotations

from backend.jobs.registry import JobContext, job_handler
from backend.services import generations
from backend.store.models import Job


def _dead(job: Job, error: str) -> None:
    generations.give_up(job.payload["generation_id"], error)


@job_handler(generations.PRODUCE_JOB, on_dead=_dead)
def generation_produce(job: Job, ctx: JobContext) -> None:
    generations.produce(job, ctx.settings)
