"""The publishing engine: moves posts from `scheduled`/`processing` to `completed`, `partial` or `failed`.

Jobs (durable rows, see backend/jobs/queue.py):
- `post.publish` {post_id}: due at `scheduledAt` (or now). Turns a scheduled post into `processing`
  (lateness recorded), releases its media to the retention rule, and fans out one
  `target.publish` job per pending target, in one transaction.
- `target.publish` {target_id}: builds what the network receives (backend/networks/rules), marks the
  target `publishing` and commits BEFORE calling the network (the evidence that a call may have
  happened), calls the adapter, and applies the outcome. After a crash mid-call, the next attempt
  asks the network (`find_existing`) before publishing again: a target is never published twice.
- `target.track` {target_id}: follows asynchronous network processing (TikTok, Instagram containers,
  YouTube processing) until confirmation, or fails `retriable` past the platform's deadline.

Every target outcome writes a `publish.completed` / `publish.failed` event in the same transaction;
the last target outcome settles the post's overall status under the post's row lock.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from datetime import datetime, timedelta
from typing import Any

import httpx

from backend import clock
from backend.config import Settings
from backend.jobs import queue
from backend.jobs.registry import RetryLater
from backend.jobs.retry import RetryStrategy
from backend.services import events
from backend.store import fast
from backend.store.db import tx
from backend.store.models import Account, Post, PostTarget

log = logging.getLogger("socialpub.engine")

TERMINAL_TARGET = ("succeeded", "failed", "inbox_delivered")
SUCCESS_TARGET = ("succeeded", "inbox_delivered")

# How long a network may take to confirm an accepted publication before the target fails `retriable`.
TRACK_DEADLINE_S = {
    "tiktok": 2 * 3600,  # moderation can take long; drafts arrive in 10-15 s
    "instagram": 15 * 60,  # Meta: containers usually ready at once, poll for 5 minutes at most
    "youtube": 60 * 60,
    "linkedin": 15 * 60,
    "facebook": 15 * 60,
}


# ---- helpers ----------------------------------------------------------------------------------------
def _strategy(settings: Settings) -> RetryStrategy:
    return RetryStrategy(base_s=settings.retry_base_s, max_attempts=settings.retry_max_attempts)


def _track_poll_s(settings: Settings, account: Account | None) -> float:
    if account is not None and account.kind == "sandbox":
        return max(0.02, min(settings.track_poll_s, settings.sandbox_delay_s / 3))
    return settings.track_poll_s


def media_refs(post: Post) -> list[Any]:
    """The post's media as MediaRef, from what was resolved at acceptance (`post.media`)."""
    from backend.networks.base import MediaRef

    resolved = getattr(post, "media", None) or []
    return [MediaRef.from_dict(m) for m in resolved]


def build_publication(post: Post, target: PostTarget, account: Account) -> Any:
    from backend.networks.base import AccountCredentials, Publication
    from backend.networks.options import PostOptions
    from backend.networks.rules import RULES

    options = PostOptions.model_validate(post.options or {})
    payload = RULES[target.platform].payload(post.content, media_refs(post), options)
    creds = AccountCredentials(external_account_id=account.external_id, access_token=account.access_token,
                               username=account.username or None)
    return Publication(payload=payload, account=creds, idempotency_token=target.idempotency_token,
                       attempted_at=target.started_at)


def adapter_for(platform: str, settings: Settings, account: Account) -> Any:
    from backend.networks.sandbox import make_adapter

    return make_adapter(platform, settings)


