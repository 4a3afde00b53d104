"""The writing half of the publishing engine: `apply(decision)` writes one Decision in one transaction.

Fenced twice: the job's run must still hold the job (backend/networks/fence.py), and a target that is final
already is never reopened (the decision is dropped; the job that asked is
completed, its work being moot). The post settles (completed / partial / failed) in the same transaction
when its last target becomes final. Row locks are taken post first, then target, everywhere in the engine.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from peewee import Case

from backend import clock, queue
from backend.config import Settings
from backend.networks import fence
from backend.queue.backoff import RetryStrategy
from backend.schemas.statuses import TARGET_FINAL, PostStatus
from backend.services import events
from backend.services.publishing import decide
from backend.services.publishing.decide import Decision, Policy, TargetState
from backend.store.db import locked, tx
from backend.store.models import Account, Job, Post, PostTarget, PublishAttempt
from backend.store.shapes import Shape, Slot

log = logging.getLogger("socialpub.engine")


def track_poll_s(settings: Settings, account: Account | None) -> float:
    """How often a network's asynchronous processing is polled: `track_poll_s` for live accounts; for sandbox
    accounts a third of the emulated processing time (at least 20 ms), so tests and benchmarks move on."""
    if account is not None and account.kind == "sandbox":
        processing = settings.sandbox_processing_s
        return max(0.02, min(settings.track_poll_s, processing / 3))
    return settings.track_poll_s


def policy(settings: Settings, account: Account | None) -> Policy:
    return Policy(
        max_attempts=settings.retry_max_attempts,
        strategy=RetryStrategy(base_s=settings.retry_base_s, max_attempts=settings.retry_max_attempts),
        track_poll_s=track_poll_s(settings, account),
        max_wait_s=settings.max_wait_s,
    )


def state_of(target: PostTarget, post: Post) -> TargetState:
    return TargetState(
        id=target.id,
        post_id=post.id,
        workspace_id=post.workspace_id,
        platform=target.platform,
        account_id=target.account_id,
        account_name=target.account_name,
        status=target.status,
        attempts=target.attempts or 0,
        started_at=target.started_at,
        track_deadline=target.track_deadline,
        tracking_ref=target.tracking_ref,
        external_post_id=target.external_post_id,
        fail_reason=target.fail_reason,
    )


# What the engine reads of a post it locks: its state (status, times), never its content.
POST_STATE = (Post.id, Post.workspace, Post.status, Post.scheduled_at, Post.sent_at, Post.lateness_ms)


_LOCK_POST = Shape(lambda: locked(Post.select(*POST_STATE).where(Post.id == Slot("post")).limit(1)))
# lock_target's statement for each choice of the target's columns (backend/store/shapes.py)
_LOCK_TARGET: dict[tuple[Any, ...], Shape] = {}


def lock_post(post_id: str) -> Post | None:
    """The post's state (POST_STATE), its row locked for the transaction."""
    return _LOCK_POST.first(post=post_id)


def _lock_target_shape(columns: tuple[Any, ...]) -> Shape:
    shape = _LOCK_TARGET.get(columns)
    if shape is None:
        shape = _LOCK_TARGET[columns] = Shape(
            lambda: locked(
                Post.select(*POST_STATE, *(columns or (PostTarget,)))
                .join(PostTarget, on=(PostTarget.post == Post.id), attr="locked_target")
                .where((Post.id == Slot("post")) & (PostTarget.id == Slot("target")))
                .limit(1)
            )
        )
    return shape


def lock_target(post_id: str, target_id: str, *columns: Any) -> tuple[Post, PostTarget] | None:
    """The post's state (POST_STATE) and its target's row (`columns`: only these, default all), both locked for
    the transaction, read in ONE statement (issue 34: one joined read, not the post then the target). None when
    either is gone. The post's row is locked before the target's, the order of every transaction of the engine
    (PostgreSQL locks a FOR UPDATE join's rows in the order of its FROM list: the post, then the target)."""
    row = _lock_target_shape(columns).first(post=post_id, target=target_id)
    return None if row is None else (row, row.locked_target)


# What apply reads of the target it locks: the fence needs its state; a decision's warnings join those stored.
APPLY_TARGET = (
    PostTarget.id,
    PostTarget.status,
    PostTarget.account,
    PostTarget.platform,
    PostTarget.warnings,
)


