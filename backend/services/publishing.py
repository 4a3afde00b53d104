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
import threading
from concurrent.futures import ThreadPoolExecutor
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
from backend.store.db import database, tx
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
    """What `target`'s network receives (one target; a post's batch builds them with _publication_builder)."""
    return _publication_builder(post)(target, account)


def adapter_for(platform: str, settings: Settings, account: Account) -> Any:
    from backend.networks.sandbox import make_adapter

    return make_adapter(platform, settings)


# ---- post.publish -------------------------------------------------------------------------------------
@dataclasses.dataclass
class _Call:
    """One target of a post being published in the post's batch."""

    target: PostTarget
    account: Account
    pub: Any
    recheck: bool  # a previous attempt may have reached the network: ask it first
    outcome: Any = None
    error: str | None = None  # an unexpected exception: the target continues on its own job


@dataclasses.dataclass
class _PostBatch:
    """A post between its two transactions: its rows as of the first, and the calls to make."""

    post: Post
    targets: list[PostTarget]
    calls: list[_Call]


def _worker_completes() -> None:
    """The job is completed by the worker once its handler returns (worker branch stand-in for the removed
    thread-local `queue.complete_current`; the engine's rewrite passes the job and calls `queue.complete(job)`)."""


def start_post(post_id: str, settings: Settings) -> list[str]:
    """Due time reached (or immediate post): the post turns `processing` and its targets are published as one
    batch. Returns the ids of the targets the batch called a network for.

    1. One transaction: the post `processing` (lateness recorded), its media released to the retention rule,
       and every target about to be called marked `publishing` with `call_started_at`: the evidence that a
       call may happen, committed BEFORE any call.
    2. The network calls, one per target (after a crash in this step, the job runs again and asks each
       network `find_existing` before publishing again).
    3. One transaction: every outcome applied (with its event), the post settled when all targets are final,
       and this job completed. A target that must be retried or tracked continues on its own job
       (`target.publish` with the attempt already counted, `target.track`).
    """
    with tx():
        batch = _begin_post(post_id, settings, clock.now(), _worker_completes)
    if batch is None:
        return []
    _call_all(batch.calls, settings)
    with tx(), events.batched():
        _end_post(batch, settings, clock.now(), _worker_completes)
    return [c.target.id for c in batch.calls]


def start_posts(jobs: list[Any], settings: Settings) -> dict[str, tuple[BaseException | None, bool]]:
    """`start_post` for several due posts at once (the worker's batch of `post.publish` jobs when its jobs keep
    the CPU busy): the same three steps, each post's changes in a savepoint of ONE first transaction and ONE
    last one, so a batch commits twice instead of twice per post. An error in one post (its savepoint rolled
    back) leaves the others alone. Returns, per job id, (the exception, or None; whether the job was completed
    in its post's last transaction)."""
    results: dict[str, tuple[BaseException | None, bool]] = {}
    started: list[tuple[Any, _PostBatch]] = []
    now = clock.now()
    with tx():
        for job in jobs:
            done: list[bool] = []
            try:
                with database.atomic():  # a savepoint: this post's changes only
                    batch = _begin_post(job.payload["post_id"], settings, now,
                                        lambda job=job, done=done: done.append(queue.complete(job)))
            except Exception as exc:  # RetryLater (moved later), or an error confined to this post
                results[job.id] = (exc, False)
                continue
            if batch is None:
                results[job.id] = (None, bool(done and done[0]))
            else:
                started.append((job, batch))
    for _job, batch in started:  # no transaction open
        _call_all(batch.calls, settings)
    now = clock.now()
    with tx():
        for job, batch in started:
            done = []
            try:
                with database.atomic(), events.batched():
                    _end_post(batch, settings, now, lambda job=job, done=done: done.append(queue.complete(job)))
            except Exception as exc:  # its calls were made: the job's next run asks the networks first
                log.exception("post %s: recording the outcomes failed", batch.post.id)
                results[job.id] = (exc, False)
                continue
            results[job.id] = (None, bool(done and done[0]))
    return results


