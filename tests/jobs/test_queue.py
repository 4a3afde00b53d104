"""The durable job queue: enqueue, claim with a lease, reclaim expired leases, retry math, dead jobs, periodic jobs."""

from __future__ import annotations

import random
from datetime import timedelta

import time_machine

from backend import clock, queue
from backend.jobs.registry import HANDLERS
from backend.jobs.worker import Worker
from backend.queue.backoff import PermanentJobError, RetryLater, RetryStrategy
from backend.store.db import STEPS, database, tx
from backend.store.models import Job


def test_claim_only_due_jobs_in_order(settings):
    with tx():
        later = queue.enqueue("t.noop", run_at=clock.now() + timedelta(hours=1))
        first = queue.enqueue("t.noop")
        second = queue.enqueue("t.noop")
    got = queue.claim("w1", limit=10)
    assert [j.id for j in got] == [first.id, second.id]
    assert all(j.status == "running" and j.attempts == 1 and j.locked_by == f"w1/{j.id}" for j in got)
    assert queue.claim("w2", limit=10) == []
    assert Job.get_by_id(later.id).status == "queued"


def test_expired_lease_is_reclaimed_and_fenced(settings):
    with tx():
        queue.enqueue("t.noop")
    (job,) = queue.claim("w1", lease_s=30)
    with time_machine.travel(clock.now() + timedelta(seconds=31), tick=False):
        (again,) = queue.claim("w2", lease_s=30)
        assert again.id == job.id and again.attempts == 2 and again.locked_by == f"w2/{job.id}"
        assert queue.taken_over_from(again) == f"w1/{job.id}"
        assert (
            queue.renew(job, 30) is False
            and queue.retry(job, 0, "x") is False
            and queue.bury(job, "x") is False
        )
        assert queue.complete(job) is False  # the first worker lost its lease: its completion is refused
        assert queue.complete(again) is True


def test_renew_extends_the_lease(settings):
    with tx():
        queue.enqueue("t.noop")
    (job,) = queue.claim("w1", lease_s=30)
    with time_machine.travel(clock.now() + timedelta(seconds=20), tick=False):
        assert queue.renew(job, 30)
    with time_machine.travel(clock.now() + timedelta(seconds=40), tick=False):
        assert queue.claim("w2") == []


def test_retry_strategy_is_bounded_exponential_with_jitter():
    s = RetryStrategy(base_s=10, factor=2, max_attempts=4, jitter=0.5, max_delay_s=1000)
    rng = random.Random(1)
    delays = [s.decide(n, rng=rng).delay_s for n in (1, 2, 3)]
    assert 5 <= delays[0] <= 10 and 10 <= delays[1] <= 20 and 20 <= delays[2] <= 40
    assert s.decide(4).retry is False
    assert s.decide(1, retry_after_s=120).delay_s == 120
    assert RetryStrategy(base_s=10, max_delay_s=15, jitter=0).delay_for(10) == 15


def test_worker_retries_then_buries_with_last_error(settings):
    calls = []

    def flaky(job, ctx):  # type: ignore[no-untyped-def]
        calls.append(job.attempts)
        raise RuntimeError(f"boom {job.attempts}")

    HANDLERS["t.flaky"] = flaky
    try:
        with tx():
            job = queue.enqueue("t.flaky", max_attempts=3)
        settings.retry_base_s = 0
        w = Worker(settings, concurrency=1)
        w.run_until_idle(max_seconds=10, settle_s=1)
        row = Job.get_by_id(job.id)
        assert calls == [1, 2, 3]
        assert row.status == "dead" and "boom 3" in row.last_error
    finally:
        HANDLERS.pop("t.flaky")


def test_worker_handles_retry_later_and_permanent(settings):
    def later(job, ctx):  # type: ignore[no-untyped-def]
        if job.attempts < 2:
            raise RetryLater("not yet", delay_s=0)

    def permanent(job, ctx):  # type: ignore[no-untyped-def]
        raise PermanentJobError("never")

    HANDLERS.update({"t.later": later, "t.perm": permanent})
    try:
        with tx():
            a = queue.enqueue("t.later")
            b = queue.enqueue("t.perm")
        Worker(settings, concurrency=1).run_until_idle(max_seconds=10, settle_s=1)
        assert Job.get_by_id(a.id).status == "done"
        assert (Job.get_by_id(b.id).status, Job.get_by_id(b.id).last_error) == ("dead", "never")
    finally:
        HANDLERS.pop("t.later")
        HANDLERS.pop("t.perm")


def test_buried_job_runs_its_kinds_on_dead_hook(settings):
    from backend.jobs.registry import ON_DEAD

    seen = []

    def fail(job, ctx):  # type: ignore[no-untyped-def]
        raise PermanentJobError("the network said no")

    HANDLERS["t.doomed"] = fail
    ON_DEAD["t.doomed"] = lambda job, error: seen.append((job.id, error))
    try:
        with tx():
            job = queue.enqueue("t.doomed")
        Worker(settings, concurrency=1).run_until_idle(max_seconds=5)
        assert seen == [(job.id, "the network said no")]
        assert Job.get_by_id(job.id).status == "dead"
    finally:
        HANDLERS.pop("t.doomed")
        ON_DEAD.pop("t.doomed")


