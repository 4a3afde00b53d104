"""The publishing engine's job entry points: `post.publish`, `target.publish`, `target.track` and their
on_dead hooks. Each reads what it needs, calls the network outside any transaction, asks `decide` what the
answer changes and has `apply` write it.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
from peewee import JOIN, SQL, IntegrityError

from backend import clock, queue
from backend.config import Settings
from backend.ids import new_id
from backend.logs import LATENESS
from backend.networks import fence, registry
from backend.networks.base import (
    AccountCredentials,
    MediaRef,
    NetworkAdapter,
    Publication,
    PublishOutcome,
    TargetWarning,
    Unverifiable,
)
from backend.networks.rules import build_payload
from backend.queue.backoff import RetryLater
from backend.schemas.statuses import TARGET_FINAL, JobStatus, PostStatus, TargetStatus
from backend.services import adapters, tokens
from backend.services import media as media_service
from backend.services.publishing import decide
from backend.services.publishing.apply import (
    apply,
    lock_post,
    lock_target,
    policy,
    settle_post,
    state_of,
    track_poll_s,
    unresolved_attempts,
)
from backend.store.db import store_busy, tx
from backend.store.models import Account, Job, Post, PostTarget, PublishAttempt
from backend.store.shapes import InsertShape, ListShape, Shape, Slot

log = logging.getLogger("socialpub.engine")


# ---- what a network receives ----------------------------------------------------------------------------
def media_refs(post: Post) -> list[MediaRef]:
    """The post's media as MediaRef, from what was resolved at acceptance (`post.media`)."""
    return [MediaRef.from_dict(m) for m in (post.media or [])]


def build_publication(post: Post, target: PostTarget, account: Account) -> Publication:
    """What `target`'s network receives: the payload built by the network's rules, the account's credentials,
    the target's stable idempotency token; `attempted_at` = the target's first start (None before)."""
    payload = build_payload(target.platform, post.content, media_refs(post), post.options)
    creds = AccountCredentials(
        external_account_id=account.external_id,
        access_token=account.access_token,
        username=account.username or None,
    )
    return Publication(
        payload=payload,
        account=creds,
        idempotency_token=target.idempotency_token,
        attempted_at=target.started_at,
    )


def _ids(target: PostTarget) -> str:
    return f"post {target.post_id}, target {target.id}, account {target.account_id}"


# ---- post.publish ---------------------------------------------------------------------------------------
_POST_TARGETS = Shape(
    lambda: PostTarget.select().where(PostTarget.post == Slot("post")).order_by(PostTarget.position)
)
_POST_STARTED = Shape(
    lambda: Post.update(
        status=Slot("status", Post.status),
        lateness_ms=Slot("lateness_ms", Post.lateness_ms),
        sent_at=Slot("sent_at", Post.sent_at),
        updated_at=Slot("now", Post.updated_at),
    ).where(Post.id == Slot("post"))
)
# the accounts of the post's open targets (a post has at most 20): a shape per number of them (store/shapes.py)
_ACCOUNTS = ListShape("ids", lambda ids: Account.select().where(Account.id.in_(ids)))


def start_post(job: Job, settings: Settings) -> None:
    """Due time reached (or an immediate post): in ONE transaction, the post turns `processing` (lateness
    recorded; past SOCIALPUB_MAX_LATENESS_S its pending targets fail instead), its media are released to the
    retention rule, and every open target gets its own job: `target.publish` (or `target.track` when the
    network accepted it already), on the lane of its network, so one slow network holds up no other. Targets
    whose account is disconnected or inactive fail here. `job` is completed in that transaction.

    A post moved later by an edit after this job was claimed waits for its new time (RetryLater)."""
    post_id = job.payload["post_id"]
    now = clock.now()
    with tx():
        fence.check()  # a run that lost its job's lease records nothing
        post = lock_post(post_id)
        if post is None or post.status not in (PostStatus.SCHEDULED, PostStatus.PROCESSING):
            queue.complete(job)
            return
        if post.status == PostStatus.SCHEDULED and post.scheduled_at is not None and post.scheduled_at > now:
            raise RetryLater(
                "scheduled time moved later",
                delay_s=(post.scheduled_at - now).total_seconds(),
                count_attempt=False,
            )
        targets = _POST_TARGETS.rows(post=post.id)
        too_late: float | None = None
        if post.status == PostStatus.SCHEDULED:
            late = decide.lateness_s(post.scheduled_at, now)
            post.lateness_ms = int(late * 1000)
            LATENESS.note(post.id, late)  # a summary line a minute under a burst, not a line per post
            if settings.max_lateness_s is not None and late > settings.max_lateness_s:
                too_late = late
        post.status = PostStatus.PROCESSING
        post.sent_at = post.sent_at or now
        post.updated_at = now
        _POST_STARTED.run(
            post=post.id, status=post.status, lateness_ms=post.lateness_ms, sent_at=post.sent_at, now=now
        )
        open_targets = [t for t in targets if t.status not in TARGET_FINAL]
        if too_late is not None:
            for t in open_targets:
                apply(decide.too_late(state_of(t, post), too_late, settings.max_lateness_s or 0.0, now))
            settle_post(post)
            queue.complete(job)
            return
        _release_media(post, now)
        accounts = {
            a.id: a for a in _ACCOUNTS.rows(ids=sorted({t.account_id for t in open_targets if t.account_id}))
        }
        jobs = []
        for t in open_targets:
            account = accounts.get(t.account_id) if t.account_id else None
            if t.tracking_ref:  # accepted by the network earlier: only tracking is left
                jobs.append(
                    _job(
                        t,
                        post,
                        "target.track",
                        f"track:{t.id}",
                        now + timedelta(seconds=track_poll_s(settings, account)),
                        settings,
                    )
                )
            elif account is None or account.status != "active":
                apply(
                    decide.inactive_account(
                        state_of(t, post),
                        None if account is None else account.status,
                        now,
                        unresolved=bool(unresolved_attempts(t.id)),
                    )
                )
            else:
                jobs.append(_job(t, post, "target.publish", f"target:{t.id}", now, settings))
        queue.enqueue_many(jobs, if_absent=True)  # one statement for the post's targets
        settle_post(post)
        queue.complete(job)