def _begin_post(post_id: str, settings: Settings, now: datetime, complete: Any) -> _PostBatch | None:
    """Step 1, inside the caller's transaction. None when no network is to be called (the post was settled or
    has nothing left to send; `complete()` then completed its job in this transaction)."""
    calls: list[_Call] = []
    post = fast.get(Post, post_id, lock=True)
    if post is None or post.status not in ("scheduled", "processing"):
        return None
    if post.status == "scheduled" and post.scheduled_at is not None and post.scheduled_at > now:
        # Moved later by an edit after this job was claimed: wait for the new time.
        raise RetryLater("scheduled time moved later", delay_s=(post.scheduled_at - now).total_seconds(),
                         count_attempt=False)
    targets = sorted(fast.select_where(PostTarget, "post", post.id), key=lambda t: t.position)
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
            for t in targets:
                if t.status == "pending":
                    _finish_target(t, post, "failed", fail_reason=reason, fail_type="retriable")
            _settle(post, targets)
            return None
    if post.sent_at is None:
        post.sent_at = now
    post.updated_at = now
    fast.update(Post, post.id, {"status": post.status, "lateness_ms": post.lateness_ms,
                                "sent_at": post.sent_at, "updated_at": now})
    _release_media(post, now)
    open_targets = [t for t in targets if t.status not in TERMINAL_TARGET]
    accounts = {a.id: a for a in fast.select_in(Account, "id", {t.account_id for t in open_targets
                                                                 if t.account_id})}
    build = _publication_builder(post)
    for t in open_targets:
        if t.tracking_ref:  # accepted by the network earlier: only tracking is left
            _enqueue_track(t, post, settings, accounts.get(t.account_id), now)
            continue
        account = accounts.get(t.account_id) if t.account_id else None
        if account is None or account.status != "active":
            _fail_inactive(t, post, account)
            continue
        try:
            pub = build(t, account)
        except Exception as exc:  # a bug or bad stored options: this target goes on alone, the others go on
            log.exception("target %s: could not build what %s receives", t.id, t.platform)
            _hand_off(t, post, settings, f"{type(exc).__name__}: {exc}", now)
            continue
        if t.started_at is None:
            pub = dataclasses.replace(pub, attempted_at=now)
        calls.append(_Call(t, account, pub, recheck=t.call_started_at is not None))
    if not calls:
        _settle(post, targets)
        complete()
        return None
    # The evidence, for every target about to be called, in one statement of this transaction.
    marked = fast.update(PostTarget, [c.target.id for c in calls],
                         {"status": "publishing", "started_at": now, "call_started_at": now, "updated_at": now},
                         increment=("attempts",), keep=("started_at",), unless_status_in=TERMINAL_TARGET)
    if marked != len(calls):  # a target changed under us (another worker?): roll back, look again shortly
        raise RetryLater("a target of the post changed while it was being claimed", delay_s=1.0,
                         count_attempt=False)
    for c in calls:
        c.target.status, c.target.call_started_at = "publishing", now
        c.target.started_at = c.target.started_at or now
        c.target.attempts = (c.target.attempts or 0) + 1
    return _PostBatch(post, targets, calls)


def _call_all(calls: list[_Call], settings: Settings) -> None:
    """Step 2: the network calls, outside any transaction (the network may take its time). Calls to live
    networks run at the same time (a post reaches each network as soon as it can, not after the others);
    the in-process sandbox networks only use CPU, so theirs run here, one after another."""
    waiting = [c for c in calls if c.account.kind != "sandbox"]
    futures = [_call_pool().submit(_call_one, c, settings) for c in waiting] if len(waiting) > 1 else []
    for call in calls:
        if not futures or call.account.kind == "sandbox":
            _call_one(call, settings)
    for future in futures:
        future.result()


def _call_one(call: _Call, settings: Settings) -> None:
    try:
        adapter = adapter_for(call.target.platform, settings, call.account)
        call.outcome = _call_network(adapter, call.pub, call.target.platform, call.recheck)
    except Exception as exc:  # never lose the others' outcomes to one adapter's bug
        log.exception("target %s: %s adapter failed", call.target.id, call.target.platform)
        call.error = f"{type(exc).__name__}: {exc}"


