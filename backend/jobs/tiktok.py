"""Job handlers of dedicated TikTok publishing (logic in backend/services/tiktok.py)."""

from __future__ import annotations

from datetime import timedelta

from backend.jobs.registry import JobContext, job_handler, periodic
from backend.schemas.tiktok import TikTokStatus
from backend.services import tiktok
from backend.store.db import tx
from backend.store.models import Job, TikTokPublish


def _dead(job: Job, error: str) -> None:
    tiktok.give_up(job.payload["id"], error)


@job_handler(tiktok.TRACK_JOB, on_dead=_dead)
def tiktok_track(job: Job, ctx: JobContext) -> None:
    tiktok.track(job.payload["id"], ctx.settings)


def _upload_dead(job: Job, error: str) -> None:
    tiktok.give_up_upload(job.payload["id"], error)


@job_handler(tiktok.UPLOAD_JOB, on_dead=_upload_dead)
def tiktok_upload(job: Job, ctx: JobContext) -> None:
    tiktok.upload(job.payload["id"], ctx.settings)


INITIATING_GRACE = timedelta(minutes=10)


@periodic("tiktok.settle_interrupted", every_s=300)
def settle_interrupted(ctx: JobContext) -> None:
    """A record left INITIATING (the process died between TikTok's answer and our commit) never got a
    publishId, so nothing tracks it: settle it FAILED after a grace period instead of leaving it open."""
    now = ctx.now()
    stale = TikTokPublish.select(TikTokPublish.id).where(
        (TikTokPublish.status == TikTokStatus.INITIATING)
        & (TikTokPublish.created_at < now - INITIATING_GRACE)
    )
    ids = [r.id for r in stale]
    if not ids:
        return
    with tx():
        (
            TikTokPublish.update(
                status=TikTokStatus.FAILED,
                fail_reason="internal",
                completed_at=now,
                updated_at=now,
                fail_message="the service stopped while sending this publication to TikTok, so its outcome is "
                "unknown: check the TikTok app (drafts and profile) before sending it again",
            )
            .where(TikTokPublish.id.in_(ids) & (TikTokPublish.status == TikTokStatus.INITIATING))
            .execute()
        )