def _job(
    target: PostTarget, post: Post, kind: str, key: str, run_at: datetime, settings: Settings
) -> queue.JobSpec:
    """A target's job (on the lane of the target's network)."""
    return queue.JobSpec(
        kind,
        {"target_id": target.id},
        run_at=run_at,
        workspace_id=post.workspace_id,
        dedupe_key=key,
        max_attempts=settings.retry_max_attempts,
        lane=target.platform,
    )


def _enqueue(
    target: PostTarget, post: Post, kind: str, key: str, run_at: datetime, settings: Settings
) -> None:
    queue.enqueue_many([_job(target, post, kind, key, run_at, settings)], if_absent=True)


def _release_media(post: Post, now: datetime) -> None:
    media_service.release(f"post:{post.id}", now)


# ---- target.publish -------------------------------------------------------------------------------------
@dataclasses.dataclass
class _Attempt:
    id: str
    started_at: datetime
    unresolved_since: datetime | None  # the start of the earliest attempt whose outcome was never recorded
    calls_over_by: datetime | None  # a time those attempts' calls are known to be over (see _start_attempt)
    state: decide.TargetState  # the target as the attempt's transaction left it
    progress_ref: str | None = (
        None  # what the network holds of an interrupted attempt (its container, session)
    )
    reconciled: bool = (
        False  # the outcome is what a reconciliation found, not the answer to this attempt's call
    )


# What a target's job reads of its target, post and account: its state, what the network receives, the account's
# credentials and kind (each column read costs: the post's other JSON columns, timestamps and counters are left).
_LOAD = (
    PostTarget.id,
    PostTarget.post,
    PostTarget.platform,
    PostTarget.account,
    PostTarget.account_name,
    PostTarget.status,
    PostTarget.external_post_id,
    PostTarget.idempotency_token,
    PostTarget.started_at,
    PostTarget.tracking_ref,
    PostTarget.attempts,
    PostTarget.track_deadline,
    PostTarget.next_attempt_at,
    PostTarget.progress_ref,
    Post.id,
    Post.workspace,
    Post.status,
    Post.content,
    Post.media,
    Post.options,
    Account.id,
    Account.platform,
    Account.kind,
    Account.status,
    Account.behaviour,
    Account.external_id,
    Account.access_token,
    Account.username,
    Account.token_expires_at,
    Account.refresh_token,
)


_LOAD_TARGET = Shape(
    lambda: (
        PostTarget.select(*_LOAD)
        .join(Post, on=(PostTarget.post == Post.id))
        .switch(PostTarget)
        .join(Account, JOIN.LEFT_OUTER, on=(PostTarget.account == Account.id))
        .where(PostTarget.id == Slot("target"))
        .limit(1)
    )
)


def _load(target_id: str) -> tuple[PostTarget, Post, Account | None] | None:
    """The target with its post and its account (None when it has none), read in one query (_LOAD's columns)."""
    target = _LOAD_TARGET.first(target=target_id)
    if target is None:
        return None
    return target, target.post, target.account if target.account_id else None


def publish_target(job: Job, settings: Settings) -> None:
    """One target, one attempt:

    1. In its own transaction, before any network call: the target, read again under the post and target
       locks (not final, not accepted by the network, not waiting for its next attempt), turns `publishing`
       (call_started_at, attempts + 1, next_attempt_at cleared) and a `publish_attempt` row is recorded.
    2. When an earlier attempt never recorded its outcome (the process died mid-call, or the call was
       ambiguous), reconcile first: `find_existing` from that attempt's start. Found: the target succeeds with
       it. Absent: publish — once absence is conclusive: a network lists a publication only a while after
       accepting it (its listing delay, TikTok's processing), so until that long after the earlier call was
       over the target waits `pending` (next_attempt_at) and asks again. `Unverifiable`: the target fails
       `retriable`, saying it may have been published: never publish twice silently.
    3. The call (outside any transaction).
    4. One transaction (`apply`): the attempt closed with its outcome (left unresolved when the call may have
       reached the network unseen) and the decision written; this job completed, or tried again later while
       the target waits `pending` with next_attempt_at.

    The target, its post and its account are read once (one query) before step 1; step 1 reads the target
    again under its locks, and what the decision needs of it comes from that read.
    """
    loaded = _load(job.payload["target_id"])
    if loaded is None:
        return
    target, post, account = loaded
    if target.status in TARGET_FINAL or post.status != PostStatus.PROCESSING:
        return
    now = clock.now()
    if target.tracking_ref:  # the network accepted it already (an earlier attempt): only tracking is left
        with tx():
            fence.check()
            _enqueue(
                target,
                post,
                "target.track",
                f"track:{target.id}",
                now + timedelta(seconds=track_poll_s(settings, account)),
                settings,
            )
            queue.complete(job)
        return
    if target.next_attempt_at is not None and target.next_attempt_at > now + timedelta(seconds=0.05):
        # the job came back early (its retry was not recorded after the target's wait was): wait on
        raise RetryLater(
            "waiting for the target's next attempt",
            delay_s=(target.next_attempt_at - now).total_seconds(),
            count_attempt=False,
        )
    if account is None or account.status != "active":
        apply(
            decide.inactive_account(
                state_of(target, post),
                None if account is None else account.status,
                now,
                unresolved=bool(unresolved_attempts(target.id)),
            ),
            job=job,
        )
        return
    if not _token_ready(
        account, settings, target, post, job
    ):  # the grant is dead: failed with the account's others
        apply(
            decide.inactive_account(
                state_of(target, post),
                "needs_reauth",
                clock.now(),
                unresolved=bool(unresolved_attempts(target.id)),
            ),
            job=job,
        )
        return
    adapter = adapters.adapter_for(account, settings)
    called = _attempt(
        job,
        settings,
        adapter,
        build_publication(post, target, account),
        target,
        post,
        account,
        adapter.publish,
    )
    if called is not None:
        _decide_and_apply(job, settings, account, target, *called)


