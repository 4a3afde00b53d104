"""Job handlers of dedicated TikTok publishing (logic in backend/services/tiktok.py)."""

from __future__ import annotations

from typing import Any

from backend.jobs.registry import job_handler
from backend.services import tiktok


def _dead(job: Any, error: str) -> None:
    tiktok.give_up(job.payload["id"], error)


@job_handler(tiktok.TRACK_JOB, on_dead=_dead)
def tiktok_track(job: Any, ctx: Any) -> None:
    tiktok.track(job.payload["id"], ctx.settings)