_CALLS: ThreadPoolExecutor | None = None
_CALLS_GUARD = threading.Lock()


def _call_pool() -> ThreadPoolExecutor:
    """Threads for a post's calls to live networks (at most the 20 targets a post may have)."""
    global _CALLS
    with _CALLS_GUARD:
        if _CALLS is None:
            _CALLS = ThreadPoolExecutor(max_workers=20, thread_name_prefix="socialpub-call")
        return _CALLS


def _end_post(batch: _PostBatch, settings: Settings, now: datetime, complete: Any) -> None:
    """Step 3, inside the caller's transaction (and `events.batched()`)."""
    post = batch.post
    # The post's row lock (PostgreSQL; SQLite's BEGIN IMMEDIATE holds the write lock), then its targets as they
    # are now: another run of this job (after a lost lease) or a target's own job may have moved some since
    # step 1; a target final meanwhile keeps its outcome, and the post settles from the fresh rows.
    if fast.value(Post, post.id, "status", lock=True) != "processing":
        return
    rows = {t.id: t for t in fast.select_where(PostTarget, "post", post.id)}
    for call in batch.calls:
        target = rows.get(call.target.id)
        if target is None or target.status in TERMINAL_TARGET:
            continue
        if call.error is not None:
            _hand_off(target, post, settings, call.error, now)
        else:
            _apply_locked(target, post, call.outcome, settings, call.account, target.attempts,
                          settings.retry_max_attempts, batch=True)
    _settle(post, list(rows.values()))
    complete()  # the post.publish job's `done` with its outcomes


def _call_network(adapter: Any, pub: Any, platform: str, recheck: bool) -> Any:
    """Publish once; after an interrupted earlier attempt, ask the network first (`find_existing`)."""
    try:
        if recheck:
            existing = adapter.find_existing(pub)
            if existing is not None:
                log.info("found the %s publication made by an earlier attempt, not publishing again", platform)
                return existing
        return adapter.publish(pub)
    except httpx.HTTPError as exc:
        from backend.networks.base import PublishOutcome

        return PublishOutcome(state="failed", fail_type="retriable", ambiguous=True,
                              fail_reason=f"could not reach {platform} ({type(exc).__name__}); "
                                          "it will be retried automatically")


def _publication_builder(post: Post) -> Any:
    """build(target, account) -> Publication, with the post's options and media parsed once."""
    from backend.networks.base import AccountCredentials, Publication
    from backend.networks.options import PostOptions
    from backend.networks.rules import RULES

    options = PostOptions.model_validate(post.options or {})
    media = media_refs(post)

    def build(target: PostTarget, account: Account) -> Any:
        payload = RULES[target.platform].payload(post.content, media, options)
        creds = AccountCredentials(external_account_id=account.external_id, access_token=account.access_token,
                                   username=account.username or None)
        return Publication(payload=payload, account=creds, idempotency_token=target.idempotency_token,
                           attempted_at=target.started_at)

    return build


def _fail_inactive(target: PostTarget, post: Post, account: Account | None) -> None:
    state = "disconnected" if account is None else account.status.replace("_", " ")
    _finish_target(target, post, "failed", fail_type="permanent",
                   fail_reason=f"the {target.platform} account {target.account_name!r} is {state}: "
                               "reconnect it, then create the post again for this network")


def _enqueue_track(target: PostTarget, post: Post, settings: Settings, account: Account | None,
                   now: datetime) -> None:
    queue.enqueue("target.track", {"target_id": target.id}, workspace_id=post.workspace_id,
                  run_at=now + timedelta(seconds=_track_poll_s(settings, account)),
                  dedupe_key=f"track:{target.id}", max_attempts=settings.retry_max_attempts, if_absent=True)


def _hand_off(target: PostTarget, post: Post, settings: Settings, error: str, now: datetime) -> None:
    """An unexpected error on one target of a batch: it continues on its own `target.publish` job (retried with
    backoff, failed by its on_dead hook when attempts run out), the attempt made here counted."""
    tries = max(1, target.attempts or 0)
    if tries >= settings.retry_max_attempts:
        _finish_target(target, post, "failed", fail_type="retriable", fail_reason=_INTERNAL.format(target.id))
        return
    queue.enqueue("target.publish", {"target_id": target.id}, workspace_id=post.workspace_id,
                  run_at=now + timedelta(seconds=_strategy(settings).delay_for(tries)),
                  dedupe_key=f"target:{target.id}", max_attempts=settings.retry_max_attempts, attempts=tries,
                  last_error=error, if_absent=True)