def _attempt(
    job: Job,
    settings: Settings,
    adapter: NetworkAdapter,
    pub: Publication,
    target: PostTarget,
    post: Post,
    account: Account,
    call: Callable[[Publication], PublishOutcome],
    *,
    tracking: bool = False,
) -> tuple[PublishOutcome, _Attempt, decide.TargetState] | None:
    """Steps 1-3 of an attempt (publish_target): recorded before any call; an earlier attempt without outcome
    reconciled first; then `call(pub)`: the network's publishing call (adapter.publish, or adapter.complete
    for a tracked publication the network is ready to publish). Returns (outcome, attempt, state) to decide
    on, or None when nothing is left to decide (the target moved meanwhile, or the reconciliation's own
    decision was applied). tracking: the target is tracked (the job's attempts bound its retries)."""
    attempt = _start_attempt(target.id, post, account.id, tracking=tracking)
    if attempt is None:  # final, or accepted by the network, meanwhile (another run of this job)
        return None
    state = dataclasses.replace(attempt.state, attempts=job.attempts) if tracking else attempt.state
    pol = policy(settings, account)
    try:
        out: PublishOutcome | None = None
        if attempt.unresolved_since is not None:
            listed_from = clock.now()  # the listing's start: what it proves absent is judged from here (2b)
            # the interrupted attempt's saved progress (its upload session, a TikTok publish id…) lets the network
            # be asked about that very attempt: the network's cheapest, surest answer
            # what the earlier attempts made, they made by the time their listing's silence would prove absence
            made_by = (
                decide.absence_conclusive_at(
                    attempt.calls_over_by, adapters.listing_delay_s(account, settings)
                )
                if attempt.calls_over_by is not None
                else None
            )
            asked = dataclasses.replace(
                pub,
                attempted_at=attempt.unresolved_since,
                resume=pub.resume or attempt.progress_ref,
                held_elsewhere=_elsewhere(account.id, target.id, attempt.unresolved_since).held,
                made_by=made_by,
            )
            found = _reconcile(adapter, asked, target)
            for _ in range(
                MAX_RELISTS
            ):  # a listed match made after this target's calls were over is not its own
                if not _made_after(found, made_by) or not isinstance(found, PublishOutcome):
                    break
                held = asked.held_elsewhere | {_listed_id(found)}
                asked = dataclasses.replace(asked, held_elsewhere=held)
                found = _reconcile(adapter, asked, target)
            if found is _Unresolved.UNVERIFIABLE:
                apply(decide.unverifiable(state, clock.now()), job=job, attempt_id=attempt.id)
                return None
            # cannot ask now: no publish; try again later, still unresolved
            if found is _Unresolved.UNREACHABLE:
                delay = pol.strategy.delay_for(max(1, state.attempts))
                decision = decide.unreached(state, clock.now(), delay)
                apply(decision, job=job, attempt_id=attempt.id)
                raise decision.retry
            out = found
            if out is None:
                _wait_unless_conclusive(job, settings, account, target, attempt, state, listed_from)
                _call_started(target.id)  # confirmed absent: this attempt's call is under way from here
            elif out.state != "failed":
                attempt.reconciled = True
                _unless_another_call(
                    job, pol, account, target, attempt, state, out, made_by, asked.held_elsewhere
                )
                if not out.succeeded:  # a publication still processing, followed from now on: under way
                    _call_started(target.id)  # as a call is, for the others' reconciliations
        if out is None:
            if pub.attempted_at is None:
                pub = dataclasses.replace(pub, attempted_at=attempt.started_at)
            if not tracking:  # the network's first writes are saved as they are made, and an interrupted
                # attempt's (confirmed unpublished above) are continued rather than made again (issue 30 item 3)
                pub = dataclasses.replace(pub, resume=attempt.progress_ref, save_progress=_saver(target.id))
            out = _publish(call, pub, target.platform)
    except (RetryLater, fence.LeaseLost):
        raise
    except Exception as exc:  # an adapter bug: the call may have reached the network; the next try asks first
        # the store, locked while saving a step, not the adapter: the worker's short wait (still unresolved)
        if store_busy(exc):
            raise
        error = f"{type(exc).__name__}: {exc}"
        log.exception("%s: the %s adapter failed", _ids(target), target.platform)
        delay = pol.strategy.delay_for(max(1, job.attempts))
        decision = decide.interrupted(state, error, clock.now(), delay)
        apply(decision, job=job, attempt_id=attempt.id)
        raise decision.retry from exc
    return out, attempt, state