# ---- post.publish -------------------------------------------------------------------------------------
def start_post(post_id: str, settings: Settings) -> list[str]:
    """Due time reached (or immediate post): processing + fan-out. Returns the target ids fanned out."""
    now = clock.now()
    fanned: list[str] = []
    with tx():
        post = fast.get(Post, post_id, lock=True)
        if post is None or post.status not in ("scheduled", "processing"):
            return []
        if post.status == "scheduled" and post.scheduled_at is not None and post.scheduled_at > now:
            # Moved later by an edit after this job was claimed: wait for the new time.
            raise RetryLater("scheduled time moved later", delay_s=(post.scheduled_at - now).total_seconds(),
                             count_attempt=False)
        if post.status == "scheduled":
            lateness = (now - post.scheduled_at).total_seconds() if post.scheduled_at else 0.0
            post.lateness_ms = int(max(0.0, lateness) * 1000)
            if lateness > 1.0:
                log.warning("post %s sent %.1f s after its scheduled time", post.id, lateness)
            post.status = "processing"
            if settings.max_lateness_s is not None and lateness > settings.max_lateness_s:
                post.sent_at = now
                post.updated_at = now
                fast.update(Post, post.id, {"status": post.status, "lateness_ms": post.lateness_ms,
                                            "sent_at": now, "updated_at": now})
                reason = (f"not sent: the scheduled time passed {int(lateness)} s ago while no worker was running, "
                          f"over the maximum lateness of {int(settings.max_lateness_s)} s "
                          "(SOCIALPUB_MAX_LATENESS_S). Retrying creates it again now.")
                for t in fast.select_where(PostTarget, "post", post.id):
                    if t.status == "pending":
                        _finish_target(t, post, "failed", fail_reason=reason, fail_type="retriable")
                _settle(post)
                return []
        if post.sent_at is None:
            post.sent_at = now
        post.updated_at = now
        fast.update(Post, post.id, {"status": post.status, "lateness_ms": post.lateness_ms,
                                    "sent_at": post.sent_at, "updated_at": now})
        _release_media(post, now)
        for t in sorted(fast.select_where(PostTarget, "post", post.id), key=lambda t: t.position):
            if t.status != "pending":
                continue
            queue.enqueue("target.publish", {"target_id": t.id}, workspace_id=post.workspace_id,
                          dedupe_key=f"target:{t.id}", max_attempts=settings.retry_max_attempts)
            fanned.append(t.id)
        queue.complete_current()  # the post.publish job's `done` with its fan-out
    return fanned


def _release_media(post: Post, now: datetime) -> None:
    try:
        from backend.services import media as media_service
    except ImportError:
        return
    release = getattr(media_service, "release", None)
    if release is not None:
        release(f"post:{post.id}", now)


# ---- target.publish / target.track -------------------------------------------------------------------
def publish_target(target_id: str, settings: Settings, job_attempts: int, job_max_attempts: int) -> None:
    target = fast.get(PostTarget, target_id)
    if target is None or target.status in TERMINAL_TARGET:
        return
    post = fast.get(Post, target.post_id)
    if post is None or post.status not in ("processing",):
        return
    account = fast.get(Account, target.account_id) if target.account_id else None
    if account is None or account.status != "active":
        state = "disconnected" if account is None else account.status.replace("_", " ")
        with tx():
            _finish_target(target, post, "failed", fail_type="permanent",
                           fail_reason=f"the {target.platform} account {target.account_name!r} is {state}: "
                                       "reconnect it, then create the post again for this network")
            _settle(post)
        return
    if target.tracking_ref:  # accepted by the network earlier: only tracking is left
        track_target(target.id, settings, job_attempts, job_max_attempts)
        return
    pub = build_publication(post, target, account)
    adapter = adapter_for(target.platform, settings, account)

    if target.call_started_at is not None:
        # A previous attempt may have reached the network (crash or cut connection): ask first.
        existing = adapter.find_existing(pub)
        if existing is not None:
            log.info("target %s: found the publication made by an earlier attempt, not publishing again", target.id)
            _apply(target.id, existing, settings, account, job_attempts, job_max_attempts)
            return

    # The evidence that a call may happen, committed BEFORE the call: one conditional UPDATE in its own
    # (autocommit) transaction; 0 rows when the target reached a final state meanwhile.
    now = clock.now()
    if not fast.update(PostTarget, target.id, {"status": "publishing", "started_at": now, "call_started_at": now,
                                               "updated_at": now},
                       increment=("attempts",), keep=("started_at",), unless_status_in=TERMINAL_TARGET):
        return
    if target.started_at is None:
        pub = dataclasses.replace(pub, attempted_at=now)
    try:
        outcome = adapter.publish(pub)
    except httpx.HTTPError as exc:
        from backend.networks.base import PublishOutcome

        outcome = PublishOutcome(state="failed", fail_type="retriable", ambiguous=True,
                                 fail_reason=f"could not reach {target.platform} ({type(exc).__name__}); "
                                             "it will be retried automatically")
    _apply(target.id, outcome, settings, account, job_attempts, job_max_attempts)