def apply(decision: Decision, *, job: Job | None = None, attempt_id: str | None = None) -> bool:
    """Write `decision` in one transaction (a savepoint when the caller has one open): the target's columns,
    its events, its follow-up jobs, the account's new status, the attempt `attempt_id` closed together with
    the target's unresolved attempts started before it (or, when the decision leaves it unresolved, its
    outcome noted with finished_at still null; or, when it made no call, closed alone), the post settled when
    every target is final, and `job` completed when the decision finishes it. An attempt whose decision is a
    wait (decision.wait: a cap, a Retry-After, a listing delay) is taken off the target's `attempts`, which
    count the attempts that failed against SOCIALPUB_RETRY_MAX_ATTEMPTS.

    Returns False when the target was final already (or is gone): nothing of the decision is written.
    Inside a job, fenced (backend/networks/fence.py): a run that lost its job's lease records nothing
    (fence.LeaseLost is raised, the transaction rolled back). A decision that finishes the job is fenced by the
    job's completion itself, its first statement (issue 34: no read of the job's row before it).
    """
    now = clock.now()
    with tx():
        if job is not None and decision.finishes_job:
            _complete(job)
        else:
            fence.check()
        both = lock_target(decision.post_id, decision.target_id, *APPLY_TARGET)
        post, target = both if both is not None else (None, None)
        if post is None or target is None or target.status in TARGET_FINAL:
            if attempt_id is not None:
                _close_attempt(attempt_id, now, "dropped: the target was final already", finished=True)
            if job is not None and not decision.finishes_job:
                queue.complete(job)
            return False
        values = dict(decision.values)
        one_fewer = attempt_id is not None and decision.wait  # the attempt ended in a wait: it does not count
        if "warnings" in values:  # added to the target's, under its lock: none an earlier answer gave is lost
            values["warnings"] = decide.merge_warnings(target.warnings, values["warnings"])
        if attempt_id is not None and decision.resolves_attempts and not decision.no_call:
            values["progress_ref"] = None  # the outcome is known: nothing of the attempt is left to continue
        if values or one_fewer:
            _outcome_shape(tuple(sorted(values)), one_fewer).run(target=target.id, **values)
        for ev in decision.events:
            events.record(post.workspace_id, ev.type, ev.data, subject_id=post.id)
        queue.enqueue_many(decision.jobs, if_absent=True)  # its follow-ups (the decision's JobSpecs)
        if attempt_id is not None:
            if decision.no_call:  # this attempt made no call; the earlier ones stay unresolved
                _close_attempt(attempt_id, now, decision.attempt_outcome, finished=True)
            elif decision.resolves_attempts:  # earlier attempts left unresolved were reconciled by this one
                _close_attempts(attempt_id, target.id, now, decision.attempt_outcome)
            else:
                _close_attempt(attempt_id, now, decision.attempt_outcome, finished=False)
        if decision.final:
            settle_post(post)
    return True


def _complete(job: Job) -> None:
    """(inside apply's transaction) The job completed, fenced by its claim (queue.complete: only while this claim
    holds it), as the transaction's fence: it commits only with the job held, the row locked until then on
    PostgreSQL (the write lock held since BEGIN on SQLite). When it changes nothing, the fence decides: the run moved
    to a new claim of this worker (the fence waits for it to be booked, then the completion is made under it), or
    the job was lost (fence.LeaseLost, the transaction rolled back)."""
    if queue.complete(job) or not fence.active():  # (outside a job's run nothing is fenced)
        return
    fence.check()
    if not queue.complete(job):
        raise fence.LeaseLost(f"job {job.id} ({job.kind}) is no longer held by its claim")


# The outcome's target update for each set of columns a decision writes (backend/store/shapes.py), and whether the
# attempt is taken off the target's count: one statement shape per kind of decision.
_OUTCOMES: dict[tuple[tuple[str, ...], bool], Shape] = {}


def _outcome_shape(columns: tuple[str, ...], one_fewer: bool) -> Shape:
    key = (columns, one_fewer)
    shape = _OUTCOMES.get(key)
    if shape is None:
        fields = PostTarget._meta.fields  # peewee's documented model metadata: the decision names its columns
        unknown = [c for c in columns if c not in fields or c == "attempts" and one_fewer]
        if unknown:
            raise TypeError(f"a decision writes no such target column: {unknown}")

        def build() -> Any:
            sets: dict[Any, Any] = {fields[c]: Slot(c, fields[c]) for c in columns}
            if one_fewer:
                sets[PostTarget.attempts] = PostTarget.attempts - 1
            return PostTarget.update(sets).where(
                (PostTarget.id == Slot("target")) & PostTarget.status.not_in(TARGET_FINAL)
            )

        shape = _OUTCOMES[key] = Shape(build)
    return shape