def _wait_unless_conclusive(
    job: Job,
    settings: Settings,
    account: Account,
    target: PostTarget,
    attempt: _Attempt,
    state: decide.TargetState,
    listed_from: datetime,
) -> None:
    """The network's listing does not show an earlier attempt's publication. Conclusive only when the listing
    STARTED once the network's listing delay had passed since those calls were over: a listing paged through
    while that moment came (hundreds of pages under load) read its first pages before the publication could be
    listed, so an early page proves nothing. Otherwise no call: the target waits `pending` until then (at once
    when that moment has passed already: the listing is made again), not counted as a try, and this job asks
    again."""
    now = clock.now()
    until = decide.absence_conclusive_at(
        attempt.calls_over_by or attempt.started_at, adapters.listing_delay_s(account, settings)
    )
    if until <= listed_from:
        return
    decision = decide.not_listed_yet(state, now, max(until, now))
    apply(decision, job=job, attempt_id=attempt.id)
    log.info(
        "%s: %s does not list an earlier attempt's publication, which it may not list yet (the listing began "
        "%s, absence is conclusive from %s): asking again at %s",
        _ids(target),
        target.platform,
        clock.iso(listed_from),
        clock.iso(until),
        clock.iso(max(until, now)),
    )
    raise decision.retry


def _decide_and_apply(
    job: Job,
    settings: Settings,
    account: Account,
    target: PostTarget,
    out: PublishOutcome,
    attempt: _Attempt,
    state: decide.TargetState,
    *,
    tracking: bool = False,
) -> None:
    """Step 4: the outcome decided and applied with the attempt closed; a wait raises RetryLater.

    The store refuses a second target of the account holding one publication (migration 0053). A reconciled
    outcome refused so was another target's publication, taken by that target first: this target is still
    ambiguous, and waits and asks again (that publication then excluded). A direct answer refused so (the network
    answered this call with an id that a reconciliation took meanwhile: what _unless_another_call prevents) is
    recorded all the same, the target succeeded without the id and a warning naming the holder."""
    decision, applied = _apply_outcome(
        job,
        policy(settings, account),
        target,
        state,
        out,
        attempt.id,
        tracking,
        reconciled=attempt.reconciled,
    )
    _account_refused(applied, decision, account)
    if applied and decision.retry is not None:
        log.info(
            "%s: %s; next attempt in %.1f s", _ids(target), decision.retry.reason, decision.retry.delay_s
        )
        raise decision.retry


def _apply_outcome(
    job: Job,
    pol: decide.Policy,
    target: PostTarget,
    state: decide.TargetState,
    out: PublishOutcome,
    attempt_id: str | None,
    tracking: bool,
    *,
    reconciled: bool = False,
) -> tuple[decide.Decision, bool]:
    """A network's answer decided and applied (apply's result with the decision). The store refuses a second target
    of the account holding one publication (migration 0053): a reconciled outcome refused so (`reconciled`) was
    another target's publication, which that target took first: this target is still ambiguous, waits and asks
    again, that publication then excluded (no call, no try counted). Any other answer refused so (the network
    answered this target's own call or status check with an id a reconciliation took meanwhile, which
    _unless_another_call keeps from happening) is recorded all the same: the target succeeds without the id, with
    a warning naming the holder, whose post may never have been published."""
    decision = decide.outcome(state, out, clock.now(), pol, tracking=tracking)
    try:
        return decision, apply(decision, job=job, attempt_id=attempt_id)
    except IntegrityError:
        held = str(decision.values.get("external_post_id") or "")
        holder = _HOLDER.first(account=target.account_id, ext=held, target=target.id) if held else None
        if holder is None:  # not the unique publication: another constraint's refusal
            raise
    if reconciled:
        waiting = decide.not_ours_yet(
            state, clock.now(), _recheck_s(pol), f"target {holder.id} of the account holds {held}"
        )
        apply(waiting, job=job, attempt_id=attempt_id)
        log.warning("%s: %s", _ids(target), waiting.retry.reason)
        raise waiting.retry
    decision = decide.outcome(
        state, _shared(target, out, held, holder.id), clock.now(), pol, tracking=tracking
    )
    return decision, apply(decision, job=job, attempt_id=attempt_id)


def _account_refused(applied: bool, decision: decide.Decision, account: Account) -> None:
    """A network refused the account's token while publishing (decision.account_status): after the target's own
    failure is committed, the account turns needs_reauth through the one path (services/tokens.mark_needs_reauth:
    its event, and its other pending targets failed saying to reconnect). A crash between the two leaves the
    account active: its next call gets the same refusal and comes here again."""
    if applied and decision.account_status == "needs_reauth":
        tokens.mark_needs_reauth(
            account.id, decision.values.get("fail_reason"), refused_target=decision.target_id
        )


_ATTEMPT_STARTED = Shape(
    lambda: PostTarget.update(
        status=TargetStatus.PUBLISHING,
        started_at=Slot("started_at", PostTarget.started_at),
        call_started_at=Slot("call_started_at", PostTarget.call_started_at),
        attempts=PostTarget.attempts + 1,
        next_attempt_at=None,
        updated_at=Slot("now", PostTarget.updated_at),
    ).where(PostTarget.id == Slot("target"))
)


_ATTEMPT_INSERT = InsertShape(PublishAttempt)