def test_burying_and_the_on_dead_hook_commit_together(settings):
    """The job turns dead in the same transaction as its hook's writes (a crash between the two cannot leave a
    dead job whose target stays open); a hook that fails is rolled back alone and the job is still buried."""
    from backend.jobs.registry import ON_DEAD

    def fail(job, ctx):  # type: ignore[no-untyped-def]
        raise PermanentJobError("the network said no")

    def hook(job, error):  # type: ignore[no-untyped-def]
        assert database.in_transaction()  # the bury's transaction, not one of its own
        assert Job.get_by_id(job.id).status == "dead"  # seen from inside it
        queue.enqueue("t.cleanup", {"for": job.id})
        if job.payload.get("hook_fails"):
            raise RuntimeError("hook bug")

    HANDLERS["t.doomed2"] = fail
    ON_DEAD["t.doomed2"] = hook
    try:
        with tx():
            ok = queue.enqueue("t.doomed2")
            bad = queue.enqueue("t.doomed2", {"hook_fails": True})
        Worker(settings, concurrency=1).tick()
        assert {Job.get_by_id(ok.id).status, Job.get_by_id(bad.id).status} == {"dead"}
        cleanups = [j.payload["for"] for j in Job.select().where(Job.kind == "t.cleanup")]
        assert cleanups == [ok.id]  # the failing hook's write was rolled back with its savepoint
    finally:
        HANDLERS.pop("t.doomed2")
        ON_DEAD.pop("t.doomed2")


def test_retry_waits_the_backoff(settings):
    """A failed attempt is queued again after the strategy's delay (not at once), with its error kept."""

    def boom(job, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("network down")

    HANDLERS["t.boom"] = boom
    try:
        with tx():
            job = queue.enqueue("t.boom", max_attempts=5)
        settings.retry_base_s = 60
        before = clock.now()
        Worker(settings, concurrency=1).run_until_idle(max_seconds=5)
        row = Job.get_by_id(job.id)
        assert row.status == "queued" and row.attempts == 1 and "network down" in row.last_error
        assert before + timedelta(seconds=29) <= row.run_at <= clock.now() + timedelta(seconds=61)
    finally:
        HANDLERS.pop("t.boom")


def test_unknown_kind_is_buried_not_lost(settings):
    with tx():
        job = queue.enqueue("t.unknown-kind")
    Worker(settings, concurrency=1).run_until_idle(max_seconds=5)
    row = Job.get_by_id(job.id)
    assert row.status == "dead" and "no handler" in row.last_error


def test_periodic_jobs_are_rescheduled(settings):
    w = Worker(settings, concurrency=1)
    w.run_until_idle(max_seconds=5)
    row = Job.get(Job.dedupe_key == "periodic:housekeeping.prune")
    assert row.status == "queued" and row.run_at > clock.now() + timedelta(seconds=200)


def test_next_changes_in_ignores_what_is_claimable_already(settings):
    """The worker's watcher sleeps until the next job that is not claimable yet becomes so: a due job (someone was
    woken for it) does not make it spin; the next future run_at or lease expiry does count, with the job's lane.
    The leases of the asking worker's own jobs are not changes (its heartbeat renews them)."""
    now = clock.now()
    with tx():
        queue.enqueue("t.noop", run_at=now - timedelta(seconds=1))
        queue.enqueue("t.noop", run_at=now + timedelta(seconds=30), lane="youtube")
    assert queue.next_due_in() == 0
    assert [(25 < c.in_s <= 30, c.lane) for c in queue.next_changes_in("w2")] == [(True, "youtube")]
    queue.claim("w1#1", lease_s=5)  # the due one: its lease expires in 5 s
    assert [(0 < c.in_s <= 5, c.lane) for c in queue.next_changes_in("w2")] == [(True, None)]
    assert [25 < c.in_s <= 30 for c in queue.next_changes_in("w1")] == [True]  # its own lease: not a change
    with tx():
        queue.enqueue("t.noop", run_at=now + timedelta(seconds=10))
    # several at once, ascending: the lease's expiry, then the due times
    changes = [c.in_s for c in queue.next_changes_in("w2", limit=5)]
    assert len(changes) == 3 and changes == sorted(changes)
    assert 0 < changes[0] <= 5 and 5 < changes[1] <= 10 and 25 < changes[2] <= 30


def test_the_heartbeat_renews_every_listed_running_claim_rendering_no_statement_again(settings, monkeypatch):
    """renew_all is one statement shape per power of two of claims (issue 34, ruling 2): it extends the lease of
    each running job held by a listed claim, none other, and once rendered for a number of claims renders nothing
    again."""
    monkeypatch.setattr(STEPS, "enabled", True)
    with tx():
        for _ in range(4):
            queue.enqueue("t.noop")
    jobs = [queue.claim(f"w{i}", limit=1, lease_s=30)[0] for i in range(4)]
    assert queue.complete(jobs[3])  # done: not renewed although listed
    later = clock.now() + timedelta(seconds=20)
    with time_machine.travel(later, tick=False):
        lock = [j.locked_by for j in jobs]
        renewed = queue.renew_all([lock[0], lock[2], lock[3]], 60)  # three claims: the shape of four
        before = STEPS.snapshot()
        assert queue.renew_all([lock[2], lock[0], lock[3], "w9"], 60) == renewed == {jobs[0].id, jobs[2].id}
        after = STEPS.snapshot()
    steps = {k: after[k] - before[k] for k in after}
    assert (steps["statements"], steps["rendered_statements"], steps["once_rendered_statements"]) == (1, 0, 1)
    leases = {j.id: Job.get_by_id(j.id).lease_until for j in jobs}
    assert leases[jobs[0].id] == leases[jobs[2].id] == later + timedelta(seconds=60)
    assert leases[jobs[1].id] == jobs[1].lease_until and leases[jobs[3].id] is None
    assert queue.renew_all([], 60) == set()