def track_target(target_id: str, settings: Settings, job_attempts: int, job_max_attempts: int) -> None:
    target = fast.get(PostTarget, target_id)
    if target is None or target.status in TERMINAL_TARGET or not target.tracking_ref:
        return
    post = fast.get(Post, target.post_id)
    if post is None:
        return
    account = fast.get(Account, target.account_id) if target.account_id else None
    if account is None:
        with tx():
            _finish_target(target, post, "failed", fail_type="permanent",
                           fail_reason="the account was disconnected while the network was processing the post")
            _settle(post)
        return
    pub = build_publication(post, target, account)
    adapter = adapter_for(target.platform, settings, account)
    try:
        outcome = adapter.check_status(pub, target.tracking_ref)
    except httpx.HTTPError as exc:
        raise RetryLater(f"status check failed: {type(exc).__name__}") from exc
    _apply(target.id, outcome, settings, account, job_attempts, job_max_attempts, tracking=True)


def _apply(target_id: str, outcome: Any, settings: Settings, account: Account, job_attempts: int,
           job_max_attempts: int, *, tracking: bool = False) -> None:
    now = clock.now()
    with tx():
        target = fast.get(PostTarget, target_id, lock=True)
        if target is None or target.status in TERMINAL_TARGET:
            return
        post = fast.get(Post, target.post_id)
        if outcome.state in ("published", "inbox_delivered"):
            status = "succeeded" if outcome.state == "published" else "inbox_delivered"
            _finish_target(target, post, status, external_post_id=outcome.external_post_id,
                           post_url=outcome.post_url, network_status=outcome.network_status)
            _settle(post)
            queue.complete_current()  # the job's `done` in the outcome's transaction
            return
        if outcome.state == "pending":
            deadline = target.track_deadline or now + timedelta(seconds=TRACK_DEADLINE_S.get(target.platform, 900))
            if tracking and now >= deadline:
                _finish_target(target, post, "failed", fail_type="retriable",
                               fail_reason=f"{target.platform} accepted the post but did not confirm it within "
                                           f"{int((deadline - (target.started_at or now)).total_seconds() // 60)} "
                                           "minutes; it may still appear: check the account before retrying")
                _settle(post)
                return
            fast.update(PostTarget, target.id, {
                "status": "publishing", "tracking_ref": outcome.tracking_ref or target.tracking_ref,
                "external_post_id": outcome.external_post_id or target.external_post_id,
                "network_status": outcome.network_status, "track_deadline": deadline, "updated_at": now,
            })
            if tracking:
                raise RetryLater(f"{target.platform}: {outcome.network_status or 'processing'}",
                                 delay_s=_track_poll_s(settings, account), count_attempt=False)
            queue.enqueue("target.track", {"target_id": target.id}, workspace_id=post.workspace_id,
                          run_at=now + timedelta(seconds=_track_poll_s(settings, account)),
                          dedupe_key=f"track:{target.id}", max_attempts=settings.retry_max_attempts)
            queue.complete_current()
            return
        # failed
        if outcome.fail_type == "retriable" and job_attempts < job_max_attempts:
            if not outcome.ambiguous:
                fast.update(PostTarget, target.id, {"call_started_at": None, "updated_at": now})
            fast.update(PostTarget, target.id, {"fail_reason": outcome.fail_reason, "updated_at": now})
            decision = _strategy(settings).decide(job_attempts, outcome.retry_after_s)
            delay = decision.delay_s if decision.retry else (outcome.retry_after_s or 0.0)
            raise_later = RetryLater(outcome.fail_reason or "retriable network failure", delay_s=delay)
        else:
            reason = outcome.fail_reason or "the network refused the post"
            if outcome.fail_type == "retriable":
                # the network's wording promised a retry; no more come: say so instead of contradicting it
                reason = _WILL_RETRY.sub("", reason).rstrip(" ;,")
                reason = f"{reason} (gave up after {job_attempts} attempts; retrying the post later may succeed)"
            _finish_target(target, post, "failed", fail_reason=reason,
                           fail_type=outcome.fail_type or "permanent", network_status=outcome.network_status)
            if outcome.network_code in _AUTH_CODES:
                Account.update(status="needs_reauth").where(Account.id == account.id).execute()
            _settle(post)
            return
    raise raise_later


