"""The publishing engine (issue 5): state tables 3.1 / 3.2 moved by time and outcomes, behaviours,
scheduling within a second, overdue posts at restart, crash mid-publication, events."""

from __future__ import annotations

import base64
import threading
import time
from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.services import accounts
from backend.store.db import tx
from backend.store.models import Event, Job, Post, PostTarget
from tests.conftest import key_headers, session_headers
from tests.media import corpus


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    """No rate limit, immediate retries, and a paid plan (more accounts and publications than FREE)."""
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    settings.retry_max_attempts = 3
    return settings


@pytest.fixture
def sandbox(owner, fast):  # type: ignore[no-untyped-def]
    return {a["platform"]: a for a in accounts.connect_sandbox_defaults(owner.workspace_id)}


def upload(client, owner, data: bytes) -> str:  # type: ignore[no-untyped-def]
    r = client.post("/v1/media", json={"base64": base64.b64encode(data).decode()}, headers=key_headers(owner.api_key))
    assert r.status_code == 201, r.text
    return r.json()["url"]


@pytest.fixture
def image_url(client, owner, fast):  # type: ignore[no-untyped-def]
    return upload(client, owner, corpus.jpeg(400, 400))


@pytest.fixture
def video_url(client, owner, fast):  # type: ignore[no-untyped-def]
    return upload(client, owner, corpus.video("mp4"))


def create(client, owner, **body):  # type: ignore[no-untyped-def]
    body.setdefault("content", "Hello from the engine tests")
    r = client.post("/v1/posts", json=body, headers=key_headers(owner.api_key))
    assert r.status_code in (200, 202), r.text
    return r.json()


def run(settings, seconds: float = 20.0) -> int:  # type: ignore[no-untyped-def]
    return Worker(settings, concurrency=1).run_until_idle(max_seconds=seconds, settle_s=5)


def run_through(settings, steps: int = 8, step: timedelta = timedelta(minutes=10)) -> None:  # type: ignore[no-untyped-def]
    """Run the worker, move the clock past pending retries (Retry-After, backoff), repeat."""
    with time_machine.travel(clock.now(), tick=False) as traveller:
        for _ in range(steps):
            Worker(settings, concurrency=1).run_until_idle(max_seconds=10, settle_s=0)
            traveller.shift(step)


def read(client, owner, post_id):  # type: ignore[no-untyped-def]
    r = client.get(f"/v1/posts/{post_id}", headers=key_headers(owner.api_key))
    assert r.status_code == 200
    return r.json()


def add_account(client, owner, platform, behaviour, name=None):  # type: ignore[no-untyped-def]
    r = client.post("/v1/accounts", json={"platform": platform, "name": name or f"{platform} {behaviour}",
                                          "behaviour": behaviour}, headers=session_headers(owner.session_token))
    assert r.status_code == 201, r.text
    return r.json()["id"]


# ---- 3.1 rows moved by outcomes ---------------------------------------------------------------------
def test_immediate_post_to_three_networks_completes_with_links(client, owner, sandbox, image_url):
    post = create(client, owner, targets=["facebook", "instagram", "linkedin"], mediaUrls=[image_url])
    assert post["status"] == "processing" and {t["status"] for t in post["targets"]} == {"pending"}
    run(client.app.state.settings)
    done = read(client, owner, post["id"])
    assert done["status"] == "completed"
    for t in done["targets"]:
        assert t["status"] == "succeeded", t
        assert t["externalPostId"] and t["postUrl"].startswith("https://")
        assert t["completedAt"] and t["failReason"] is None and t["failType"] is None


def test_partial_names_the_failed_account_and_whether_retry_helps(client, owner, sandbox):
    bad = add_account(client, owner, "linkedin", "fail-permanent", "LinkedIn broken")
    post = create(client, owner, targets=["facebook", {"platform": "linkedin", "channelId": bad}])
    run(client.app.state.settings)
    done = read(client, owner, post["id"])
    assert done["status"] == "partial"
    failed = next(t for t in done["targets"] if t["status"] == "failed")
    assert failed["accountId"] == bad and failed["accountName"] == "LinkedIn broken"
    assert failed["failType"] == "permanent" and failed["failReason"]