_INTERNAL = ("publishing stopped on an internal error (details are in the server log under target {}); "
             "retrying may succeed")


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
        with tx():
            _fail_inactive(target, post, account)
            _settle(post)
        return
    if target.tracking_ref:  # accepted by the network earlier: only tracking is left
        track_target(target.id, settings, job_attempts, job_max_attempts)
        return
    pub = build_publication(post, target, account)
    adapter = adapter_for(target.platform, settings, account)
    # The evidence that a call may happen, committed BEFORE the call: one conditional UPDATE in its own
    # (autocommit) transaction; 0 rows when the target reached a final state meanwhile.
    now = clock.now()
    if not fast.update(PostTarget, target.id, {"status": "publishing", "started_at": now, "call_started_at": now,
                                               "updated_at": now},
                       increment=("attempts",), keep=("started_at",), unless_status_in=TERMINAL_TARGET):
        return
    if target.started_at is None:
        pub = dataclasses.replace(pub, attempted_at=now)
    # after a crash or a cut connection in a previous attempt (call_started_at set), the network is asked first
    outcome = _call_network(adapter, pub, target.platform, target.call_started_at is not None)
    _apply(target.id, outcome, settings, account, job_attempts, job_max_attempts, post=post)


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
    _apply(target.id, outcome, settings, account, job_attempts, job_max_attempts, tracking=True, post=post)


def track_targets(jobs: list[Any], settings: Settings) -> dict[str, tuple[BaseException | None, bool]]:
    """`track_target` for several `target.track` jobs at once (the worker's batch when its jobs keep the CPU
    busy): their rows read together, the status checks made, then every outcome applied in ONE transaction,
    each target in its own savepoint. Returns, per job id, (the exception its job raises, or None; whether
    the job was completed in that transaction)."""
    results: dict[str, tuple[BaseException | None, bool]] = {}
    targets = {t.id: t for t in fast.select_in(PostTarget, "id", [j.payload["target_id"] for j in jobs])}
    posts = {p.id: p for p in fast.select_in(Post, "id", {t.post_id for t in targets.values()})}
    accounts = {a.id: a for a in fast.select_in(Account, "id", {t.account_id for t in targets.values()
                                                                 if t.account_id})}
    checked: list[tuple[Any, PostTarget, Post, Account, Any]] = []
    for job in jobs:
        target = targets.get(job.payload["target_id"])
        if target is None or target.status in TERMINAL_TARGET or not target.tracking_ref:
            results[job.id] = (None, False)
            continue
        post, account = posts.get(target.post_id), accounts.get(target.account_id or "")
        if post is None or account is None:  # the rare paths: as the job's own handler does them
            results[job.id] = _as_own_job(job, lambda job=job: track_target(job.payload["target_id"], settings,
                                                                            job.attempts, job.max_attempts))
            continue
        try:
            pub = build_publication(post, target, account)
            outcome = adapter_for(target.platform, settings, account).check_status(pub, target.tracking_ref)
        except httpx.HTTPError as exc:
            results[job.id] = (RetryLater(f"status check failed: {type(exc).__name__}"), False)
            continue
        except Exception as exc:
            results[job.id] = (exc, False)
            continue
        checked.append((job, target, post, account, outcome))
    if not checked:
        return results
    with tx():
        for job, target, post, account, outcome in checked:
            done: list[bool] = []
            try:
                with database.atomic():
                    row = fast.get(PostTarget, target.id, lock=True)
                    if row is None or row.status in TERMINAL_TARGET:
                        results[job.id] = (None, False)
                        continue
                    later = _apply_locked(row, post, outcome, settings, account, job.attempts, job.max_attempts,
                                          tracking=True, complete=lambda job=job, done=done: done.append(
                                              queue.complete(job)))
                    if row.status in TERMINAL_TARGET:
                        _settle(post)
            except Exception as exc:
                results[job.id] = (exc, False)
                continue
            results[job.id] = (later, bool(done and done[0]))
    return results