def _start_attempt(target_id: str, post: Post, account_id: str, *, tracking: bool = False) -> _Attempt | None:
    """Step 1, in its own transaction: the attempt recorded and the target `publishing`, committed before any
    call. None when the target is final (or gone), or when the network accepted it meanwhile (tracking_ref:
    its track job follows it; tracking: the track job's attempt needs that ref). The target is read again
    under its lock: another run of this job (a lease lost) may have moved it since the caller read it. A
    target waiting for its next attempt raises RetryLater.

    With attempts of the target whose outcome was never recorded, the attempt also carries a time their calls
    were over by: the start of the first attempt recorded after the last of them, else this attempt's own
    start. A later attempt is made by a later run of the job, which starts once the run before ended: it noted
    an outcome (ambiguous, interrupted), or its process is gone (taken over at once) or stopped renewing its
    lease (taken over once it expired; a process frozen past its lease and resuming its call later is the one
    case this does not cover, as it escapes any reconciliation).
    The target's state as this transaction leaves it is returned with the attempt (the decision's input)."""
    with tx():
        fence.check()  # the attempt is recorded only by the run that holds the job (then its call is fenced too)
        both = lock_target(post.id, target_id)
        locked_post, target = both if both is not None else (None, None)
        now = clock.now()  # under the locks: attempts' starts follow the order they are recorded in
        if (
            locked_post is None
            or target is None
            or target.status in TARGET_FINAL
            or bool(target.tracking_ref) != tracking
        ):
            return None
        if target.next_attempt_at is not None and target.next_attempt_at > now + timedelta(seconds=0.05):
            raise RetryLater(
                "waiting for the target's next attempt",
                delay_s=(target.next_attempt_at - now).total_seconds(),
                count_attempt=False,
            )
        # `attempts` counts the target's attempt rows (each is recorded here with its increment): a target
        # never attempted has none to reconcile
        open_rows = unresolved_attempts(target_id) if target.attempts else []
        over_by = _first_attempt_after(target_id, open_rows[-1].started_at) if open_rows else None
        attempt_id = new_id("att")
        _ATTEMPT_INSERT.insert([dict(id=attempt_id, target=target_id, account=account_id, started_at=now)])
        # an attempt that reconciles first makes its call only once the network confirmed the earlier ones
        # absent (_call_started): until then no call of it is under way (what other targets' reconciliations read)
        _ATTEMPT_STARTED.run(
            target=target_id,
            started_at=target.started_at or now,
            now=now,
            call_started_at=None if open_rows else now,
        )
    target.status = TargetStatus.PUBLISHING
    target.started_at = target.started_at or now
    target.attempts = (target.attempts or 0) + 1
    since = open_rows[0].started_at if open_rows else None
    return _Attempt(
        attempt_id,
        now,
        since,
        (over_by or now) if open_rows else None,
        state_of(target, locked_post),
        target.progress_ref if open_rows else None,
    )


_FIRST_ATTEMPT_AFTER = Shape(
    lambda: (
        PublishAttempt.select(PublishAttempt.started_at)
        .where((PublishAttempt.target == Slot("target")) & (PublishAttempt.started_at > Slot("after")))
        .order_by(PublishAttempt.started_at)
        .limit(1)
    )
)


def _first_attempt_after(target_id: str, started_at: datetime) -> datetime | None:
    row = _FIRST_ATTEMPT_AFTER.first(target=target_id, after=started_at)
    return row.started_at if row is not None else None


_PROGRESS_SAVED = Shape(
    lambda: PostTarget.update(
        progress_ref=Slot("ref", PostTarget.progress_ref), updated_at=Slot("now", PostTarget.updated_at)
    ).where((PostTarget.id == Slot("target")) & PostTarget.status.not_in(TARGET_FINAL))
)


def _saver(target_id: str) -> Callable[[str], None]:
    """Publication.save_progress of an attempt: what the network created for it (its container, its upload
    session), stored with the target at once, in its own transaction, fenced (a run that lost its job saves
    nothing). The outcome's transaction clears it (apply); an attempt left unresolved keeps it for the next."""

    def save(ref: str) -> None:
        with tx():
            fence.check()
            _PROGRESS_SAVED.run(target=target_id, ref=ref, now=clock.now())

    return save


# ---- the account's other targets, as a reconciliation must see them ----------------------------------------------
# How far before the earliest unresolved attempt the publications other targets hold are read: a listing looks back
# to that attempt's start minus its clock slack (Publication.not_before, 2 minutes at most); a holder recorded its
# publication after the network made it.
HELD_SINCE_SLACK = timedelta(minutes=10)

# What a reconciliation reads of the account's other targets, in one statement on migration 0053's indexes: those
# holding a publication recorded since the attempt's window began, and those whose call is under way (`publishing`,
# call_started_at set; a reconciling attempt sets it only once it calls). The status is a literal in the SQL so that
# the partial index's condition is matched (as backend/services/posts/query.py does).
_ELSEWHERE = Shape(
    lambda: PostTarget.select(PostTarget.id, PostTarget.external_post_id, PostTarget.call_started_at).where(
        (
            ((PostTarget.account == Slot("account")) & (PostTarget.status == SQL("'publishing'")))
            | (
                (PostTarget.account == Slot("account"))
                & PostTarget.external_post_id.is_null(False)
                & (PostTarget.completed_at >= Slot("since"))
            )
        )
        & (PostTarget.id != Slot("target"))
    )
)


@dataclasses.dataclass(frozen=True)
class _Elsewhere:
    held: frozenset[str]  # the publications the account's other targets hold (Publication.held_elsewhere)
    # the other targets whose call is under way, its answer not recorded yet: (target id, when the call began)
    calling: tuple[tuple[str, datetime], ...]


def _elsewhere(account_id: str, target_id: str, since: datetime) -> _Elsewhere:
    rows = _ELSEWHERE.rows(account=account_id, target=target_id, since=since - HELD_SINCE_SLACK)
    return _Elsewhere(
        frozenset(str(r.external_post_id) for r in rows if r.external_post_id),
        tuple(
            (r.id, r.call_started_at)
            for r in rows
            if not r.external_post_id and r.call_started_at is not None
        ),
    )