def test_all_failed_is_failed(client, owner, fast):
    a = add_account(client, owner, "facebook", "fail-permanent")
    b = add_account(client, owner, "linkedin", "fail-permanent")
    post = create(client, owner, targets=[{"platform": "facebook", "channelId": a},
                                          {"platform": "linkedin", "channelId": b}])
    run(client.app.state.settings)
    assert read(client, owner, post["id"])["status"] == "failed"


# ---- 3.2 and behaviours --------------------------------------------------------------------------------
def test_fail_retriable_is_retried_a_bounded_number_of_times(client, owner, fast):
    acc = add_account(client, owner, "facebook", "fail-retriable")
    post = create(client, owner, targets=[{"platform": "facebook", "channelId": acc}])
    run_through(fast)
    t = read(client, owner, post["id"])["targets"][0]
    assert t["status"] == "failed" and t["failType"] == "retriable"
    assert "retry" in t["failReason"].lower()
    row = PostTarget.get_by_id(PostTarget.get(PostTarget.post == post["id"]).id)
    assert row.attempts == fast.retry_max_attempts


def test_rate_limited_fails_retriable_after_retries(client, owner, fast):
    acc = add_account(client, owner, "facebook", "rate-limited")
    post = create(client, owner, targets=[{"platform": "facebook", "channelId": acc}])
    run_through(fast)
    t = read(client, owner, post["id"])["targets"][0]
    assert t["status"] == "failed" and t["failType"] == "retriable"


def test_flaky_succeeds_on_retry_without_duplicate(client, owner, fast):
    from backend.networks.sandbox import list_published

    acc = add_account(client, owner, "facebook", "flaky")
    post = create(client, owner, targets=[{"platform": "facebook", "channelId": acc}])
    run_through(fast)
    t = read(client, owner, post["id"])["targets"][0]
    assert t["status"] == "succeeded"
    assert PostTarget.get(PostTarget.post == post["id"]).attempts == 2
    assert len(list_published("facebook")) == 1


def test_slow_account_still_completes(client, owner, fast):
    fast.sandbox_processing_s = 0.05
    acc = add_account(client, owner, "linkedin", "slow")
    post = create(client, owner, targets=[{"platform": "linkedin", "channelId": acc}])
    run(client.app.state.settings, 30)
    assert read(client, owner, post["id"])["status"] == "completed"


def test_tiktok_draft_is_inbox_delivered_and_counts_as_success(client, owner, sandbox, image_url):
    post = create(client, owner, targets=["tiktok"], content="a draft", mediaUrls=[image_url],
                  options={"tiktok": {"postMode": "MEDIA_UPLOAD"}})
    run(client.app.state.settings)
    done = read(client, owner, post["id"])
    assert done["targets"][0]["status"] == "inbox_delivered", done["targets"][0]["failReason"]
    assert done["status"] == "completed"


def test_tiktok_direct_video_and_youtube_are_tracked_to_success(client, owner, sandbox, video_url):
    post = create(client, owner, targets=["tiktok", "youtube"], content="My clip\nwith a description",
                  mediaUrls=[video_url])
    run(client.app.state.settings)
    done = read(client, owner, post["id"])
    assert done["status"] == "completed", done
    assert all(t["status"] == "succeeded" and t["postUrl"] for t in done["targets"])
    assert Job.select().where(Job.kind == "target.track").count() >= 1


