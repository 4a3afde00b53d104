"""Job handler of webhook delivery (logic in backend/services/webhooks.py): one `webhook.deliver` job per delivery,
on its endpoint's serial lane (one at a time per worker, oldest first)."""

from __future__ import annotations

from typing import Any

from backend.jobs.registry import job_handler
from backend.services import events, webhooks


def _dead(job: Any, error: str) -> None:
    webhooks.give_up(job.payload["delivery_id"], error)


@job_handler(events.DELIVER_JOB, on_dead=_dead)
def webhook_deliver(job: Any, ctx: Any) -> None:
    webhooks.deliver(job, ctx.settings)