def _as_own_job(job: Any, fn: Any) -> tuple[BaseException | None, bool]:
    """Run a single-job handler body for `job` (as the worker would), returning (its exception, completed)."""
    queue.set_current(job)
    try:
        fn()
    except Exception as exc:
        return exc, queue.completed_current()
    finally:
        completed = queue.completed_current()
        queue.set_current(None)
    return None, completed


def _apply(target_id: str, outcome: Any, settings: Settings, account: Account, job_attempts: int,
           job_max_attempts: int, *, tracking: bool = False, post: Post | None = None) -> None:
    """A target job's outcome, in one transaction under the target's row lock; the post settled with it.
    `post`: the row the job read already (only its id and workspace are used; _settle locks and reads it)."""
    with tx():
        target = fast.get(PostTarget, target_id, lock=True)
        if target is None or target.status in TERMINAL_TARGET:
            return
        if post is None:
            post = fast.get(Post, target.post_id)
        later = _apply_locked(target, post, outcome, settings, account, job_attempts, job_max_attempts,
                              tracking=tracking)
        if target.status in TERMINAL_TARGET:
            _settle(post)
    if later is not None:
        raise later


def _apply_locked(target: PostTarget, post: Post, outcome: Any, settings: Settings, account: Account,
                  job_attempts: int, job_max_attempts: int, *, tracking: bool = False,
                  batch: bool = False, complete: Any = None) -> RetryLater | None:
    """Apply a network outcome to a locked, non-final target (inside the caller's transaction; the caller
    settles the post). `job_attempts`: the tries made so far. Returns the RetryLater the target's own job must
    raise after the commit; in a post's batch (batch=True) a retry or a tracking step becomes a job of the
    target's own instead."""
    now = clock.now()
    if outcome.state in ("published", "inbox_delivered"):
        status = "succeeded" if outcome.state == "published" else "inbox_delivered"
        _finish_target(target, post, status, external_post_id=outcome.external_post_id,
                       post_url=outcome.post_url, network_status=outcome.network_status)
        if not batch:
            (complete or _worker_completes)()  # the job's `done` in the outcome's transaction
        return None
    if outcome.state == "pending":
        deadline = target.track_deadline or now + timedelta(seconds=TRACK_DEADLINE_S.get(target.platform, 900))
        if tracking and now >= deadline:
            _finish_target(target, post, "failed", fail_type="retriable",
                           fail_reason=f"{target.platform} accepted the post but did not confirm it within "
                                       f"{int((deadline - (target.started_at or now)).total_seconds() // 60)} "
                                       "minutes; it may still appear: check the account before retrying")
            return None
        ref = outcome.tracking_ref or target.tracking_ref
        if not fast.update(PostTarget, target.id, {
            "status": "publishing", "tracking_ref": ref,
            "external_post_id": outcome.external_post_id or target.external_post_id,
            "network_status": outcome.network_status, "track_deadline": deadline, "updated_at": now,
        }, unless_status_in=TERMINAL_TARGET):
            return None  # final meanwhile (never reopened)
        target.tracking_ref = ref
        if tracking:
            return RetryLater(f"{target.platform}: {outcome.network_status or 'processing'}",
                              delay_s=_track_poll_s(settings, account), count_attempt=False)
        _enqueue_track(target, post, settings, account, now)
        if not batch:
            (complete or _worker_completes)()
        return None
    # failed
    if outcome.fail_type == "retriable" and job_attempts < job_max_attempts:
        values: dict[str, Any] = {"fail_reason": outcome.fail_reason, "updated_at": now}
        if not outcome.ambiguous:
            values["call_started_at"] = None
        if not fast.update(PostTarget, target.id, values, unless_status_in=TERMINAL_TARGET):
            return None  # final meanwhile
        decision = _strategy(settings).decide(job_attempts, outcome.retry_after_s)
        delay = decision.delay_s if decision.retry else (outcome.retry_after_s or 0.0)
        reason = outcome.fail_reason or "retriable network failure"
        if not batch:
            return RetryLater(reason, delay_s=delay)
        queue.enqueue("target.publish", {"target_id": target.id}, workspace_id=post.workspace_id,
                      run_at=now + timedelta(seconds=delay), dedupe_key=f"target:{target.id}",
                      max_attempts=job_max_attempts, attempts=job_attempts, last_error=reason, if_absent=True)
        return None
    reason = outcome.fail_reason or "the network refused the post"
    if outcome.fail_type == "retriable":
        # the network's wording promised a retry; no more come: say so instead of contradicting it
        reason = _WILL_RETRY.sub("", reason).rstrip(" ;,")
        reason = f"{reason} (gave up after {job_attempts} attempts; retrying the post later may succeed)"
    _finish_target(target, post, "failed", fail_reason=reason, fail_type=outcome.fail_type or "permanent",
                   network_status=outcome.network_status)
    if outcome.network_code in _AUTH_CODES:
        fast.update(Account, account.id, {"status": "needs_reauth"})
    return None


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
        _finish_target(target, post, "failed", fail_type="retriable", fail_reason=_INTERNAL.format(target_id))
        _settle(post)


