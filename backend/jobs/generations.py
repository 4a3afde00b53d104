"""Job handler of generations (logic in backend/services/generations.py): one `generation.produce` job per
creation, on the lane `generation` (at most a share of the worker's threads produce files at once)."""

from __future__ import annotations

from typing import Any

from backend.jobs.registry import job_handler
from backend.services import generations


def _dead(job: Any, error: str) -> None:
    generations.give_up(job.payload["generation_id"], error)


@job_handler(generations.PRODUCE_JOB, on_dead=_dead)
def generation_produce(job: Any, ctx: Any) -> None:
    generations.produce(job, ctx.settings)
