"""Job handlers of token life (logic in backend/services/tokens.py): the `tokens.sweep` periodic job and one
`token.refresh` job per account and expiry, on its network's lane."""

from __future__ import annotations

from backend.jobs.registry import JobContext, job_handler, periodic
from backend.queue.backoff import PermanentJobError, RetryLater
from backend.services import tokens
from backend.store.models import Job


@periodic("tokens.sweep", every_s=tokens.SWEEP_EVERY_S)
def sweep(ctx: JobContext) -> None:
    tokens.sweep(ctx.settings, ctx.now())


def _dead(job: Job, error: str) -> None:
    tokens.refresh_died(job.payload["account_id"], error)


@job_handler(tokens.REFRESH_JOB, on_dead=_dead)
def refresh(job: Job, ctx: JobContext) -> None:
    """Refresh one account's token. A transient failure is retried with backoff (the account untouched); another
    refresh in flight: try again when it is over; a dead grant has turned the account needs_reauth. A job that
    dies says so at WARNING with its account (the sweep asks again later while the account is due)."""
    try:
        tokens.refresh_account(job.payload["account_id"], ctx.settings)
    except tokens.RefreshBusy as exc:
        raise RetryLater(
            str(exc), delay_s=max(1.0, (exc.until - ctx.now()).total_seconds()), count_attempt=False
        ) from None
    except tokens.RefreshTransient as exc:
        raise RetryLater(f"token refresh: {exc}", delay_s=exc.retry_after_s) from None
    except (tokens.RefreshRejected, tokens.NotRefreshable, tokens.NotConfigured) as exc:
        raise PermanentJobError(f"token refresh: {exc}") from None
