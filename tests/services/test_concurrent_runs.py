"""Review of the engine (issue 12): two runs of one target's job at once (the first run's lease lost mid-call,
the job claimed again), and asynchronous processing that keeps failing. Never publish twice, never leave a
target open for ever."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.networks.base import NetworkError, PublishOutcome
from backend.queue.backoff import RetryLater
from backend.services import adapters, publishing
from backend.store.models import Job, Post, PostTarget, PublishAttempt
from tests.services.test_publishing import create, read, run_through


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    """As tests/services/test_publishing.py's: no rate limit, immediate retries, a paid plan."""
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    settings.retry_max_attempts = 3
    return settings


@pytest.fixture
def sandbox(settings, owner, fast):  # type: ignore[no-untyped-def]
    from backend.services import accounts

    return accounts.connect_sandbox_defaults(settings, owner.workspace_id)


class Killed(BaseException):
    """Like SIGKILL of the process running that call (nothing after it runs)."""


def _fan_out(client, owner, content: str) -> tuple[Job, PostTarget]:  # type: ignore[no-untyped-def]
    """A facebook post whose post job has run: its target.publish job is queued."""
    post = create(client, owner, targets=["facebook"], content=content)
    publishing.start_post(Job.get(Job.kind == "post.publish"), client.app.state.settings)
    target = PostTarget.get(PostTarget.post == post["id"])
    return Job.get(Job.dedupe_key == f"target:{target.id}"), target


def test_a_stale_run_does_not_publish_again_a_target_the_network_accepted(
    client, owner, sandbox, fast, monkeypatch
):
    """Run 1 read the target, then (its lease lost) run 2 of the same job published it and the network
    accepted it for processing (tracking). Run 1 must not call the network again."""
    job, target = _fan_out(client, owner, "accepted once")
    calls: list[str] = []

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            calls.append("publish")
            return PublishOutcome.pending("ref-1", network_status="PROCESSING")

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    other_ran: list[bool] = []

    def adapter_for(account, settings):  # type: ignore[no-untyped-def]
        if not other_ran:  # run 1 has read the target; run 2 goes first, to its end
            other_ran.append(True)
            publishing.publish_target(job, settings)
        return Net()

    monkeypatch.setattr(adapters, "adapter_for", adapter_for)
    publishing.publish_target(job, fast)
    assert calls == ["publish"]
    t = PostTarget.get_by_id(target.id)
    assert t.status == "publishing" and t.tracking_ref == "ref-1"
    assert Job.select().where(Job.dedupe_key == f"track:{t.id}").exists()


def test_a_stale_run_waits_for_the_networks_retry_after(client, owner, sandbox, fast, monkeypatch):
    """Run 2 of the job got the network's Retry-After (a daily cap): the target waits `pending` until then.
    Run 1, which read the target before, must not call the network before that time either."""
    job, target = _fan_out(client, owner, "capped")
    calls: list[str] = []

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            calls.append("publish")
            return PublishOutcome.failed("retriable", "daily cap reached", retry_after_s=3600)

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    other_ran: list[bool] = []

    def adapter_for(account, settings):  # type: ignore[no-untyped-def]
        if not other_ran:
            other_ran.append(True)
            with pytest.raises(RetryLater):
                publishing.publish_target(job, settings)
        return Net()

    monkeypatch.setattr(adapters, "adapter_for", adapter_for)
    with pytest.raises(RetryLater) as waited:
        publishing.publish_target(job, fast)
    assert calls == ["publish"]
    assert waited.value.delay_s is not None and waited.value.delay_s > 3000
    t = PostTarget.get_by_id(target.id)
    assert t.status == "pending" and t.next_attempt_at > clock.now() + timedelta(seconds=3000)