# How much the network's clock may lag ours when a listed publication's time is compared with the start of another
# target's call (a call that began later than this after the publication was made did not make it).
CALL_CLOCK_SLACK = timedelta(seconds=5)
# How many listed matches made after the target's own calls were over a reconciliation skips, listing again each time
# (under a steady stream of one caption, the newest publications are other targets' calls just answered)
MAX_RELISTS = 10


def _listed_id(found: PublishOutcome) -> str:
    """The listing item a match is (its id; a match still processing, e.g. a video: the id it is followed by)."""
    return str(found.external_post_id or found.tracking_ref or "")


def _made_after(found: PublishOutcome | _Unresolved | None, made_by: datetime | None) -> bool:
    """A listed match (found.listed_at) the network made after `made_by` (Publication.made_by: the earlier attempts'
    calls over, plus the network's listing delay), give or take CALL_CLOCK_SLACK: not theirs, whatever its text —
    another target's."""
    return (
        isinstance(found, PublishOutcome)
        and found.listed_at is not None
        and bool(_listed_id(found))
        and made_by is not None
        and found.listed_at > made_by + CALL_CLOCK_SLACK
    )


_CALL_STARTED = Shape(
    lambda: PostTarget.update(
        call_started_at=Slot("now", PostTarget.call_started_at), updated_at=Slot("now", PostTarget.updated_at)
    ).where((PostTarget.id == Slot("target")) & PostTarget.status.not_in(TARGET_FINAL))
)


def _call_started(target_id: str) -> None:
    """A reconciling attempt found the earlier ones absent and is about to call: its call is under way from now
    (committed before the call, fenced), so another target's reconciliation that lists this call's publication
    before its answer is recorded does not take it (_unless_another_call)."""
    with tx():
        fence.check()
        _CALL_STARTED.run(target=target_id, now=clock.now())


def _unless_another_call(
    job: Job,
    pol: decide.Policy,
    account: Account,
    target: PostTarget,
    attempt: _Attempt,
    state: decide.TargetState,
    found: PublishOutcome,
    made_by: datetime | None,
    skipped: frozenset[str] = frozenset(),
) -> None:
    """A reconciliation found a publication (read once the listing is over). Matched in a listing by its text
    (found.listed_at), it may be another target's whose call began before the network made it (within
    CALL_CLOCK_SLACK) and whose answer is not recorded yet: the listing cannot tell. Then nothing is taken: the
    target waits and asks again once that answer is recorded (the publication is then held, and excluded). A call
    begun later did not make it, so a steady stream of other calls holds nobody up. Otherwise the store decides the
    one remaining race (two reconciliations taking one publication: the unique index of migration 0053)."""
    others = _elsewhere(account.id, target.id, attempt.unresolved_since or attempt.started_at)
    ext = found.external_post_id
    made = found.listed_at
    earlier = [t for t, began in others.calling if made is not None and began <= made + CALL_CLOCK_SLACK]
    if _made_after(found, made_by):  # still newer ones only (MAX_RELISTS of them skipped)
        why = f"{len(skipped)} publications of its text made since its calls were over are other targets'"
    elif ext and ext in others.held:  # recorded by its holder while the listing was read
        why = f"another target of the account holds {ext}"
    elif earlier:
        why = f"the call of target {earlier[0]} of the account is under way and may have made it"
    else:
        return
    waiting = decide.not_ours_yet(state, clock.now(), _recheck_s(pol), why)
    apply(waiting, job=job, attempt_id=attempt.id)
    log.info("%s: %s", _ids(target), waiting.retry.reason)
    raise waiting.retry


def _told_apart(
    adapter: NetworkAdapter, pub: Publication, account: Account, target: PostTarget, first: PublishOutcome
) -> PublishOutcome:
    """A status check's publication (`first`) matched by its text, the attempt that made it resolved already
    (reconciled while the network still processed it): the network says the target is published (Instagram: its
    container PUBLISHED); which of the account's publications of that text is its own is asked again with what the
    account's other targets hold skipped, and, as in _unless_another_call, a match another target's call under way
    may have made (it began before the network made the match; read once the listing is over) skipped too, the
    listing read again for an older one: the target's own was made by its call, before those. When no match is left
    (each held by another target, or made by a call under way, MAX_RELISTS of them at most), the target is published
    all the same: its success is recorded without an id, saying so — never failed, never published again."""
    since = target.started_at or clock.now()
    ref = str(target.tracking_ref)
    held = _elsewhere(account.id, target.id, since).held
    skipped: set[str] = set()
    for _ in range(MAX_RELISTS):
        out = adapter.check_status(dataclasses.replace(pub, held_elsewhere=held | skipped), ref)
        if out.state != "published" or out.listed_at is None or not out.external_post_id:
            if out.state in ("pending", "ready"):  # no match left in the listing: every one is another's
                break
            return out
        others = _elsewhere(account.id, target.id, since)
        ext = str(out.external_post_id)
        made = out.listed_at
        if ext not in others.held and not any(
            began <= made + CALL_CLOCK_SLACK for _, began in others.calling
        ):
            return out
        skipped.add(ext)
        held = others.held
    name = registry.label(target.platform)
    warning = TargetWarning(
        "publication_not_told_apart",
        f"{name} says this post is published, but it cannot be told apart from the account's other posts of the same "
        f"text published in the same minutes: its {name} id and link are unknown; check the {name} account",
    )
    log.warning("%s: %s", _ids(target), warning.message)
    return dataclasses.replace(
        first, external_post_id=None, post_url=None, warnings=(*first.warnings, warning)
    )