def _close_attempts_shape() -> Any:
    attempt = Slot("attempt")
    started = PublishAttempt.select(PublishAttempt.started_at).where(PublishAttempt.id == attempt)
    earlier = (
        (PublishAttempt.target == Slot("target"))
        & PublishAttempt.finished_at.is_null()
        & (PublishAttempt.started_at <= started)
    )
    text = Case(
        None,
        [(PublishAttempt.id == attempt, Slot("outcome", PublishAttempt.outcome))],
        Slot("reconciled", PublishAttempt.outcome),
    )
    return PublishAttempt.update(
        {PublishAttempt.finished_at: Slot("now", PublishAttempt.finished_at), PublishAttempt.outcome: text}
    ).where((PublishAttempt.id == attempt) | earlier)


_CLOSE_ATTEMPTS = Shape(_close_attempts_shape)


def _close_attempt_shape(finished: bool) -> Any:
    return PublishAttempt.update(
        {
            PublishAttempt.outcome: Slot("outcome", PublishAttempt.outcome),
            **({PublishAttempt.finished_at: Slot("now", PublishAttempt.finished_at)} if finished else {}),
        }
    ).where(PublishAttempt.id == Slot("attempt"))


_CLOSE_ATTEMPT = {
    finished: Shape(functools.partial(_close_attempt_shape, finished)) for finished in (True, False)
}


def _close_attempts(attempt_id: str, target_id: str, now: Any, outcome: str) -> None:
    """In one statement: the attempt `attempt_id` closed with `outcome`, and the target's attempts left unresolved
    that started before it closed as reconciled by it — only those: a later attempt (another run of the job, its
    call maybe in flight) was not covered by this one's reconciliation and stays open for the next to check."""
    _CLOSE_ATTEMPTS.run(
        attempt=attempt_id,
        target=target_id,
        now=now,
        outcome=outcome[:2000],
        reconciled=f"reconciled by {attempt_id}: {outcome}"[:2000],
    )


def _close_attempt(attempt_id: str, now: Any, outcome: str, *, finished: bool) -> None:
    _CLOSE_ATTEMPT[finished].run(attempt=attempt_id, now=now, outcome=outcome[:2000])


_SIBLING_STATUSES = Shape(lambda: PostTarget.select(PostTarget.status).where(PostTarget.post == Slot("post")))
_SETTLE = Shape(
    lambda: Post.update(
        status=Slot("status", Post.status),
        completed_at=Slot("now", Post.completed_at),
        updated_at=Slot("now", Post.updated_at),
    ).where((Post.id == Slot("post")) & (Post.status.in_((PostStatus.PROCESSING, PostStatus.SCHEDULED))))
)


def settle_post(post: Post) -> str | None:
    """Inside a transaction holding the post's row lock: the post's overall status once every target is final
    (decide.settle). Returns the new status, None when the post stays as it is. A scheduled post settles too:
    its targets all failed before its time (a dead grant fails an account's pending targets at once), so it no
    longer shows `scheduled` — editable, counted as to be sent — until its time comes; its publish job then finds
    it final and does nothing."""
    if post.status not in (PostStatus.PROCESSING, PostStatus.SCHEDULED):
        return None
    statuses = [t.status for t in _SIBLING_STATUSES.rows(post=post.id)]
    overall = decide.settle(statuses)
    if overall is None:
        return None
    _SETTLE.run(post=post.id, status=overall, now=clock.now())
    post.status = overall
    return overall


_UNRESOLVED = Shape(
    lambda: (
        PublishAttempt.select()
        .where((PublishAttempt.target == Slot("target")) & PublishAttempt.finished_at.is_null())
        .order_by(PublishAttempt.started_at, PublishAttempt.id)
    )
)


def unresolved_attempts(target_id: str) -> list[PublishAttempt]:
    """The target's attempts whose outcome was never recorded, earliest first (a statement shape: read at each
    attempt's start and when a tracked target is decided)."""
    return _UNRESOLVED.rows(target=target_id)