def test_an_outcome_closes_only_the_attempts_before_its_own(client, owner, sandbox, fast, monkeypatch):
    """Run 1's call is in flight; run 2 of the same job (run 1's lease lost) starts its own attempt, its call
    reaches the network, and its process dies. Run 1's outcome (a retriable failure) must not close run 2's
    attempt as if reconciled: the next run asks the network first and finds run 2's publication."""
    job, target = _fan_out(client, owner, "two runs")
    at_network: list[PublishOutcome] = []
    calls: list[int] = []

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            calls.append(1)
            if len(calls) == 1:  # run 1, in flight: run 2 runs meanwhile and dies after its call
                with pytest.raises(Killed):
                    publishing.publish_target(job, fast)
                return PublishOutcome.failed("retriable", "busy, try again")
            at_network.append(
                PublishOutcome.published(f"fb-{len(calls)}", f"https://fb.example/{len(calls)}")
            )
            if len(calls) == 2:
                raise Killed()
            return at_network[-1]

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return at_network[0] if at_network else None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    with pytest.raises(RetryLater):
        publishing.publish_target(job, fast)
    assert len(at_network) == 1
    assert (
        PublishAttempt.select()
        .where(PublishAttempt.target == target.id, PublishAttempt.finished_at.is_null())
        .count()
        == 1
    )  # run 2's
    with time_machine.travel(clock.now() + timedelta(hours=1), tick=False):
        publishing.publish_target(job, fast)  # run 3
    assert len(at_network) == 1  # never published twice
    t = PostTarget.get_by_id(target.id)
    assert t.status == "succeeded" and t.external_post_id == "fb-2"
    assert Post.get_by_id(t.post_id).status == "completed"


def test_processing_that_keeps_failing_ends_the_target(client, owner, sandbox, fast, monkeypatch):
    """The network accepted the post, then every status check answers a retriable failure: the checks are
    bounded (the job's attempts), the target ends `failed` and its post settles; never `pending` for ever."""
    job, target = _fan_out(client, owner, "processing fails")
    checks: list[int] = []

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            return PublishOutcome.pending("ref-9", network_status="PROCESSING")

        def check_status(self, pub, ref):  # type: ignore[no-untyped-def]
            checks.append(1)
            return PublishOutcome.failed(
                "retriable",
                "the network had an internal error; it will be retried",
                tracking_ref=ref,
                retry_after_s=60,
            )

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    run_through(fast, steps=2 * fast.retry_max_attempts + 2, step=timedelta(minutes=10))
    t = PostTarget.get_by_id(target.id)
    assert t.status == "failed" and t.fail_type == "retriable", (t.status, len(checks))
    assert len(checks) <= fast.retry_max_attempts + 1
    assert read(client, owner, t.post_id)["status"] == "failed"


def test_an_attempt_that_could_not_ask_the_network_locks_post_then_target(
    client, owner, sandbox, fast, monkeypatch
):
    """Lock order (post row, then target row, everywhere): the attempt that could not ask the network about an
    earlier one (connection error) and sets its target waiting takes the post's and the target's locks before
    it writes; otherwise, on PostgreSQL, it holds its attempt's row while waiting for the target's, against an
    outcome of another run that holds post and target and closes that attempt: a deadlock."""
    import importlib

    import httpx

    from backend.services.publishing import engine
    from backend.store.db import database

    apply_module = importlib.import_module("backend.services.publishing.apply")
    job, target = _fan_out(client, owner, "unreachable check")

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            raise Killed()  # the first run dies mid-call: its attempt stays unresolved

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            raise httpx.ConnectError("down")

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    with pytest.raises(Killed):
        publishing.publish_target(job, fast)

    seen: list[str] = []
    inside: list[bool] = []
    real = apply_module.lock_target
    monkeypatch.setattr(
        apply_module,
        "lock_target",
        lambda p, t, *c: (seen.append("post+target") if inside else None, real(p, t, *c))[1],
    )
    real_execute = database.obj.execute_sql
    lock_reads: list[str] = []

    def execute_sql(sql, params=None):  # type: ignore[no-untyped-def]
        if inside and sql.lstrip().upper().startswith("UPDATE"):
            seen.append("write")
        if inside and 'JOIN "post_target"' in sql:
            lock_reads.append(sql)
        return real_execute(sql, params)

    monkeypatch.setattr(database.obj, "execute_sql", execute_sql)
    real_apply = engine.apply

    def close(*a, **kw):  # type: ignore[no-untyped-def]
        inside.append(True)
        try:
            return real_apply(*a, **kw)
        finally:
            inside.clear()

    monkeypatch.setattr(engine, "apply", close)  # the waiting target's decision (decide.unreached) applied
    with pytest.raises(RetryLater):
        publishing.publish_target(job, fast)
    assert seen[:1] == ["post+target"] and "write" in seen, seen
    # one statement locks both rows, the post's first (PostgreSQL locks a FOR UPDATE join's rows in FROM order)
    assert lock_reads and ' FROM "post" AS "t1" INNER JOIN "post_target" AS "t2"' in lock_reads[0], lock_reads
    t = PostTarget.get_by_id(target.id)
    assert t.status == "pending" and t.next_attempt_at is not None
    assert (
        PublishAttempt.select()
        .where(PublishAttempt.target == target.id, PublishAttempt.finished_at.is_null())
        .count()
        == 1
    )