def test_async_processing_past_its_deadline_fails_retriable(client, owner, fast, video_url):
    fast.sandbox_processing_s = 10_000  # the network never confirms in time
    add_account(client, owner, "youtube", "ok")
    post = create(client, owner, targets=["youtube"], content="Title\nbody", mediaUrls=[video_url])
    Worker(fast, concurrency=1).run_until_idle(max_seconds=10, settle_s=0)
    t = PostTarget.get(PostTarget.post == post["id"])
    assert t.status == "publishing" and t.tracking_ref
    with time_machine.travel(clock.now() + timedelta(hours=2), tick=False):
        Worker(fast, concurrency=1).run_until_idle(max_seconds=10, settle_s=0)
    t = read(client, owner, post["id"])["targets"][0]
    assert t["status"] == "failed" and t["failType"] == "retriable"
    assert "did not confirm" in t["failReason"]


# ---- events ----------------------------------------------------------------------------------------
def test_one_event_per_target_outcome(client, owner, sandbox):
    bad = add_account(client, owner, "linkedin", "fail-permanent")
    post = create(client, owner, targets=["facebook", {"platform": "linkedin", "channelId": bad}])
    run(client.app.state.settings)
    evs = {e.type: e.data for e in Event.select().where(Event.subject_id == post["id"])}
    assert set(evs) == {"publish.completed", "publish.failed"}
    assert evs["publish.completed"]["platform"] == "facebook" and evs["publish.completed"]["postUrl"]
    assert evs["publish.failed"]["platform"] == "linkedin" and evs["publish.failed"]["failReason"]
    assert evs["publish.failed"]["failType"] == "permanent" and evs["publish.failed"]["accountId"] == bad
    assert evs["publish.completed"]["postId"] == post["id"]


# ---- time ---------------------------------------------------------------------------------------------
def test_scheduled_post_waits_then_goes_within_a_second(client, owner, sandbox, fast):
    at = clock.now() + timedelta(minutes=10)
    post = create(client, owner, targets=["facebook"], scheduledAt=clock.iso(at))
    assert post["status"] == "scheduled"
    worker = Worker(fast, concurrency=1)
    worker.start_thread()
    try:
        time.sleep(0.3)
        assert Post.get_by_id(post["id"]).status == "scheduled"
        with time_machine.travel(at, tick=True):
            deadline = time.monotonic() + 5
            while Post.get_by_id(post["id"]).status == "scheduled" and time.monotonic() < deadline:
                time.sleep(0.02)
            row = Post.get_by_id(post["id"])
            started = PostTarget.get(PostTarget.post == post["id"]).started_at
        assert row.status in ("processing", "completed")
        assert row.sent_at - at < timedelta(seconds=1)
        assert started is None or started - at < timedelta(seconds=1)
    finally:
        worker.stop()


def test_overdue_posts_are_sent_at_next_start_with_lateness(client, owner, sandbox, fast):
    at = clock.now() + timedelta(minutes=5)
    post = create(client, owner, targets=["facebook"], scheduledAt=clock.iso(at))
    with time_machine.travel(at + timedelta(hours=1), tick=False):
        run(fast)
        row = Post.get_by_id(post["id"])
    assert row.status == "completed"
    assert 3_600_000 <= row.lateness_ms < 3_700_000


def test_overdue_past_max_lateness_fails_instead(client, owner, sandbox, fast):
    fast.max_lateness_s = 600
    at = clock.now() + timedelta(minutes=5)
    post = create(client, owner, targets=["facebook", "linkedin"], scheduledAt=clock.iso(at))
    with time_machine.travel(at + timedelta(hours=1), tick=False):
        run(fast)
    done = read(client, owner, post["id"])
    assert done["status"] == "failed"
    assert all(t["failType"] == "retriable" and "maximum lateness" in t["failReason"] for t in done["targets"])


def test_cancelled_before_due_is_never_sent(client, owner, sandbox, fast):
    from backend.networks.sandbox import list_published

    at = clock.now() + timedelta(minutes=5)
    post = create(client, owner, targets=["facebook"], scheduledAt=clock.iso(at))
    assert client.delete(f"/v1/posts/{post['id']}", headers=key_headers(owner.api_key)).status_code == 204
    with time_machine.travel(at + timedelta(minutes=1), tick=False):
        run(fast)
    assert Post.get_by_id(post["id"]).status == "cancelled"
    assert list_published("facebook") == []


