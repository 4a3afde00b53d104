"""The engine's pure half (backend/services/publishing/decide.py): plain objects in, a Decision out. No
database, no clock, no network."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from backend.networks.base import PublishOutcome, TargetWarning
from backend.queue.backoff import RetryStrategy
from backend.services.publishing import decide
from backend.services.publishing.decide import Policy, TargetState

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
POLICY = Policy(max_attempts=3, strategy=RetryStrategy(base_s=10, max_attempts=3), track_poll_s=5)


def state(**kw):  # type: ignore[no-untyped-def]
    values = dict(
        id="tgt_1",
        post_id="post_1",
        workspace_id="ws_1",
        platform="facebook",
        account_id="acc_1",
        account_name="Brand",
        status="publishing",
        attempts=1,
        started_at=NOW - timedelta(seconds=3),
    )
    values.update(kw)
    return TargetState(**values)


def test_published_succeeds_with_its_event():
    d = decide.outcome(state(), PublishOutcome.published("fb_9", "https://fb.example/9"), NOW, POLICY)
    assert d.final and d.status == "succeeded" and d.finishes_job and d.retry is None
    assert d.values["external_post_id"] == "fb_9" and d.values["completed_at"] == NOW
    assert d.values["fail_reason"] is None and d.values["next_attempt_at"] is None
    (ev,) = d.events
    assert ev.type == "publish.completed"
    assert ev.data == {
        "postId": "post_1",
        "targetId": "tgt_1",
        "platform": "facebook",
        "accountId": "acc_1",
        "status": "succeeded",
        "postUrl": "https://fb.example/9",
        "externalPostId": "fb_9",
    }
    assert d.resolves_attempts and not d.jobs and d.account_status is None


def test_inbox_delivered_is_a_success():
    d = decide.outcome(
        state(platform="tiktok"), PublishOutcome(state="inbox_delivered", external_post_id="p1"), NOW, POLICY
    )
    assert d.status == "inbox_delivered" and d.events[0].type == "publish.inbox_delivered"


def test_accepted_for_processing_is_tracked_on_its_lane():
    d = decide.outcome(
        state(platform="youtube"), PublishOutcome.pending("vid_1", network_status="uploaded"), NOW, POLICY
    )
    assert d.status == "publishing" and not d.final and not d.events
    assert d.values["tracking_ref"] == "vid_1"
    assert d.values["track_deadline"] == NOW + timedelta(seconds=decide.track_deadline_s("youtube"))
    (job,) = d.jobs
    assert (job.kind, job.dedupe_key, job.lane) == ("target.track", "track:tgt_1", "youtube")
    assert job.run_at == NOW + timedelta(seconds=5) and d.finishes_job


def test_tracking_still_processing_polls_again():
    s = state(platform="tiktok", tracking_ref="ref", track_deadline=NOW + timedelta(minutes=5))
    d = decide.outcome(
        s, PublishOutcome.pending("ref", network_status="PROCESSING_UPLOAD"), NOW, POLICY, tracking=True
    )
    assert d.retry.delay_s == 5 and not d.finishes_job and not d.jobs
    assert d.values["track_deadline"] == s.track_deadline


def test_tracking_past_the_deadline_fails_retriable():
    s = state(
        platform="youtube",
        tracking_ref="ref",
        started_at=NOW - timedelta(minutes=61),
        track_deadline=NOW - timedelta(seconds=1),
    )
    d = decide.outcome(s, PublishOutcome.pending("ref"), NOW, POLICY, tracking=True)
    assert d.status == "failed" and d.values["fail_type"] == "retriable"
    assert "did not confirm it within 60 minutes" in d.values["fail_reason"]
    assert d.events[0].type == "publish.failed"


def test_retriable_with_attempts_left_waits_pending_with_its_next_attempt():
    out = PublishOutcome.failed("retriable", "daily cap reached; it will be retried", retry_after_s=3600)
    d = decide.outcome(state(attempts=1), out, NOW, POLICY, rng=random.Random(1))
    assert d.status == "pending" and not d.final and not d.events and not d.finishes_job
    assert d.retry.delay_s >= 3600  # Retry-After honoured as a lower bound
    assert d.values["next_attempt_at"] == NOW + timedelta(seconds=d.retry.delay_s)
    assert d.values["call_started_at"] is None  # did not reach the network: nothing to reconcile
    assert d.resolves_attempts


def test_an_ambiguous_failure_leaves_the_attempt_unresolved():
    out = PublishOutcome(state="failed", fail_type="retriable", fail_reason="timeout", ambiguous=True)
    d = decide.outcome(state(attempts=1), out, NOW, POLICY)
    assert d.status == "pending" and not d.resolves_attempts and "call_started_at" not in d.values
    assert d.attempt_outcome.startswith("ambiguous")


def test_retriable_out_of_attempts_fails_and_says_so():
    out = PublishOutcome.failed("retriable", "server busy; it will be retried after 30 s")
    d = decide.outcome(state(attempts=3), out, NOW, POLICY)
    assert d.status == "failed" and d.values["fail_type"] == "retriable"
    assert (
        d.values["fail_reason"]
        == "server busy (gave up after 3 attempts; retrying the post later may succeed)"
    )


def test_ambiguous_out_of_attempts_says_to_check_the_account():
    out = PublishOutcome(state="failed", fail_type="retriable", fail_reason="timeout", ambiguous=True)
    d = decide.outcome(state(attempts=3, platform="linkedin"), out, NOW, POLICY)
    assert d.status == "failed" and "check the LinkedIn account" in d.values["fail_reason"]
    assert not d.resolves_attempts


def test_permanent_failure_with_an_auth_code_marks_the_account():
    out = PublishOutcome.failed("permanent", "token expired", network_code="190/463", auth_refused=True)
    d = decide.outcome(state(), out, NOW, POLICY)
    assert d.status == "failed" and d.values["fail_type"] == "permanent"
    assert d.account_status == "needs_reauth"
    assert d.events[0].data["failReason"] == "token expired" and d.events[0].data["failType"] == "permanent"


def test_unverifiable_fails_saying_it_may_have_been_published():
    d = decide.unverifiable(state(platform="tiktok"), NOW)
    assert d.status == "failed" and d.values["fail_type"] == "retriable"
    assert "may have been published at TikTok" in d.values["fail_reason"]
    assert "check the account before retrying" in d.values["fail_reason"].lower()


def test_dead_job_with_an_unresolved_attempt_says_it_may_have_been_published():
    d = decide.dead(state(), "boom", NOW, unresolved=True)
    assert d.status == "failed" and "may have been published at Facebook" in d.values["fail_reason"]
    plain = decide.dead(state(), "boom", NOW, unresolved=False)
    assert (
        "internal error" in plain.values["fail_reason"] and "may have been" not in plain.values["fail_reason"]
    )


def test_interrupted_waits_pending_unresolved():
    d = decide.interrupted(state(), "RuntimeError: bug", NOW, 30)
    assert d.status == "pending" and d.values["next_attempt_at"] == NOW + timedelta(seconds=30)
    assert not d.resolves_attempts and not d.finishes_job and d.retry.delay_s == 30


def test_inactive_account_and_too_late():
    d = decide.inactive_account(state(status="pending"), "needs_reauth", NOW)
    assert d.values["fail_type"] == "permanent" and "'Brand' must be reconnected" in d.values["fail_reason"]
    assert "socialpub accounts connect" in d.values["fail_reason"]
    assert "disconnected" in decide.inactive_account(state(), None, NOW).values["fail_reason"]
    late = decide.too_late(state(status="pending", started_at=None), 3600, 600, NOW)
    assert "maximum lateness of 600 s" in late.values["fail_reason"] and late.values["started_at"] == NOW


def test_settle():
    assert decide.settle(["succeeded", "inbox_delivered"]) == "completed"
    assert decide.settle(["succeeded", "failed"]) == "partial"
    assert decide.settle(["failed", "failed"]) == "failed"
    assert decide.settle(["succeeded", "pending"]) is None
    assert decide.settle(["publishing"]) is None
    assert decide.lateness_s(NOW - timedelta(seconds=90), NOW) == 90
    assert decide.lateness_s(None, NOW) == 0


def test_absence_is_conclusive_only_after_the_listing_delay():
    """A network lists an accepted publication only a while after accepting it (TikTok: once processed); it
    accepted it, if at all, before the earlier calls were over."""
    over = NOW - timedelta(seconds=5)
    assert decide.absence_conclusive_at(over, 30) == over + timedelta(seconds=30)
    assert decide.absence_conclusive_at(over, 0) == over  # listed at once: conclusive at once
    assert decide.absence_conclusive_at(over, -1) == over


def test_not_listed_yet_waits_pending_without_a_call():
    until = NOW + timedelta(seconds=25)
    d = decide.not_listed_yet(state(platform="tiktok"), NOW, until)
    assert d.status == "pending" and d.values["next_attempt_at"] == until and not d.final and not d.events
    assert d.retry.delay_s == 25 and not d.finishes_job
    assert d.no_call and d.attempt_outcome.startswith("not called") and "TikTok" in d.attempt_outcome
    assert "fail_reason" not in d.values  # nothing failed


def test_unreached_waits_pending_without_a_call():
    d = decide.unreached(state(platform="linkedin"), NOW, 40)
    assert d.status == "pending" and d.values["next_attempt_at"] == NOW + timedelta(seconds=40)
    assert d.no_call and d.retry.delay_s == 40 and not d.finishes_job and "LinkedIn" in d.retry.reason


def test_ready_is_tracked_like_pending():
    """A network ready for the publishing call (from a status check) keeps the target tracked."""
    d = decide.outcome(
        state(platform="linkedin"), PublishOutcome.ready("ref", network_status="AVAILABLE"), NOW, POLICY
    )
    assert d.status == "publishing" and d.values["tracking_ref"] == "ref" and d.jobs[0].kind == "target.track"


# ---- waits are not failures (issue 30 item 2) ------------------------------------------------------------------
def _cap(**kw):  # type: ignore[no-untyped-def]
    return PublishOutcome.failed(
        "retriable", "the account reached TikTok's daily post cap; retry tomorrow", wait=True, **kw
    )


def test_a_cap_waits_however_many_attempts_were_made():
    """Out of attempts by the count (3 of 3), a daily cap still waits: the target is pending until the window
    the network named, the decision a wait (its attempt is not counted), the attempts not resolved otherwise."""
    d = decide.outcome(state(attempts=3, platform="tiktok"), _cap(retry_after_s=20 * 3600), NOW, POLICY)
    assert d.status == "pending" and d.wait and not d.final
    assert d.values["next_attempt_at"] == NOW + timedelta(hours=20) and d.retry.delay_s == 20 * 3600
    assert d.resolves_attempts and not d.finishes_job


def test_a_window_of_unknown_length_waits_the_backoff():
    d = decide.outcome(state(attempts=2), _cap(), NOW, POLICY, rng=random.Random(1))
    assert d.wait and d.status == "pending" and 0 < d.retry.delay_s <= 20


def test_a_server_error_with_a_retry_after_is_still_a_failure():
    """Only what the adapter says is a window waits: a 5xx naming a Retry-After counts, so a network that keeps
    failing ends the target."""
    out = PublishOutcome.failed("retriable", "internal error", retry_after_s=60)
    d = decide.outcome(state(attempts=3), out, NOW, POLICY)
    assert d.final and d.status == "failed" and not d.wait


def test_a_wait_past_the_longest_wait_fails_saying_so():
    policy = Policy(max_attempts=3, strategy=RetryStrategy(base_s=10, max_attempts=3), max_wait_s=86400)
    st = state(platform="youtube", started_at=NOW - timedelta(hours=20))
    d = decide.outcome(st, _cap(retry_after_s=6 * 3600), NOW, policy)
    assert d.final and d.values["fail_type"] == "retriable" and not d.wait
    assert (
        "SOCIALPUB_MAX_WAIT_S" in d.values["fail_reason"]
        and "YouTube asked to wait" in d.values["fail_reason"]
    )
    assert "it will be retried" not in d.values["fail_reason"]
    within = decide.outcome(st, _cap(retry_after_s=3 * 3600), NOW, policy)
    assert within.wait and within.status == "pending"


def test_an_ambiguous_wait_keeps_the_attempt_unresolved():
    d = decide.outcome(state(), _cap(retry_after_s=60, ambiguous=True), NOW, POLICY)
    assert d.wait and not d.resolves_attempts


def test_the_listing_delay_is_a_wait():
    d = decide.not_listed_yet(state(platform="tiktok"), NOW, NOW + timedelta(seconds=600))
    assert d.wait and d.no_call


def test_the_adapters_mark_caps_and_rate_limits_as_waits():
    from backend.networks.base import NetworkError
    from backend.networks.tiktok.adapter import classify

    assert classify("spam_risk_too_many_posts").wait
    assert classify("rate_limit_exceeded").wait
    assert not classify("internal_error", http_status=500, retry_after=30).wait
    assert NetworkError("retriable", "slow down", http_status=429).outcome().wait
    assert not NetworkError("retriable", "down", http_status=503, retry_after_s=5).outcome().wait


# ---- warnings (networks/base.py TargetWarning): a target that went through, not quite as asked ------------------
LOCK = TargetWarning("youtube_private_lock", "YouTube locked the video private")


def test_a_success_with_a_warning_carries_it_on_the_target_and_its_event():
    out = PublishOutcome.published("yt_1", "https://youtu.be/yt_1", warnings=(LOCK,))
    d = decide.outcome(state(platform="youtube"), out, NOW, POLICY)
    assert d.status == "succeeded"
    assert d.values["warnings"] == [
        {"code": "youtube_private_lock", "message": "YouTube locked the video private"}
    ]
    assert d.events[0].data["warnings"] == d.values["warnings"]


def test_a_success_without_warnings_writes_none():
    d = decide.outcome(state(), PublishOutcome.published("fb_9", None), NOW, POLICY)
    assert "warnings" not in d.values and "warnings" not in d.events[0].data


def test_warnings_of_a_pending_or_waiting_answer_are_kept_too():
    pending = PublishOutcome.pending("ref", warnings=(LOCK,))
    assert decide.outcome(state(platform="youtube"), pending, NOW, POLICY).values["warnings"] == [
        LOCK.to_dict()
    ]
    waiting = PublishOutcome.failed("retriable", "cap", wait=True, retry_after_s=60, warnings=(LOCK,))
    d = decide.outcome(state(platform="youtube"), waiting, NOW, POLICY)
    assert d.status == "pending" and d.values["warnings"] == [LOCK.to_dict()]


def test_merged_warnings_keep_one_per_code_and_never_drop_an_earlier_one():
    first = [{"code": "a", "message": "old"}, {"code": "b", "message": "b"}]
    merged = decide.merge_warnings(first, [{"code": "a", "message": "new"}, {"code": "c", "message": "c"}])
    assert merged == [
        {"code": "a", "message": "new"},
        {"code": "b", "message": "b"},
        {"code": "c", "message": "c"},
    ]
    assert decide.merge_warnings(None, []) == []