def test_a_tracked_target_whose_job_dies_says_it_may_have_been_published(
    client, owner, sandbox, fast, monkeypatch
):
    """The network accepted the post (processing), then every status check fails on the connection until the
    track job dies: the target fails, and its failReason must not invite a blind retry (the network has the
    post and may publish it): it says it may have been published and to check first."""
    import httpx

    job, target = _fan_out(client, owner, "accepted, then unreachable")

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            return PublishOutcome.pending("ref-7", network_status="PROCESSING")

        def check_status(self, pub, ref):  # type: ignore[no-untyped-def]
            raise httpx.ConnectError("down")

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    run_through(fast, steps=2 * fast.retry_max_attempts + 2, step=timedelta(minutes=10))
    t = PostTarget.get_by_id(target.id)
    assert t.status == "failed" and t.fail_type == "retriable"
    assert "may have been published" in t.fail_reason and "check the" in t.fail_reason.lower(), t.fail_reason
    assert read(client, owner, t.post_id)["status"] == "failed"


def test_processing_failures_giving_up_say_to_check_the_account(client, owner, sandbox, fast, monkeypatch):
    """Status checks of an accepted post answering retriable failures (a status endpoint timing out, say) until
    the attempts run out: the target fails, saying to check the account before retrying (the network accepted
    the post and may still publish it), not that a retry may simply succeed."""
    job, target = _fan_out(client, owner, "accepted, then status errors")

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            return PublishOutcome.pending("ref-8", network_status="PROCESSING")

        def check_status(self, pub, ref):  # type: ignore[no-untyped-def]
            return PublishOutcome.failed(
                "retriable",
                "facebook did not answer in time; it will be retried",
                tracking_ref=ref,
                network_code="timeout",
                retry_after_s=60,
            )

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    run_through(fast, steps=2 * fast.retry_max_attempts + 2, step=timedelta(minutes=10))
    t = PostTarget.get_by_id(target.id)
    assert t.status == "failed" and t.fail_type == "retriable"
    assert "check the" in t.fail_reason.lower(), t.fail_reason


def test_an_attempt_starts_when_it_holds_the_target_lock(client, owner, sandbox, fast, monkeypatch):
    """An attempt's started_at orders it among the target's attempts (an outcome closes the unresolved ones
    started before its own): it is taken once the post and target locks are held, not before waiting for
    them (on SQLite, seconds behind other writers), else a run that waited could record a start earlier than
    an attempt recorded before it, and see it closed by that attempt's outcome without being reconciled."""
    from backend.services.publishing import engine

    job, target = _fan_out(client, owner, "lock wait")

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            return PublishOutcome.published("fb-1", "https://fb.example/1")

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    with time_machine.travel(clock.now(), tick=False) as traveller:
        real_lock = engine.lock_target

        def slow_lock(post_id, target_id, *columns):  # type: ignore[no-untyped-def]
            traveller.shift(timedelta(seconds=5))  # waiting for another writer's lock
            return real_lock(post_id, target_id, *columns)

        monkeypatch.setattr(engine, "lock_target", slow_lock)
        locked_at = clock.now() + timedelta(seconds=5)
        publishing.publish_target(job, fast)
    (attempt,) = PublishAttempt.select().where(PublishAttempt.target == target.id)
    assert attempt.started_at >= locked_at


