"""Job handler of webhook delivery (logic in backend/services/webhooks.py): one `webhook.deliver` job per delivery,
on its endpoint's serial lane (one at a time per worker, oldest first)."""

from __future__ import annotations

from backend.jobs.registry import JobContext, job_handler, periodic
from backend.services import events, webhooks
from backend.store.models import Job


def _dead(job: Job, error: str) -> None:
    webhooks.give_up(job.payload["delivery_id"], error)


@job_handler(events.DELIVER_JOB, on_dead=_dead)
def webhook_deliver(job: Job, ctx: JobContext) -> None:
    webhooks.deliver(job, ctx.settings)


@periodic("webhooks.prune", every_s=3600)
def prune_log(ctx: JobContext) -> None:
    webhooks.prune(ctx.now())