def _recheck_s(pol: decide.Policy) -> float:
    """How soon a reconciliation that found another target's (possible) publication asks again: as often as an
    accepted publication is polled, and no more than once a second (each asking pages a listing)."""
    return max(1.0, pol.track_poll_s)


# the other target of the account holding a publication (migration 0053's unique index)
_HOLDER = Shape(
    lambda: (
        PostTarget.select(PostTarget.id)
        .where(
            (PostTarget.account == Slot("account"))
            & (PostTarget.external_post_id == Slot("ext"))
            & (PostTarget.id != Slot("target"))
        )
        .limit(1)
    )
)


def _shared(target: PostTarget, out: PublishOutcome, held: str, other: str) -> PublishOutcome:
    """A direct answer whose id another target of the account (`other`) holds, from a reconciliation that ran while
    this call was under way: the success recorded without the id, saying so."""
    name = registry.label(target.platform)
    log.error(
        "%s: %s answered the call with %s, which %s of the account holds from a reconciliation",
        _ids(target),
        target.platform,
        held,
        other,
    )
    warning = TargetWarning(
        "reconciliation_shared_publication",
        f"{name} published this post as {held}, which target {other} of the account took for its own while this "
        f"call was under way: that target's post may never have been published; check the {name} account",
    )
    return dataclasses.replace(out, external_post_id=None, warnings=(*out.warnings, warning))


class _Unresolved(enum.Enum):
    """What _reconcile says when it found no answer: the network cannot be asked, or not now."""

    UNVERIFIABLE = "unverifiable"
    UNREACHABLE = "unreachable"


def _reconcile(
    adapter: NetworkAdapter, pub: Publication, target: PostTarget
) -> PublishOutcome | _Unresolved | None:
    """Ask the network whether an earlier, unresolved attempt published the target. Returns the outcome found,
    None (absent from the listing now), _Unresolved.UNVERIFIABLE or _Unresolved.UNREACHABLE."""
    try:
        found = adapter.find_existing(pub)
    except Unverifiable as exc:
        log.warning(
            "%s: an earlier attempt's outcome is unknown and %s cannot be checked (%s): "
            "failing it rather than risking a duplicate",
            _ids(target),
            target.platform,
            exc,
        )
        return _Unresolved.UNVERIFIABLE
    except httpx.HTTPError as exc:
        log.warning(
            "%s: could not ask %s about an earlier attempt (%s): trying again later",
            _ids(target),
            target.platform,
            type(exc).__name__,
        )
        return _Unresolved.UNREACHABLE
    if found is not None:
        log.warning(
            "%s: reconciled: %s has the publication of an earlier attempt (%s); not publishing again",
            _ids(target),
            target.platform,
            found.external_post_id,
        )
        return found
    log.info(
        "%s: re-attempt: %s confirms an earlier attempt did not publish it (since %s)",
        _ids(target),
        target.platform,
        clock.iso(pub.attempted_at),
    )
    return None


def _publish(
    call: Callable[[Publication], PublishOutcome], pub: Publication, platform: str
) -> PublishOutcome:
    try:
        return call(pub)
    except httpx.HTTPError as exc:  # the request may have reached the network: ambiguous
        return PublishOutcome(
            state="failed",
            fail_type="retriable",
            ambiguous=True,
            fail_reason=f"could not reach {platform} ({type(exc).__name__}); "
            "it will be retried automatically",
        )


def _token_ready(account: Account, settings: Settings, target: PostTarget, post: Post, job: Job) -> bool:
    """Before a call with a live account's token: a token expired or within SOCIALPUB_TOKEN_REFRESH_MARGIN_S of
    its expiry is refreshed first, through the one refresh path (services/tokens.refresh_account), and the new
    token is put on `account`. False when the grant turned out dead: the account is needs_reauth and this
    target (pending) has failed with the others. A transient failure leaves a token still valid in use, and
    makes the job wait (RetryLater) with an expired one instead of a call bound to fail; a refresh refused for
    another reason (the app's configuration) leaves the call to get the network's answer."""
    now = clock.now()
    if not tokens.due(account, now, settings):
        return True
    expired = account.token_expires_at is not None and account.token_expires_at <= now
    try:
        got = tokens.refresh_account(account.id, settings)
    except tokens.RefreshBusy as exc:
        if expired:
            raise RetryLater(
                "waiting for the account's token refresh",
                count_attempt=False,
                delay_s=max(1.0, (exc.until - now).total_seconds()),
            ) from None
        return True
    except tokens.RefreshTransient as exc:
        if expired:
            name = registry.label(target.platform)
            reason = (
                f"the account's {name} token has expired and {name} could not refresh it now ({exc}); "
                "it will be retried"
            )
            log.warning("%s: %s", _ids(target), reason)
            delay = exc.retry_after_s or policy(settings, account).strategy.delay_for(max(1, job.attempts))
            decision = decide.token_wait(state_of(target, post), clock.now(), delay, reason)
            if not target.tracking_ref:  # not yet accepted by the network: it waits `pending`, saying why
                apply(decision, job=job)
            raise decision.retry from None
        return True
    except (tokens.RefreshError, tokens.NotConfigured) as exc:  # not now, nor later: the network has its say
        log.warning("%s: the account's token could not be refreshed: %s", _ids(target), exc)
        return True
    if got.result == "dead":
        return False
    if got.access_token:
        account.access_token = got.access_token
        account.token_expires_at = got.expires_at
    return True