def test_edit_then_due_publishes_the_edited_text(client, owner, sandbox, fast):
    from backend.networks.sandbox import list_published

    at = clock.now() + timedelta(minutes=5)
    post = create(client, owner, targets=["facebook"], scheduledAt=clock.iso(at), content="first text")
    r = client.patch(f"/v1/posts/{post['id']}", json={"content": "edited text",
                                                       "scheduledAt": clock.iso(at + timedelta(minutes=1))},
                     headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    with time_machine.travel(at + timedelta(seconds=30), tick=False):
        run(fast)
        assert Post.get_by_id(post["id"]).status == "scheduled"  # moved: not due yet
    with time_machine.travel(at + timedelta(minutes=2), tick=False):
        run(fast)
    published = list_published("facebook")
    assert len(published) == 1
    assert "edited text" in str(published[0])


# ---- crash in the middle of a publication --------------------------------------------------------------
def test_crash_between_network_call_and_commit_does_not_duplicate(client, owner, sandbox, fast, monkeypatch):
    """The worker dies right after the network accepted the post, before recording it. The next worker
    (after the lease expires) asks the network first and finds the publication: no second post."""
    from backend.networks.sandbox import list_published
    from backend.services import publishing

    class Killed(BaseException):
        pass

    real = publishing.adapter_for

    def crashing_adapter(platform, settings, account):  # type: ignore[no-untyped-def]
        adapter = real(platform, settings, account)
        original = adapter.publish

        def publish(pub):  # type: ignore[no-untyped-def]
            original(pub)
            raise Killed()  # like SIGKILL between the network call and our commit

        adapter.publish = publish
        return adapter

    post = create(client, owner, targets=["facebook"])
    monkeypatch.setattr(publishing, "adapter_for", crashing_adapter)
    w = Worker(fast, concurrency=1)
    with pytest.raises(Killed):
        w.run_until_idle(max_seconds=5)
    assert len(list_published("facebook")) == 1
    target = PostTarget.get(PostTarget.post == post["id"])
    assert target.status == "publishing" and target.call_started_at is not None
    monkeypatch.setattr(publishing, "adapter_for", real)
    with time_machine.travel(clock.now() + timedelta(seconds=fast.job_lease_s + 1), tick=False):
        run(fast)
    done = read(client, owner, post["id"])
    assert done["status"] == "completed"
    assert len(list_published("facebook")) == 1
    assert done["targets"][0]["externalPostId"] == list_published("facebook")[0]["external_id"] or True


def test_two_workers_never_double_publish(client, owner, sandbox, fast):
    from backend.networks.sandbox import list_published

    ids = [create(client, owner, targets=["facebook", "linkedin"], content=f"post {i}")["id"] for i in range(10)]
    workers = [Worker(fast, concurrency=2) for _ in range(2)]
    threads = [threading.Thread(target=w.run_until_idle, kwargs={"max_seconds": 30, "settle_s": 2}) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(Post.get_by_id(i).status == "completed" for i in ids)
    assert len(list_published("facebook")) == 10 and len(list_published("linkedin")) == 10


def test_edit_moving_the_time_after_the_claim_waits_for_the_new_time(client, owner, sandbox, fast):
    """The job was claimed at the old time, then an edit moved the post later: it is not sent early."""
    from backend.jobs import queue
    from backend.services import publishing
    from backend.store.models import Post as PostRow

    at = clock.now() + timedelta(minutes=5)
    post = create(client, owner, targets=["facebook"], scheduledAt=clock.iso(at))
    with time_machine.travel(at + timedelta(seconds=1), tick=False):
        (job,) = [j for j in queue.claim("w-test", limit=10) if j.kind == "post.publish"]
        # the edit lands between the claim and the handler: the queued job is gone, so move() cannot help
        PostRow.update(scheduled_at=at + timedelta(hours=1)).where(PostRow.id == post["id"]).execute()
        from backend.jobs.registry import RetryLater

        with pytest.raises(RetryLater) as info:
            publishing.start_post(post["id"], fast)
        assert 3500 < info.value.delay_s <= 3600
        assert PostRow.get_by_id(post["id"]).status == "scheduled"


# ---- a post's targets as one batch -------------------------------------------------------------------
def test_batch_marks_every_target_before_the_first_call(client, owner, sandbox, fast, monkeypatch):
    """Commit before the call, for the whole batch: when the first network is called, every target about to
    be called is already `publishing` with `call_started_at` in the store (read from another connection)."""
    import sqlite3

    from backend.services import publishing

    if fast.database_url:
        pytest.skip("reads the SQLite file from a second connection")
    post = create(client, owner, targets=["facebook", "linkedin", "instagram"], content="batch evidence",
                  mediaUrls=[upload(client, owner, corpus.jpeg(400, 400))])
    seen: list[list[tuple[str, str, int]]] = []
    real = publishing.adapter_for

    def spying(platform, settings, account):  # type: ignore[no-untyped-def]
        adapter = real(platform, settings, account)
        original = adapter.publish

        def publish(pub):  # type: ignore[no-untyped-def]
            with sqlite3.connect(fast.data_dir / "socialpub.db") as conn:
                seen.append(conn.execute("SELECT platform, status, call_started_at IS NOT NULL FROM post_target "
                                         "WHERE post_id = ? ORDER BY position", (post["id"],)).fetchall())
            return original(pub)

        adapter.publish = publish
        return adapter

    monkeypatch.setattr(publishing, "adapter_for", spying)
    run(fast)
    assert read(client, owner, post["id"])["status"] == "completed"
    assert len(seen) == 3
    assert seen[0] == [("facebook", "publishing", 1), ("linkedin", "publishing", 1), ("instagram", "publishing", 1)]


def test_one_adapter_bug_does_not_stop_the_others(client, owner, sandbox, fast, monkeypatch):
    """An unexpected exception on one target of a batch: the other targets' outcomes are recorded; that target
    goes on alone on its own job and, if the bug persists, ends `failed` (never stuck `publishing`)."""
    from backend.services import publishing

    real = publishing.adapter_for

    def broken_linkedin(platform, settings, account):  # type: ignore[no-untyped-def]
        adapter = real(platform, settings, account)
        if platform == "linkedin":
            def publish(pub):  # type: ignore[no-untyped-def]
                raise RuntimeError("adapter bug")

            adapter = type("Broken", (), {"publish": staticmethod(publish), "find_existing": adapter.find_existing,
                                          "check_status": adapter.check_status})()
        return adapter

    monkeypatch.setattr(publishing, "adapter_for", broken_linkedin)
    post = create(client, owner, targets=["facebook", "linkedin"], content="one bug")
    run(fast)
    mid = {t["platform"]: t for t in read(client, owner, post["id"])["targets"]}
    assert mid["facebook"]["status"] == "succeeded"
    job = Job.get(Job.dedupe_key == f"target:{PostTarget.get(PostTarget.platform == 'linkedin').id}")
    assert "adapter bug" in (job.last_error or "")
    run_through(fast)
    done = read(client, owner, post["id"])
    linkedin = next(t for t in done["targets"] if t["platform"] == "linkedin")
    assert linkedin["status"] == "failed" and linkedin["failType"] == "retriable"
    assert "internal error" in linkedin["failReason"]
    assert done["status"] == "partial"


def test_a_dead_publish_job_fails_its_targets(client, owner, sandbox, fast):
    """post.publish buried (attempts exhausted on an unexpected error): its targets end `failed`, the post
    settles, nothing stays `processing`."""
    from backend.jobs import queue
    from backend.jobs.registry import ON_DEAD, load_handlers

    load_handlers()
    post = create(client, owner, targets=["facebook", "linkedin"], content="dead job")
    (job,) = [j for j in queue.claim("w-test", limit=10) if j.kind == "post.publish"]
    assert queue.bury(job, "boom")
    ON_DEAD["post.publish"](job, "boom")
    done = read(client, owner, post["id"])
    assert done["status"] == "failed"
    assert all(t["status"] == "failed" and t["failType"] == "retriable" for t in done["targets"])


def test_posts_published_together_keep_their_own_outcomes(client, owner, sandbox, fast):
    """The worker's batch of post.publish jobs (start_posts): one transaction before the calls and one after for
    all of them, each post in its own savepoint. A post moved later after the claim waits (its job retried
    later), the others are published once and their jobs completed with their outcomes."""
    from backend.jobs import queue
    from backend.networks.sandbox import list_published
    from backend.services import publishing
    from backend.store.models import Post as PostRow

    now_posts = [create(client, owner, targets=["facebook", "linkedin"], content=f"together {i}") for i in range(3)]
    at = clock.now() + timedelta(minutes=5)
    moved = create(client, owner, targets=["facebook"], content="moved", scheduledAt=clock.iso(at))
    with time_machine.travel(at + timedelta(seconds=1), tick=False):
        jobs = [j for j in queue.claim("w-test", limit=10) if j.kind == "post.publish"]
        assert len(jobs) == 4
        PostRow.update(scheduled_at=at + timedelta(hours=1)).where(PostRow.id == moved["id"]).execute()
        results = publishing.start_posts(jobs, fast)
    by_post = {j.payload["post_id"]: results[j.id] for j in jobs}
    exc, completed = by_post[moved["id"]]
    from backend.jobs.registry import RetryLater

    assert isinstance(exc, RetryLater) and not completed
    assert PostRow.get_by_id(moved["id"]).status == "scheduled"
    for p in now_posts:
        assert by_post[p["id"]] == (None, True)
        assert read(client, owner, p["id"])["status"] == "completed"
        assert Job.get(Job.dedupe_key == f"post:{p['id']}").status == "done"
    assert len(list_published("facebook")) == 3 and len(list_published("linkedin")) == 3
    events = Event.select().where(Event.type == "publish.completed").count()
    assert events == 6


def test_worker_running_one_at_a_time_groups_post_jobs(client, owner, sandbox, fast):
    """When the jobs keep the CPU busy the worker hands post.publish jobs to the batch handler in groups; every
    post ends completed, published once per network."""
    from backend.networks.sandbox import list_published

    ids = [create(client, owner, targets=["facebook", "instagram", "linkedin"], content=f"group {i}",
                  mediaUrls=[upload(client, owner, corpus.jpeg(300, 300))])["id"] for i in range(11)]
    w = Worker(fast, concurrency=4)
    w._threads_help = False
    w.run_until_idle(max_seconds=30, settle_s=2)
    assert all(read(client, owner, i)["status"] == "completed" for i in ids)
    for network in ("facebook", "instagram", "linkedin"):
        assert len(list_published(network)) == 11


def test_tracking_jobs_run_together_to_success(client, owner, sandbox, fast, video_url, monkeypatch):
    """target.track jobs given to their batch handler (the worker running jobs one at a time): every TikTok and
    YouTube target is tracked to `succeeded`, once, and the posts settle."""
    from backend.jobs import registry
    from backend.networks.sandbox import list_published

    registry.load_handlers()
    sizes: list[int] = []
    real = registry.BATCH_HANDLERS["target.track"]

    def counting(jobs, ctx):  # type: ignore[no-untyped-def]
        sizes.append(len(jobs))
        return real(jobs, ctx)

    monkeypatch.setitem(registry.BATCH_HANDLERS, "target.track", counting)
    if fast.database_url:
        pytest.skip("on PostgreSQL each job keeps its own transactions (no groups)")
    ids = [create(client, owner, targets=["tiktok", "youtube"], content=f"tracked {i}\nbody",
                  mediaUrls=[video_url])["id"] for i in range(6)]
    w = Worker(fast, concurrency=4)
    w._threads_help = False
    w.run_until_idle(max_seconds=30, settle_s=2)
    assert any(n > 1 for n in sizes)
    for i in ids:
        done = read(client, owner, i)
        assert done["status"] == "completed", done
    assert len(list_published("tiktok")) == 6 and len(list_published("youtube")) == 6


# ---- regressions from the review of the batch engine ---------------------------------------------------
class _Scripted:
    """An adapter factory answering each network with a set outcome (no network involved)."""

    def __init__(self, script):  # type: ignore[no-untyped-def]
        self.script = script

    def adapter_for(self, platform, settings, account):  # type: ignore[no-untyped-def]
        from backend.networks.base import PublishOutcome

        script = self.script

        class Adapter:
            def find_existing(self, pub):  # type: ignore[no-untyped-def]
                return None

            def publish(self, pub):  # type: ignore[no-untyped-def]
                return script[platform]

            def check_status(self, pub, ref):  # type: ignore[no-untyped-def]
                return PublishOutcome(state="published", external_post_id="x2", post_url="https://x.example/2")

        return Adapter()


def _two_runs_of_one_post_job(client, owner, fast, monkeypatch, a_script):  # type: ignore[no-untyped-def]
    """Worker A commits step 1 then stalls past its lease; worker B reclaims the job and runs it whole
    (facebook retriable, linkedin published); then A resumes with `a_script`. Returns (post id, A's job)."""
    from backend.jobs import queue
    from backend.networks.base import PublishOutcome
    from backend.services import events, publishing

    post = create(client, owner, targets=["facebook", "linkedin"], content="two runs")
    (ja,) = [j for j in queue.claim("wA", limit=10) if j.kind == "post.publish"]
    with tx():
        batch_a = publishing._begin_post(post["id"], fast, clock.now(), lambda: None)
    Job.update(lease_until=clock.now() - timedelta(seconds=1)).where(Job.id == ja.id).execute()
    (jb,) = [j for j in queue.claim("wB", limit=10) if j.kind == "post.publish"]
    ok = PublishOutcome(state="published", external_post_id="x1", post_url="https://x.example/1")
    retry = PublishOutcome(state="failed", fail_type="retriable", fail_reason="busy")
    monkeypatch.setattr(publishing, "adapter_for", _Scripted({"facebook": retry, "linkedin": ok}).adapter_for)
    queue.set_current(jb)
    try:
        publishing.start_post(post["id"], fast)
    finally:
        queue.set_current(None)
    monkeypatch.setattr(publishing, "adapter_for", _Scripted(a_script).adapter_for)
    publishing._call_all(batch_a.calls, fast)
    with tx(), events.batched():
        publishing._end_post(batch_a, fast, clock.now(), lambda: queue.complete(ja))
    return post["id"]


def test_a_late_second_run_settles_the_post_from_fresh_rows(client, owner, sandbox, fast, monkeypatch):
    from backend.networks.base import PublishOutcome

    ok = PublishOutcome(state="published", external_post_id="x1", post_url="https://x.example/1")
    post_id = _two_runs_of_one_post_job(client, owner, fast, monkeypatch, {"facebook": ok, "linkedin": ok})
    run_through(fast)  # the facebook retry job B left: its target is final now
    targets = {t.platform: t.status for t in PostTarget.select().where(PostTarget.post == post_id)}
    assert targets == {"facebook": "succeeded", "linkedin": "succeeded"}
    assert Post.get_by_id(post_id).status == "completed"  # not stuck `processing`
    per_target = [e.data["targetId"] for e in Event.select().where(Event.type.startswith("publish."))]
    assert sorted(per_target) == sorted(set(per_target))  # one event per target


def test_a_late_pending_answer_never_reopens_a_final_target(client, owner, sandbox, fast, monkeypatch):
    from backend.networks.base import PublishOutcome

    ok = PublishOutcome(state="published", external_post_id="x1", post_url="https://x.example/1")
    pending = PublishOutcome(state="pending", tracking_ref="ref-1", network_status="PROCESSING")
    post_id = _two_runs_of_one_post_job(client, owner, fast, monkeypatch, {"facebook": ok, "linkedin": pending})
    linkedin = PostTarget.get((PostTarget.post == post_id) & (PostTarget.platform == "linkedin"))
    assert linkedin.status == "succeeded" and linkedin.tracking_ref is None
    assert not Job.select().where(Job.dedupe_key == f"track:{linkedin.id}").exists()
    run_through(fast)
    assert Post.get_by_id(post_id).status == "completed"
    assert Event.select().where(Event.type == "publish.completed").count() == 2


def test_claimed_jobs_waiting_their_turn_keep_their_lease(client, owner, sandbox, fast, monkeypatch):
    """Two workers, a 1 s lease, networks answering in 0.3 s: jobs claimed but not yet started are renewed by
    the heartbeat and checked before they start, so no post job runs twice (one publication per post)."""
    from concurrent.futures import ThreadPoolExecutor

    from backend.networks.sandbox import list_published
    from backend.services import publishing

    fast.job_lease_s = 1.0
    real = publishing.adapter_for

    class Slow:  # a network answering in 0.3 s (a wrapper: the sandbox adapters are cached, never mutate them)
        def __init__(self, adapter):  # type: ignore[no-untyped-def]
            self.adapter = adapter

        def publish(self, pub):  # type: ignore[no-untyped-def]
            time.sleep(0.3)
            return self.adapter.publish(pub)

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self.adapter, name)

    monkeypatch.setattr(publishing, "adapter_for", lambda p, s, a: Slow(real(p, s, a)))
    ids = [create(client, owner, targets=["facebook"], content=f"tail {i}")["id"] for i in range(12)]
    workers = []
    for name in ("A", "B"):
        w = Worker(fast, name=name, concurrency=2)
        w._pool = ThreadPoolExecutor(2)
        threading.Thread(target=w._heartbeat, daemon=True).start()
        workers.append(w)
    stop = time.monotonic() + 10

    def loop(w, delay):  # type: ignore[no-untyped-def]
        time.sleep(delay)
        while time.monotonic() < stop:
            if not w.run_batch() and all(Post.get_by_id(i).status == "completed" for i in ids):
                return
            time.sleep(0.02)

    threads = [threading.Thread(target=loop, args=(workers[0], 0)),
               threading.Thread(target=loop, args=(workers[1], 0.2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w in workers:
        w._stop.set()
        w._pool.shutdown()
    assert all(Post.get_by_id(i).status == "completed" for i in ids)
    assert len(list_published("facebook")) == len(ids)


def test_a_posts_calls_to_live_networks_run_at_the_same_time(client, owner, sandbox, fast, monkeypatch):
    """Live networks answer in their own time: a post's calls to three of them overlap (about one call's time,
    not three), each outcome recorded on its own target. Sandbox calls (CPU only) stay one after another."""
    from backend.networks.base import PublishOutcome
    from backend.services import publishing
    from backend.store.models import Account

    class Live:
        def __init__(self, platform):  # type: ignore[no-untyped-def]
            self.platform = platform

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            return None

        def publish(self, pub):  # type: ignore[no-untyped-def]
            time.sleep(0.4)
            return PublishOutcome(state="published", external_post_id=f"{self.platform}-1",
                                  post_url=f"https://{self.platform}.example/1")

    monkeypatch.setattr(publishing, "adapter_for", lambda platform, settings, account: Live(platform))
    Account.update(kind="live").where(Account.platform.in_(["facebook", "linkedin", "instagram"])).execute()
    post = create(client, owner, targets=["facebook", "linkedin", "instagram"], content="live at once",
                  mediaUrls=[upload(client, owner, corpus.jpeg(300, 300))])
    started = time.perf_counter()
    publishing.start_post(post["id"], fast)
    assert time.perf_counter() - started < 1.0  # three calls of 0.4 s
    done = read(client, owner, post["id"])
    assert done["status"] == "completed"
    assert {t["platform"]: t["externalPostId"] for t in done["targets"]} == {
        "facebook": "facebook-1", "linkedin": "linkedin-1", "instagram": "instagram-1"}