def give_up_post(post_id: str, error: str) -> None:
    """A post's publish job died (attempts exhausted on an unexpected error): none of its targets may stay
    stuck. Targets that continue on a job of their own are left to it."""
    log.error("post %s: giving up after an internal error: %s", post_id, error)
    with tx():
        post = fast.get(Post, post_id, lock=True)
        if post is None or post.status not in ("scheduled", "processing"):
            return
        if post.status == "scheduled":
            post.status = "processing"
            fast.update(Post, post.id, {"status": "processing", "updated_at": clock.now()})
        targets = fast.select_where(PostTarget, "post", post.id)
        for t in targets:
            if t.status in TERMINAL_TARGET or _has_live_job(t.id):
                continue
            _finish_target(t, post, "failed", fail_type="retriable", fail_reason=_INTERNAL.format(t.id))
        _settle(post, targets)


def _has_live_job(target_id: str) -> bool:
    from backend.store.models import Job

    return Job.select().where(Job.dedupe_key.in_([f"target:{target_id}", f"track:{target_id}"])
                              & Job.status.in_(["queued", "running"])).exists()


# ---- state changes (inside a transaction) -------------------------------------------------------------
def _finish_target(target: PostTarget, post: Post, status: str, *, external_post_id: str | None = None,
                   post_url: str | None = None, fail_reason: str | None = None, fail_type: str | None = None,
                   network_status: str | None = None) -> None:
    now = clock.now()
    success = status in SUCCESS_TARGET
    if not fast.update(PostTarget, target.id, {
        "status": status, "external_post_id": external_post_id or target.external_post_id, "post_url": post_url,
        "fail_reason": None if success else fail_reason, "fail_type": None if success else fail_type,
        "network_status": network_status, "completed_at": now, "updated_at": now,
        "started_at": target.started_at or now,
    }, unless_status_in=TERMINAL_TARGET):
        return  # final already (never expected: callers hold the row or its post's batch)
    target.status = status
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


def _settle(post: Post, targets: list[PostTarget] | None = None) -> None:
    """Overall status from the targets, once every target is final (spec 3.1). Without `targets`, the post and
    its targets are read again under the post's row lock; with them, the caller holds that lock and passes the
    rows as they stand in its transaction."""
    if targets is None:
        fresh = fast.get(Post, post.id, lock=True)
        if fresh is None:
            return
        post = fresh
        targets = fast.select_where(PostTarget, "post", post.id)
    if post.status != "processing":
        return
    statuses = [t.status for t in targets]
    if any(s not in TERMINAL_TARGET for s in statuses):
        return
    ok = sum(s in SUCCESS_TARGET for s in statuses)
    overall = "completed" if ok == len(statuses) else ("failed" if ok == 0 else "partial")
    now = clock.now()
    post.status = overall
    fast.update(Post, post.id, {"status": overall, "completed_at": now, "updated_at": now})
