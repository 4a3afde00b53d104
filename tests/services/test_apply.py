"""`apply(decision)`: one transaction, fenced (a final target is never reopened), events written once, the
post settled when its last target is final, the asking job completed with the outcome, attempts closed."""

from __future__ import annotations

import pytest

from backend import clock, queue
from backend.networks.base import PublishOutcome, TargetWarning
from backend.services import accounts, workspace
from backend.services.publishing import apply, decide
from backend.services.publishing.apply import policy, state_of, unresolved_attempts
from backend.store.db import STEPS
from backend.store.models import Event, Job, Post, PostTarget, PublishAttempt
from tests.conftest import key_headers

OK = PublishOutcome.published("x1", "https://x.example/1")


@pytest.fixture
def post(client, owner, settings):  # type: ignore[no-untyped-def]
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    r = client.post(
        "/v1/posts",
        json={"targets": ["facebook", "linkedin"], "content": "apply"},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text
    return Post.get_by_id(r.json()["id"])


def target(post, platform):  # type: ignore[no-untyped-def]
    return PostTarget.get((PostTarget.post == post.id) & (PostTarget.platform == platform))


def decision(post, platform, out, settings, **kw):  # type: ignore[no-untyped-def]
    t = target(post, platform)
    return decide.outcome(
        state_of(t, Post.get_by_id(post.id)), out, clock.now(), policy(settings, None), **kw
    )


def test_outcomes_settle_the_post_once_every_target_is_final(post, settings):
    assert apply(decision(post, "facebook", OK, settings))
    assert Post.get_by_id(post.id).status == "processing"
    assert apply(decision(post, "linkedin", PublishOutcome.failed("permanent", "no"), settings))
    row = Post.get_by_id(post.id)
    assert row.status == "partial" and row.completed_at is not None
    types = sorted(e.type for e in Event.select().where(Event.subject_id == post.id))
    assert types == ["publish.completed", "publish.failed"]


def test_a_final_target_is_never_reopened_and_its_event_is_written_once(post, settings):
    late_pending = decision(post, "facebook", PublishOutcome.pending("ref-1"), settings)
    late_ok = decision(post, "facebook", OK, settings)
    assert apply(decision(post, "facebook", PublishOutcome.failed("permanent", "no"), settings))
    assert not apply(late_pending)  # fenced: nothing written
    assert not apply(late_ok)
    t = target(post, "facebook")
    assert t.status == "failed" and t.tracking_ref is None
    assert not Job.select().where(Job.dedupe_key == f"track:{t.id}").exists()
    assert Event.select().where(Event.subject_id == post.id).count() == 1


def test_the_asking_job_completes_in_the_outcomes_transaction(post, settings):
    (job,) = [j for j in queue.claim("w-test", limit=10) if j.kind == "post.publish"]
    assert apply(decision(post, "facebook", OK, settings), job=job)
    assert Job.get_by_id(job.id).status == "done"


def test_a_waiting_decision_leaves_the_job_to_its_retry(post, settings):
    (job,) = [j for j in queue.claim("w-test", limit=10) if j.kind == "post.publish"]
    d = decision(post, "facebook", PublishOutcome.failed("retriable", "busy"), settings)
    assert d.retry is not None
    assert apply(d, job=job)
    assert Job.get_by_id(job.id).status == "running"  # the handler raises RetryLater next
    t = target(post, "facebook")
    assert t.status == "pending" and t.next_attempt_at is not None


def test_a_pending_outcome_enqueues_tracking_on_the_networks_lane(post, settings):
    assert apply(decision(post, "linkedin", PublishOutcome.pending("ref-1"), settings))
    t = target(post, "linkedin")
    assert t.status == "publishing" and t.tracking_ref == "ref-1"
    job = Job.get(Job.dedupe_key == f"track:{t.id}")
    assert job.kind == "target.track" and job.lane == "linkedin"


def _attempt(t, attempt_id):  # type: ignore[no-untyped-def]
    PublishAttempt.insert(id=attempt_id, target=t.id, account=t.account_id, started_at=clock.now()).execute()


def test_attempts_close_with_the_outcome_unless_ambiguous(post, settings):
    t = target(post, "facebook")
    _attempt(t, "att_1")  # an earlier attempt whose process died
    _attempt(t, "att_2")
    ambiguous = PublishOutcome(state="failed", fail_type="retriable", fail_reason="timeout", ambiguous=True)
    assert apply(decision(post, "facebook", ambiguous, settings), attempt_id="att_2")
    assert PublishAttempt.select().where(PublishAttempt.finished_at.is_null()).count() == 2
    assert PublishAttempt.get_by_id("att_2").outcome.startswith("ambiguous")
    _attempt(t, "att_3")
    assert apply(decision(post, "facebook", OK, settings), attempt_id="att_3")
    rows = {a.id: a for a in PublishAttempt.select()}
    assert all(a.finished_at is not None for a in rows.values())
    assert rows["att_3"].outcome.startswith("succeeded") and rows["att_1"].outcome.startswith(
        "reconciled by att_3"
    )


def test_an_auth_failure_is_signalled_not_written(post, settings):
    """The decision carries the account's change; apply writes the target only: the account turns needs_reauth
    through services/tokens.mark_needs_reauth, the one path (tests/services/test_tokens.py)."""
    from backend.store.models import Account

    out = PublishOutcome.failed("permanent", "token expired", network_code="190/463", auth_refused=True)
    d = decision(post, "facebook", out, settings)
    assert d.account_status == "needs_reauth"
    assert apply(d)
    assert target(post, "facebook").status == "failed"
    assert Account.get_by_id(target(post, "facebook").account_id).status == "active"


def test_an_attempt_that_made_no_call_closes_alone(post, settings):
    """Waiting until the network's "absent" is conclusive (or until it can be asked): the waiting attempt is
    closed as having made no call; the interrupted one stays unresolved for the next attempt to reconcile."""
    from datetime import timedelta

    t = target(post, "facebook")
    _attempt(t, "att_1")  # interrupted: its call may have reached the network
    _attempt(t, "att_2")  # this attempt: the listing does not show it yet
    now = clock.now()
    d = decide.not_listed_yet(state_of(t, Post.get_by_id(post.id)), now, now + timedelta(seconds=30))
    assert apply(d, attempt_id="att_2")
    rows = {a.id: a for a in PublishAttempt.select()}
    assert rows["att_1"].finished_at is None and rows["att_1"].outcome is None
    assert rows["att_2"].finished_at is not None and rows["att_2"].outcome.startswith("not called")
    t = target(post, "facebook")
    assert t.status == "pending" and t.next_attempt_at == now + timedelta(seconds=30)


def test_warnings_join_those_an_earlier_answer_gave_and_the_api_answers_them(post, settings, client, owner):
    first = TargetWarning("facebook_first", "given while processing")
    assert apply(decision(post, "facebook", PublishOutcome.pending("ref-1", warnings=(first,)), settings))
    later = TargetWarning("facebook_later", "given with the success")
    assert apply(
        decision(post, "facebook", PublishOutcome.published("x1", None, warnings=(later,)), settings)
    )
    assert target(post, "facebook").warnings == [first.to_dict(), later.to_dict()]
    body = client.get(f"/v1/posts/{post.id}", headers=key_headers(owner.api_key)).json()
    by_platform = {t["platform"]: t for t in body["targets"]}
    assert by_platform["facebook"]["warnings"] == [first.to_dict(), later.to_dict()]
    assert by_platform["linkedin"]["warnings"] == []  # a target without any answers []
    listed = client.get("/v1/posts", headers=key_headers(owner.api_key)).json()["items"]
    (row,) = [p for p in listed if p["id"] == post.id]
    assert {t["platform"]: t["warnings"] for t in row["targets"]}["facebook"] == [
        first.to_dict(),
        later.to_dict(),
    ]


def test_a_target_s_unresolved_attempts_render_no_statement_again(post, settings, monkeypatch):
    """Read at each attempt's start (and when a tracked target is decided): a statement shape (issue 34, ruling 2),
    earliest first, the closed ones left out."""

    fb, li = target(post, "facebook"), target(post, "linkedin")
    _attempt(fb, "att_1")
    _attempt(fb, "att_2")
    _attempt(li, "att_3")
    _attempt(fb, "att_4")
    PublishAttempt.update(finished_at=clock.now()).where(PublishAttempt.id == "att_2").execute()
    unresolved_attempts(li.id)  # rendered once
    monkeypatch.setattr(STEPS, "enabled", True)
    before = STEPS.snapshot()
    assert [a.id for a in unresolved_attempts(fb.id)] == ["att_1", "att_4"]
    assert [a.id for a in unresolved_attempts(li.id)] == ["att_3"]
    after = STEPS.snapshot()
    assert (
        after["rendered_statements"] - before["rendered_statements"],
        after["statements"] - before["statements"],
    ) == (0, 2)