# ---- target.track ---------------------------------------------------------------------------------------
def track_target(job: Job, settings: Settings) -> None:
    """Follow a network's asynchronous processing of an accepted target (TikTok, Instagram containers, YouTube,
    LinkedIn assets) until it confirms or fails, or fail it `retriable` past the platform's deadline. Each
    check is one `decide.outcome(..., tracking=True)` applied; while the network is still processing, the job
    polls again (not counted); a retriable failure waits `pending` and counts one of the job's attempts, the
    last one failing the target.

    A check answering `ready` (the network waits for the publishing call: LinkedIn's asset AVAILABLE,
    Instagram's container FINISHED) leads to that call, made as an attempt like publish_target's: recorded
    before the call, and an earlier such call without outcome reconciled first (never posted twice). So does a
    check that found the publication only by matching its text in a listing: that is an earlier call's
    publication, and its reconciliation decides whose it is."""
    loaded = _load(job.payload["target_id"])
    if loaded is None:
        return
    target, post, account = loaded
    if target.status in TARGET_FINAL or not target.tracking_ref:
        return
    if account is None:
        apply(decide.account_lost_while_tracking(state_of(target, post), clock.now()), job=job)
        return
    if account.status == "active":  # a dead grant: the check below gets the network's refusal
        _token_ready(account, settings, target, post, job)
    pub = build_publication(post, target, account)
    adapter = adapters.adapter_for(account, settings)
    try:
        out = adapter.check_status(pub, target.tracking_ref)
        # A publication the check matched by its text (listed_at: Instagram's container found PUBLISHED, its media
        # looked up by caption) is an earlier call's: when that call's answer was never recorded, its reconciliation
        # decides whose it is (the publications other targets hold skipped, calls still under way waited for), as in
        # publish_target; when its attempt was resolved already (reconciled while the network still processed it),
        # the check is made again with what the account's other targets hold skipped
        listed = out.state == "published" and out.listed_at is not None
        if listed and not unresolved_attempts(target.id):
            out = _told_apart(adapter, pub, account, target, out)
            listed = False
    except httpx.HTTPError as exc:
        raise RetryLater(f"status check failed: {type(exc).__name__}") from exc
    if out.state == "ready" or listed:
        ref = out.tracking_ref or target.tracking_ref
        called = _attempt(
            job,
            settings,
            adapter,
            # what the network holds of this publication (its container, its asset): an earlier publishing call
            # left without outcome is reconciled by asking about it (find_existing), not only the listing
            dataclasses.replace(pub, resume=ref),
            target,
            post,
            account,
            lambda p: adapter.complete(p, ref),
            tracking=True,
        )
        if called is not None:
            _decide_and_apply(job, settings, account, target, *called, tracking=True)
        return
    # a retriable failure while tracking is bounded by this job's attempts (the target's count only publish
    # calls): each such wait counts one; a "still processing" poll counts none
    state = dataclasses.replace(state_of(target, post), attempts=job.attempts)
    decision, applied = _apply_outcome(job, policy(settings, account), target, state, out, None, True)
    _account_refused(applied, decision, account)
    if applied and decision.retry is not None:
        if decision.retry.count_attempt:  # a retriable failure (not a "still processing" poll, nor a wait)
            log.info(
                "%s: status check: %s; next check in %.1f s",
                _ids(target),
                decision.retry.reason,
                decision.retry.delay_s,
            )
        raise decision.retry


# ---- dead jobs ------------------------------------------------------------------------------------------
def give_up(target_id: str, error: str) -> None:
    """A target's job died (attempts exhausted on unexpected errors): the target ends `failed` / `retriable`,
    never stays open; with an attempt whose outcome is unknown, or accepted by the network (tracking_ref), its
    failReason says it may have been published."""
    target = PostTarget.get_or_none(PostTarget.id == target_id)
    if target is None or target.status in TARGET_FINAL:
        return
    post = Post.get_by_id(target.post_id)
    # an attempt without outcome, or a post the network accepted (tracking): it may have been published
    unresolved = bool(unresolved_attempts(target_id)) or bool(target.tracking_ref)
    log.error(
        "%s: giving up after an internal error%s: %s",
        _ids(target),
        " (an attempt's outcome is unknown)" if unresolved else "",
        error,
    )
    apply(decide.dead(state_of(target, post), error, clock.now(), unresolved=unresolved))


def give_up_post(post_id: str, error: str) -> None:
    """A post's publish job died (attempts exhausted on an unexpected error): none of its targets may stay
    open. Targets that continue on a job of their own are left to it."""
    log.error("post %s: giving up after an internal error: %s", post_id, error)
    with tx():
        post = lock_post(post_id)
        if post is None or post.status not in (PostStatus.SCHEDULED, PostStatus.PROCESSING):
            return
        now = clock.now()
        if post.status == PostStatus.SCHEDULED:
            post.status = PostStatus.PROCESSING
            Post.update(status=PostStatus.PROCESSING, sent_at=post.sent_at or now, updated_at=now).where(
                Post.id == post.id
            ).execute()
        for t in PostTarget.select().where(PostTarget.post == post.id):
            if t.status in TARGET_FINAL or _has_live_job(t.id):
                continue
            apply(
                decide.dead(
                    state_of(t, post),
                    error,
                    now,
                    unresolved=bool(unresolved_attempts(t.id)) or bool(t.tracking_ref),
                )
            )
        settle_post(post)


def _has_live_job(target_id: str) -> bool:
    return (
        Job.select()
        .where(
            Job.dedupe_key.in_([f"target:{target_id}", f"track:{target_id}"])
            & Job.status.in_([JobStatus.QUEUED, JobStatus.RUNNING])
        )
        .exists()
    )
