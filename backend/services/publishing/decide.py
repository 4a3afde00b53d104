"""The pure half of the publishing engine: given a target's state and what happened, decide what changes.

Nothing here reads or writes the database, the clock or the network (the registry's static facts of a network —
its label, its tracking deadline — are read): every function takes plain values
(a `TargetState`, a `PublishOutcome` or a failure, `now`, a `Policy`) and returns a `Decision`: the target's
new column values, the events to record, the follow-up jobs, the account change, and what becomes of the job
that asked (finished, or tried again later). `apply.apply` writes a Decision in one transaction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from backend.networks import registry
from backend.networks.base import PublishOutcome
from backend.queue import JobSpec
from backend.queue.backoff import RetryLater, RetryStrategy
from backend.schemas.statuses import TARGET_FINAL, TARGET_SUCCESS, PostStatus, TargetStatus


def track_deadline_s(platform: str) -> float:
    """How long a network may take to confirm an accepted publication before the target fails `retriable` (its
    registry entry's track_deadline_s; 15 minutes for a network no longer registered)."""
    network = registry.find(platform)
    return network.track_deadline_s if network is not None else 15 * 60.0


INTERNAL = (
    "publishing stopped on an internal error (details are in the server log under target {}); "
    "retrying may succeed"
)

_WILL_RETRY = re.compile(r"[;,]?\s*it will be retried(?: after [^;()]*)?", re.I)


@dataclass(frozen=True)
class TargetState:
    """What the decisions need to know of one target (and its post), as read in the deciding transaction."""

    id: str
    post_id: str
    workspace_id: str
    platform: str
    account_id: str | None
    account_name: str
    status: str
    attempts: int = 0
    started_at: datetime | None = None
    track_deadline: datetime | None = None
    tracking_ref: str | None = None
    external_post_id: str | None = None
    fail_reason: str | None = None  # the last problem recorded (a waiting target says why it waits)

    @property
    def final(self) -> bool:
        return self.status in TARGET_FINAL


@dataclass(frozen=True)
class Policy:
    """The engine's settings a decision depends on."""

    max_attempts: int = 5
    strategy: RetryStrategy = field(default_factory=RetryStrategy)
    track_poll_s: float = 10.0
    max_wait_s: float = 7 * 86400.0  # SOCIALPUB_MAX_WAIT_S: the longest a target waits for a network's window


@dataclass(frozen=True)
class EventSpec:
    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Decision:
    """What a target's outcome changes.

    values: the target's new column values (empty: the target is left as it is).
    events / jobs: recorded / enqueued with the change. account_status: the account's new status, if any.
    finishes_job: the job that asked is done (completed in the same transaction).
    retry: the job is tried again as it says (its delay, its reason, whether the try counts against the job's
    attempts): a retry, the target waiting `pending` with next_attempt_at; a tracking poll, the target staying
    `publishing` while the network processes it. The engine raises it once the decision is applied.
    resolves_attempts: the target's attempts without a recorded outcome are closed with `attempt_outcome`
    (False when the call may have reached the network without our knowing: the attempt stays unresolved, and
    the next one asks the network first).
    no_call: the attempt made no call (it could not, or need not, ask the network yet): only it is closed,
    with `attempt_outcome`; the earlier attempts without outcome stay unresolved for the next one to check.
    wait: the target waits for a window the network set (a cap, a Retry-After, a rate limit, a listing delay),
    not after a failure: the attempt is not counted against the retry budget (nor the job's try).
    """

    target_id: str
    post_id: str  # the target's post (apply locks its row first)
    values: dict[str, Any] = field(default_factory=dict)
    events: tuple[EventSpec, ...] = ()
    jobs: tuple[JobSpec, ...] = ()
    account_status: str | None = None
    finishes_job: bool = True
    retry: RetryLater | None = None
    resolves_attempts: bool = True
    attempt_outcome: str = ""
    no_call: bool = False
    wait: bool = False

    @property
    def status(self) -> str | None:
        return self.values.get("status")

    @property
    def final(self) -> bool:
        return self.status in TARGET_FINAL


@dataclass(frozen=True, kw_only=True)
class Retrying(Decision):
    """A decision whose job is tried again, its `retry` always given: the engine applies it, then raises that."""

    retry: RetryLater


# ---- final states ---------------------------------------------------------------------------------------
def finish(
    state: TargetState,
    status: str,
    now: datetime,
    *,
    external_post_id: str | None = None,
    post_url: str | None = None,
    fail_reason: str | None = None,
    fail_type: str | None = None,
    network_status: str | None = None,
    account_status: str | None = None,
    attempt_outcome: str | None = None,
    warnings: Sequence[dict[str, str]] = (),
) -> Decision:
    """The target ends `status` (succeeded, inbox_delivered or failed), with its event. `warnings`: the
    network's answer's (TargetWarning dicts), added to the target's (apply keeps one per code)."""
    success = status in TARGET_SUCCESS
    ext = external_post_id or state.external_post_id
    values: dict[str, Any] = {
        "status": status,
        "external_post_id": ext,
        "post_url": post_url,
        "fail_reason": None if success else fail_reason,
        "fail_type": None if success else fail_type,
        "network_status": network_status,
        "completed_at": now,
        "updated_at": now,
        "started_at": state.started_at or now,
        "next_attempt_at": None,
    }
    if warnings:
        values["warnings"] = list(warnings)
    data: dict[str, Any] = {
        "postId": state.post_id,
        "targetId": state.id,
        "platform": state.platform,
        "accountId": state.account_id,
        "status": status,
    }
    if success:
        data.update(postUrl=post_url, externalPostId=ext)
        if warnings:
            data["warnings"] = list(warnings)
        event = EventSpec(
            "publish.inbox_delivered" if status == TargetStatus.INBOX_DELIVERED else "publish.completed", data
        )
    else:
        data.update(failReason=fail_reason, failType=fail_type)
        event = EventSpec("publish.failed", data)
    return Decision(
        state.id,
        state.post_id,
        values,
        (event,),
        account_status=account_status,
        attempt_outcome=attempt_outcome or (f"{status}: {ext}" if success else f"{status}: {fail_reason}"),
    )


def inactive_account(
    state: TargetState,
    account_status: str | None,
    now: datetime,
    *,
    detail: str | None = None,
    unresolved: bool = False,
) -> Decision:
    """The target's account is disconnected (None) or not active — `needs_reauth`: its grant is dead (refused,
    or its token could not be refreshed: `invalid_grant` or the network's equivalent, `detail`): the target fails
    `permanent`, saying to reconnect. `unresolved`: an earlier attempt's call may have reached the network (its
    outcome was never recorded)."""
    if account_status == "needs_reauth":
        reason = reconnect_reason(state.platform, state.account_name, detail)
    else:
        what = "disconnected" if account_status is None else account_status.replace("_", " ")
        reason = (
            f"the {state.platform} account {state.account_name!r} is {what}: "
            "reconnect it, then create the post again for this network"
        )
    if unresolved:
        name = registry.label(state.platform)
        reason += (
            f"; an earlier call's outcome is unknown: this post may have been published at {name}, "
            "check the account before creating it again"
        )
    return finish(state, TargetStatus.FAILED, now, fail_type="permanent", fail_reason=reason)


def reconnect_reason(platform: str, account_name: str, detail: str | None = None) -> str:
    """Why a target of an account whose grant is gone fails, and what to do."""
    name = registry.label(platform)
    why = f" ({detail})" if detail else ""
    return (
        f"the {platform} account {account_name!r} must be reconnected: {name} no longer accepts its "
        f"authorisation{why}. Reconnect it with `socialpub accounts connect {platform}`, then create the post "
        "again for this network"
    )


def account_lost_while_tracking(state: TargetState, now: datetime) -> Decision:
    return finish(
        state,
        TargetStatus.FAILED,
        now,
        fail_type="permanent",
        fail_reason="the account was disconnected while the network was processing the post",
    )


def too_late(state: TargetState, lateness_s: float, max_lateness_s: float, now: datetime) -> Decision:
    """A post due longer ago than SOCIALPUB_MAX_LATENESS_S: its pending targets fail instead of going out late."""
    return finish(
        state,
        TargetStatus.FAILED,
        now,
        fail_type="retriable",
        fail_reason=f"not sent: the scheduled time passed {int(lateness_s)} s ago while no worker was "
        f"running, over the maximum lateness of {int(max_lateness_s)} s "
        "(SOCIALPUB_MAX_LATENESS_S). Retrying creates it again now.",
    )


def unverifiable(state: TargetState, now: datetime) -> Decision:
    """An earlier attempt may have reached the network, which offers no way to check: never publish again
    silently; the target fails `retriable` and says to look at the account first."""
    name = registry.label(state.platform)
    return finish(
        state,
        TargetStatus.FAILED,
        now,
        fail_type="retriable",
        fail_reason=f"this post may have been published at {name}: an earlier attempt was interrupted "
        f"and {name} offers no way to check. Check the account before retrying",
        attempt_outcome="unverifiable: an earlier attempt may have published it",
    )


def dead(state: TargetState, error: str, now: datetime, *, unresolved: bool) -> Decision:
    """The target's job was buried (attempts exhausted on unexpected errors): the target never stays open.
    `unresolved`: an attempt of it may have reached the network (its outcome was never recorded)."""
    reason = INTERNAL.format(state.id)
    if state.fail_reason:  # why it was waiting (an expired token the network would not refresh, say)
        reason += f"; the last problem seen: {_WILL_RETRY.sub('', state.fail_reason).rstrip(' ;,')}"
    if unresolved:
        name = registry.label(state.platform)
        reason = (
            f"publishing stopped on an internal error after a call to {name} whose outcome is unknown: "
            f"this post may have been published at {name}; check the account before retrying "
            f"(details are in the server log under target {state.id})"
        )
    return finish(
        state,
        TargetStatus.FAILED,
        now,
        fail_type="retriable",
        fail_reason=reason,
        attempt_outcome=f"job dead: {error}",
    )


def interrupted(state: TargetState, error: str, now: datetime, delay_s: float) -> Retrying:
    """An unexpected error during the call (an adapter bug, say): the target waits for its job's next try.
    The attempt stays unresolved (the call may have reached the network): the next try asks first."""
    return Retrying(
        state.id,
        state.post_id,
        {
            "status": TargetStatus.PENDING,
            "next_attempt_at": now + timedelta(seconds=delay_s),
            "updated_at": now,
        },
        finishes_job=False,
        retry=RetryLater(error, delay_s),
        resolves_attempts=False,
        attempt_outcome=f"error: {error}",
    )


# ---- reconciling an earlier attempt ---------------------------------------------------------------------
def absence_conclusive_at(calls_over_by: datetime, listing_delay_s: float) -> datetime:
    """When the network's "absent" about an earlier attempt becomes conclusive: a network lists an accepted
    publication at most `listing_delay_s` after accepting it (TikTok: once processed), and it accepted it, if
    at all, before `calls_over_by` (a time the earlier calls are known to be over: the start of the first
    attempt after them, which another process could only make once their process was gone)."""
    return calls_over_by + timedelta(seconds=max(0.0, listing_delay_s))


def not_listed_yet(state: TargetState, now: datetime, until: datetime) -> Retrying:
    """An earlier attempt's call may have reached the network, whose listing does not show the publication, but
    could not yet either: it lists a publication only a while after accepting it. No call now (publishing
    again could publish twice): the target waits `pending` until `until`, when absence is conclusive, and asks
    again. The earlier attempts stay unresolved; this one is closed as having made no call."""
    name = registry.label(state.platform)
    reason = (
        f"an interrupted attempt may have published it: {name} lists a publication only a while after "
        f"accepting it, so it is asked again at {until.isoformat()} before any new attempt"
    )
    return _asked_again(state, now, until, reason)


def not_ours_yet(state: TargetState, now: datetime, delay_s: float, why: str) -> Retrying:
    """An earlier attempt's reconciliation found a publication that may be another target's (`why`): another
    target of the account took it first (the store refused a second holder), or another target's call, its answer
    not recorded yet, may have made it — a listing matched by text cannot tell them apart. Nothing is taken and
    nothing published: the target waits `pending` (not counted as a try) and asks again, that target's
    publication then excluded (Publication.held_elsewhere). The earlier attempts stay unresolved."""
    name = registry.label(state.platform)
    reason = f"an interrupted attempt's publication at {name} is not told apart yet: {why}; it is asked again"
    return _asked_again(state, now, now + timedelta(seconds=delay_s), reason)


def _asked_again(state: TargetState, now: datetime, until: datetime, reason: str) -> Retrying:
    """No call: the target waits `pending` until `until` (not counted as a try) and its earlier attempts are asked
    about again then, still unresolved; this attempt is closed as having made no call."""
    return Retrying(
        state.id,
        state.post_id,
        {"status": TargetStatus.PENDING, "next_attempt_at": until, "updated_at": now},
        finishes_job=False,
        retry=RetryLater(reason, max(0.0, (until - now).total_seconds()), count_attempt=False),
        no_call=True,
        attempt_outcome=f"not called: {reason}",
        wait=True,
    )


def unreached(state: TargetState, now: datetime, delay_s: float) -> Retrying:
    """The network could not be asked about an earlier attempt (unreachable): no call; the target waits
    `pending` for the job's next try, the earlier attempt still unresolved."""
    name = registry.label(state.platform)
    return Retrying(
        state.id,
        state.post_id,
        {
            "status": TargetStatus.PENDING,
            "next_attempt_at": now + timedelta(seconds=delay_s),
            "updated_at": now,
        },
        finishes_job=False,
        retry=RetryLater(f"could not ask {name} about an earlier attempt", delay_s),
        no_call=True,
        attempt_outcome="not called: the network could not be asked about an earlier attempt",
    )


def token_wait(state: TargetState, now: datetime, delay_s: float, reason: str) -> Retrying:
    """A live account's token has expired and its network would not refresh it now (its token endpoint failed):
    no call; the target waits `pending`, saying why (failReason) and until when (nextAttemptAt), for the job's
    next try. When the job's tries run out, `dead` names this reason as the last problem seen."""
    return Retrying(
        state.id,
        state.post_id,
        {
            "status": TargetStatus.PENDING,
            "fail_reason": reason,
            "next_attempt_at": now + timedelta(seconds=delay_s),
            "updated_at": now,
        },
        finishes_job=False,
        retry=RetryLater(reason, delay_s),
        no_call=True,
        attempt_outcome=f"not called: {reason}",
    )


# ---- the outcome of a network call ----------------------------------------------------------------------
def outcome(
    state: TargetState,
    out: PublishOutcome,
    now: datetime,
    policy: Policy,
    *,
    tracking: bool = False,
    rng: Any = None,
) -> Decision:
    """A network's answer (`PublishOutcome`) to a publish call (tracking=False) or a status check (True).

    published / inbox_delivered: the target succeeds. pending (or ready: waiting for the publishing call, which
    the track job makes): the network accepted it and is processing:
    tracked by a `target.track` job (a status check re-polls after `policy.track_poll_s`) until the platform's
    deadline, then fails `retriable`. failed retriable with attempts left: the target waits `pending` until
    its next attempt (backoff with jitter, at least the network's Retry-After). Otherwise the target fails
    (after a status check, saying the accepted post may still appear).
    Whatever the state, the answer's warnings (PublishOutcome.warnings) are added to the target's.
    Its retry counts against the job's attempts only for a retriable failure seen by a status check (the track
    job's tries bound it; a publish call's failures are counted by the target's attempts; a "still processing"
    poll and a window the network set count nothing).
    """
    decision = _outcome(state, out, now, policy, tracking=tracking, rng=rng)
    if decision.retry is not None:
        counts = tracking and decision.status == TargetStatus.PENDING and not decision.wait
        retry = decision.retry
        decision = replace(decision, retry=RetryLater(retry.reason, retry.delay_s, count_attempt=counts))
    new = warnings_of(out)
    if new and decision.values and "warnings" not in decision.values:
        decision = replace(decision, values={**decision.values, "warnings": new})
    return decision


def _outcome(
    state: TargetState, out: PublishOutcome, now: datetime, policy: Policy, *, tracking: bool, rng: Any
) -> Decision:
    if out.state in ("published", "inbox_delivered"):
        status = TargetStatus.SUCCEEDED if out.state == "published" else TargetStatus.INBOX_DELIVERED
        return finish(
            state,
            status,
            now,
            external_post_id=out.external_post_id,
            post_url=out.post_url,
            network_status=out.network_status,
            warnings=warnings_of(out),
        )
    if out.state in ("pending", "ready"):
        return _pending(state, out, now, policy, tracking)
    return _failed(state, out, now, policy, rng, tracking)


def warnings_of(out: PublishOutcome) -> list[dict[str, str]]:
    """An adapter's answer's warnings (PublishOutcome.warnings, TargetWarning) as the target stores them."""
    return [w.to_dict() for w in getattr(out, "warnings", ()) or ()]


def merge_warnings(
    stored: Sequence[dict[str, str]] | None, new: Sequence[dict[str, str]]
) -> list[dict[str, str]]:
    """A target's warnings after a new answer: one per code, in the order first given, the latest message
    winning; none an earlier answer gave is ever dropped."""
    merged: dict[str, dict[str, str]] = {w["code"]: dict(w) for w in stored or ()}
    for w in new:
        merged[w["code"]] = {"code": w["code"], "message": w["message"]}
    return list(merged.values())


def _pending(
    state: TargetState, out: PublishOutcome, now: datetime, policy: Policy, tracking: bool
) -> Decision:
    deadline = state.track_deadline or now + timedelta(seconds=track_deadline_s(state.platform))
    if tracking and now >= deadline:
        minutes = int((deadline - (state.started_at or now)).total_seconds() // 60)
        return finish(
            state,
            TargetStatus.FAILED,
            now,
            fail_type="retriable",
            network_status=out.network_status,
            fail_reason=f"{state.platform} accepted the post but did not confirm it within {minutes} "
            "minutes; it may still appear: check the account before retrying",
        )
    values = {
        "status": TargetStatus.PUBLISHING,
        "tracking_ref": out.tracking_ref or state.tracking_ref,
        "external_post_id": out.external_post_id or state.external_post_id,
        "network_status": out.network_status,
        "track_deadline": deadline,
        "next_attempt_at": None,
        "updated_at": now,
    }
    word = out.network_status or "processing"
    if tracking:  # the track job polls again
        return Decision(
            state.id,
            state.post_id,
            values,
            finishes_job=False,
            retry=RetryLater(f"{state.platform}: {word}", policy.track_poll_s),
            attempt_outcome=f"accepted: {word}",
        )
    track = JobSpec(
        "target.track",
        {"target_id": state.id},
        run_at=now + timedelta(seconds=policy.track_poll_s),
        workspace_id=state.workspace_id,
        dedupe_key=f"track:{state.id}",
        lane=state.platform,
        max_attempts=policy.max_attempts,
    )
    return Decision(state.id, state.post_id, values, jobs=(track,), attempt_outcome=f"accepted: {word}")


def _failed(
    state: TargetState,
    out: PublishOutcome,
    now: datetime,
    policy: Policy,
    rng: Any,
    tracking: bool = False,
) -> Decision:
    reason = out.fail_reason or (
        "retriable network failure" if out.fail_type == "retriable" else "the network refused the post"
    )
    ambiguous = bool(getattr(out, "ambiguous", False))
    if is_wait(out):
        return _wait(state, out, now, policy, reason, ambiguous)
    if out.fail_type == "retriable" and state.attempts < policy.max_attempts:
        decision = policy.strategy.decide(state.attempts, out.retry_after_s, rng)
        delay = decision.delay_s if decision.retry else float(out.retry_after_s or 0.0)
        values: dict[str, Any] = {
            "status": TargetStatus.PENDING,
            "fail_reason": reason,
            "network_status": out.network_status,
            "next_attempt_at": now + timedelta(seconds=delay),
            "updated_at": now,
        }
        if not ambiguous:
            values["call_started_at"] = None
        return Decision(
            state.id,
            state.post_id,
            values,
            finishes_job=False,
            retry=RetryLater(reason, delay),
            resolves_attempts=not ambiguous,
            attempt_outcome=("ambiguous: " if ambiguous else "retriable: ") + reason,
        )
    if out.fail_type == "retriable":
        # the network's wording promised a retry; no more come: say so instead of contradicting it
        reason = _WILL_RETRY.sub("", reason).rstrip(" ;,")
        reason = f"{reason} (gave up after {state.attempts} attempts; retrying the post later may succeed)"
        name = registry.label(state.platform)
        if ambiguous:
            reason += f"; the last call's outcome is unknown: check the {name} account before retrying"
        elif tracking:  # the network accepted the post: it may still publish it
            reason += (
                f"; {name} accepted the post and it may still appear: check the {name} account before "
                "retrying"
            )
    account_status = "needs_reauth" if out.auth_refused else None
    final = finish(
        state,
        TargetStatus.FAILED,
        now,
        fail_reason=reason,
        fail_type=out.fail_type or "permanent",
        network_status=out.network_status,
        account_status=account_status,
    )
    return replace(final, resolves_attempts=not ambiguous) if ambiguous else final


def is_wait(out: PublishOutcome) -> bool:
    """A retriable answer that is a window the network set (a daily cap, a rate limit, throttling: the adapter
    says so, PublishOutcome.wait): a wait, not a failure. A server error naming a Retry-After is still a
    failure (its delay honours the Retry-After): a network that keeps failing ends the target."""
    return out.fail_type == "retriable" and bool(getattr(out, "wait", False))


def _wait(
    state: TargetState, out: PublishOutcome, now: datetime, policy: Policy, reason: str, ambiguous: bool
) -> Decision:
    """The network set a window (is_wait): the target waits `pending` until it is over, however long, without
    using a retry — up to SOCIALPUB_MAX_WAIT_S from its first attempt, then it fails saying so."""
    if out.retry_after_s is not None:
        delay = max(0.0, float(out.retry_after_s))
    else:  # a window of unknown length: the backoff of the failures so far
        delay = policy.strategy.delay_for(max(1, state.attempts))
    until = now + timedelta(seconds=delay)
    first = state.started_at or now
    if until > first + timedelta(seconds=policy.max_wait_s):
        name = registry.label(state.platform)
        waited = _span(until - first)
        longest = _span(timedelta(seconds=policy.max_wait_s))
        why = _WILL_RETRY.sub("", reason).rstrip(" ;,")
        text = (
            f"not sent: {name} asked to wait ({why}) until {until.isoformat(timespec='seconds')}, {waited} after "
            f"the first attempt, longer than the longest wait of {longest} (SOCIALPUB_MAX_WAIT_S); retrying "
            "the post later may succeed"
        )
        if ambiguous:
            text += f"; the last call's outcome is unknown: check the {name} account before retrying"
        final = finish(
            state,
            TargetStatus.FAILED,
            now,
            fail_reason=text,
            fail_type="retriable",
            network_status=out.network_status,
        )
        return replace(final, resolves_attempts=not ambiguous) if ambiguous else final
    values: dict[str, Any] = {
        "status": TargetStatus.PENDING,
        "fail_reason": reason,
        "network_status": out.network_status,
        "next_attempt_at": until,
        "updated_at": now,
    }
    if not ambiguous:
        values["call_started_at"] = None
    return Decision(
        state.id,
        state.post_id,
        values,
        finishes_job=False,
        retry=RetryLater(reason, delay),
        resolves_attempts=not ambiguous,
        attempt_outcome=("ambiguous, waiting: " if ambiguous else "waiting: ") + reason,
        wait=True,
    )


def _span(d: timedelta) -> str:
    s = d.total_seconds()
    if s >= 2 * 86400:
        return f"{s / 86400:.1f} days"
    if s >= 2 * 3600:
        return f"{s / 3600:.1f} h"
    return f"{int(s)} s"


# ---- the post -------------------------------------------------------------------------------------------
def settle(statuses: list[str]) -> str | None:
    """The post's overall status once every target is final (spec 3.1): completed, partial or failed;
    None while a target is still open."""
    if any(s not in TARGET_FINAL for s in statuses):
        return None
    ok = sum(s in TARGET_SUCCESS for s in statuses)
    return (
        PostStatus.COMPLETED
        if ok == len(statuses)
        else (PostStatus.FAILED if ok == 0 else PostStatus.PARTIAL)
    )


def lateness_s(scheduled_at: datetime | None, now: datetime) -> float:
    return max(0.0, (now - scheduled_at).total_seconds()) if scheduled_at is not None else 0.0