def test_a_status_check_failure_that_waits_is_logged_with_its_ids(
    client, owner, sandbox, fast, monkeypatch, caplog
):
    """Every re-attempt logs at INFO or WARNING with the post, target and account ids: a status check answered
    with a retriable failure, checked again later, too."""
    import logging

    job, target = _fan_out(client, owner, "status check fails once")
    answers = [
        PublishOutcome.failed("retriable", "the network had a hiccup", retry_after_s=60),
        PublishOutcome.published("fb-3", "https://fb.example/3"),
    ]

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            return PublishOutcome.pending("ref-3", network_status="PROCESSING")

        def check_status(self, pub, ref):  # type: ignore[no-untyped-def]
            return answers.pop(0)

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    caplog.set_level(logging.INFO, logger="socialpub.engine")
    run_through(fast, steps=3, step=timedelta(minutes=10))
    t = PostTarget.get_by_id(target.id)
    assert t.status == "succeeded"
    assert any(
        r.levelno >= logging.INFO
        and target.id in r.getMessage()
        and t.post_id in r.getMessage()
        and t.account_id in r.getMessage()
        and "hiccup" in r.getMessage()
        for r in caplog.records
    )


def test_an_interrupted_target_whose_account_is_no_longer_active_says_it_may_be_published(
    client, owner, sandbox, fast, monkeypatch
):
    """An attempt's call timed out (its outcome unknown), then the account needs reauthorisation before the
    next try: the target fails `permanent`, and its failReason must not tell the user to simply create the
    post again: the earlier call may have published it."""
    import httpx

    from backend.store.models import Account

    job, target = _fan_out(client, owner, "timeout then reauth")

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            raise httpx.ReadTimeout("the answer was lost")

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    with pytest.raises(RetryLater):
        publishing.publish_target(job, fast)
    assert PostTarget.get_by_id(target.id).status == "pending"
    Account.update(status="needs_reauth").where(Account.id == target.account_id).execute()
    with time_machine.travel(clock.now() + timedelta(hours=1), tick=False):
        publishing.publish_target(job, fast)
    t = PostTarget.get_by_id(target.id)
    assert t.status == "failed"
    assert "may have been published" in t.fail_reason and "check the" in t.fail_reason.lower(), t.fail_reason


def test_a_tracked_publishing_call_left_without_outcome_is_reconciled_by_what_the_network_holds_of_it(
    client, owner, sandbox, fast, monkeypatch
):
    """The network said the publication was ready to publish (a container FINISHED), and the publishing call made
    as an attempt ended without an outcome (a timeout after sending): the next run asks the network about that
    very publication — find_existing gets its tracking ref as `resume` (the Instagram container whose status
    tells whether it was published) —, not only the account's listing, which cannot tell two posts of one caption
    apart."""
    job, target = _fan_out(client, owner, "ready, then a timeout")
    asked: list[str | None] = []
    calls: list[str] = []

    class Net:
        def publish(self, pub):  # type: ignore[no-untyped-def]
            return PublishOutcome.pending('{"container": "C1"}', network_status="IN_PROGRESS")

        def check_status(self, pub, ref):  # type: ignore[no-untyped-def]
            return PublishOutcome.ready(ref, network_status="FINISHED")

        def complete(self, pub, ref):  # type: ignore[no-untyped-def]
            calls.append(ref)
            if len(calls) == 1:
                raise NetworkError("retriable", "timed out", code="timeout", ambiguous=True)
            return PublishOutcome.published("M1", "https://x.example/M1", tracking_ref=ref)

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            asked.append(pub.resume)
            return None  # the container was not published: the call did not go through

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: Net())
    run_through(fast, steps=12, step=timedelta(minutes=2))
    t = PostTarget.get_by_id(target.id)
    assert asked and asked[0] == '{"container": "C1"}', asked
    assert t.status == "succeeded" and t.external_post_id == "M1" and len(calls) == 2