_WILL_RETRY = re.compile(r"[;,]?\s*it will be retried(?: after [^;()]*)?", re.I)

_AUTH_CODES = {"access_token_invalid", "scope_not_authorized", "190", "102", "65600", "invalid_grant", "401"}


def give_up(target_id: str, error: str) -> None:
    """A target job died (attempts exhausted on an unexpected error): the target must not stay stuck."""
    log.error("target %s: giving up after an internal error: %s", target_id, error)
    with tx():
        target = fast.get(PostTarget, target_id, lock=True)
        if target is None or target.status in TERMINAL_TARGET:
            return
        post = fast.get(Post, target.post_id)
        _finish_target(target, post, "failed", fail_type="retriable",
                       fail_reason="publishing stopped on an internal error (details are in the server log under "
                                   f"target {target_id}); retrying may succeed")
        _settle(post)


# ---- state changes (inside a transaction) -------------------------------------------------------------
def _finish_target(target: PostTarget, post: Post, status: str, *, external_post_id: str | None = None,
                   post_url: str | None = None, fail_reason: str | None = None, fail_type: str | None = None,
                   network_status: str | None = None) -> None:
    now = clock.now()
    success = status in SUCCESS_TARGET
    fast.update(PostTarget, target.id, {
        "status": status, "external_post_id": external_post_id or target.external_post_id, "post_url": post_url,
        "fail_reason": None if success else fail_reason, "fail_type": None if success else fail_type,
        "network_status": network_status, "completed_at": now, "updated_at": now,
        "started_at": target.started_at or now,
    })
    data: dict[str, Any] = {
        "postId": post.id, "targetId": target.id, "platform": target.platform, "accountId": target.account_id,
        "status": status,
    }
    if success:
        data.update(postUrl=post_url, externalPostId=external_post_id or target.external_post_id)
        events.record(post.workspace_id, "publish.completed", data, subject_id=post.id)
    else:
        data.update(failReason=fail_reason, failType=fail_type)
        events.record(post.workspace_id, "publish.failed", data, subject_id=post.id)


def _settle(post: Post) -> None:
    """Overall status from the targets, once every target is final (spec 3.1)."""
    fresh = fast.get(Post, post.id, lock=True)
    if fresh is None or fresh.status != "processing":
        return
    statuses = [t.status for t in fast.select_where(PostTarget, "post", post.id)]
    if any(s not in TERMINAL_TARGET for s in statuses):
        return
    ok = sum(s in SUCCESS_TARGET for s in statuses)
    overall = "completed" if ok == len(statuses) else ("failed" if ok == 0 else "partial")
    now = clock.now()
    fast.update(Post, post.id, {"status": overall, "completed_at": now, "updated_at": now})

