"""A reconciliation by text never takes another target's publication (recon10).

When a publishing call ends without an outcome, the next attempt asks the network whether it published; several
networks can only be asked by paging the account's listing and matching the TEXT (or a video's title). Two targets
of one account with one caption in the same minutes (a recurring caption, a burst, a recipe's one caption over
different images) cannot be told apart that way: target B published normally, target A's attempt was cut off before
it reached the network, and A's reconciliation took B's publication for its own — A `succeeded`, never published.

The engine gives the reconciliation the ids the account's other targets hold (Publication.held_elsewhere), which
every listing skips; the store refuses a second holder of one publication (migration 0053), so two reconciliations
at once cannot both take it: the one refused is still ambiguous, asks again and publishes.
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from peewee import IntegrityError

from backend import clock
from backend.networks.sandbox import list_published
from backend.queue.backoff import RetryLater
from backend.services import adapters, publishing, workspace
from backend.services.publishing import decide, engine
from backend.store.db import database, tx
from backend.store.models import Job, PostTarget, PublishAttempt
from tests.media import corpus
from tests.networks.conftest import READABLE_APPS
from tests.services.test_publishing import Wrapped, create, patch_adapters, read, upload
from tests.support.worker import work

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test

CAPTION = "Fresh bread at 7\nsee you at the shop"


class Killed(BaseException):
    """Like SIGKILL of the worker running that call (nothing after it runs)."""


@pytest.fixture
def fast(settings, owner, audited_tiktok):  # type: ignore[no-untyped-def]
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    settings.retry_max_attempts = 3
    settings.sandbox_processing_s = 1.0
    # a LinkedIn app that may read its member's posts back; TikTok's audited (the module's mark)
    settings.sandbox_apps = {**settings.sandbox_apps, **READABLE_APPS, "tiktok": {"audited": True}}
    return settings


# network, what the post carries: each network that reconciles by matching a listing's text (or title)
CASES = [
    ("facebook", "text"),
    ("facebook", "video"),  # the Page's videos, matched by description
    ("instagram", "image"),  # no container saved: the account's media, matched by caption
    ("threads", "text"),
    ("linkedin", "text"),
    ("mastodon", "text"),
    ("youtube", "video"),  # the channel's uploads, matched by title
    ("tiktok", "video"),  # no publish id saved: the creator's public videos, matched by description
]


def _media(client, owner, kind: str) -> list[str]:  # type: ignore[no-untyped-def]
    if kind == "image":
        return [upload(client, owner, corpus.jpeg(400, 400))]
    if kind == "video":
        return [upload(client, owner, corpus.video("mp4"))]
    return []


def _final(client, owner, post_id: str) -> bool:  # type: ignore[no-untyped-def]
    return read(client, owner, post_id)["status"] in ("completed", "partial", "failed")


def _done(client, owner, post_id: str, t: Any, fast: Any, steps: int, *, skip: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Run the worker until the post is final: at most `steps` runs, the clock moved a second after each (`skip`:
    on to the target's next attempt when it waits longer, e.g. for a network's listing window)."""
    for _ in range(steps):
        if _final(client, owner, post_id):
            return
        work(fast)
        t.shift(1)
        due = PostTarget.get(PostTarget.post == post_id).next_attempt_at
        if skip and due is not None and due > clock.now():
            t.move_to(due + timedelta(seconds=1))


@pytest.mark.parametrize(("network", "kind"), CASES)
def test_a_cut_off_attempt_is_published_not_given_another_targets_publication_of_its_caption(
    client, owner, sandbox, fast, monkeypatch, network, kind
):
    if (network, kind) == ("facebook", "video"):
        # a video not among the Page's videos is not absent before its processing window (15 min) is over: A's
        # re-checks wait it out, each a retriable try (tests/networks/facebook/test_video.py)
        fast.retry_max_attempts = 25
    media = _media(client, owner, kind)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        # A: its worker dies right before its publishing call reaches the network (an attempt without outcome)
        first = create(client, owner, targets=[network], content=CAPTION, mediaUrls=media)

        def killing(real, account):  # type: ignore[no-untyped-def]
            def publish(pub):  # type: ignore[no-untyped-def]
                raise Killed()

            return Wrapped(real, publish=publish)

        real = patch_adapters(monkeypatch, killing)
        with pytest.raises(Killed):
            work(fast)
        monkeypatch.setattr(adapters, "adapter_for", real)
        assert list_published(network) == []
        a = PostTarget.get(PostTarget.post == first["id"])
        assert a.status == "publishing"
        # B: the same caption on the same account, published normally while A's job is still leased
        second = create(client, owner, targets=[network], content=CAPTION, mediaUrls=media)
        _done(client, owner, second["id"], t, fast, int(fast.job_lease_s) - 2)
        b = read(client, owner, second["id"])
        assert b["status"] == "completed", b["targets"][0]["failReason"]
        assert len(list_published(network)) == 1
        # A's job is taken over: its reconciliation pages the account's listing, where B's post has A's caption
        t.shift(fast.job_lease_s + 1)
        _done(client, owner, first["id"], t, fast, 40, skip=True)
        done = read(client, owner, first["id"])
        assert done["status"] == "completed", done
        mine, theirs = done["targets"][0]["externalPostId"], b["targets"][0]["externalPostId"]
        assert mine != theirs, "A was marked succeeded with B's publication: A's post was never published"
        published = list_published(network)  # (the emulators show what they made up to the moved clock)
        assert len(published) == 2  # A published once, B once
        assert {p["external_id"] for p in published} == {mine, theirs}


# ---- two reconciliations at once, one publication at the network -------------------------------------------------
def _fanned_out(client, owner, content: str) -> tuple[Job, PostTarget]:  # type: ignore[no-untyped-def]
    """A facebook post whose post job has run: its target.publish job is queued."""
    post = create(client, owner, targets=["facebook"], content=content)
    (job,) = [j for j in Job.select().where(Job.kind == "post.publish") if j.payload["post_id"] == post["id"]]
    publishing.start_post(job, client.app.state.settings)
    target = PostTarget.get(PostTarget.post == post["id"])
    return Job.get(Job.dedupe_key == f"target:{target.id}"), target


def _killed(job: Job, settings: Any, monkeypatch: Any, *, reached: bool) -> None:
    """The target's attempt cut off right after (reached) or right before its call reached the network."""

    def killing(real, account):  # type: ignore[no-untyped-def]
        def publish(pub):  # type: ignore[no-untyped-def]
            if reached:
                real.publish(pub)
            raise Killed()

        return Wrapped(real, publish=publish)

    real = patch_adapters(monkeypatch, killing)
    with pytest.raises(Killed):
        publishing.publish_target(job, settings)
    monkeypatch.setattr(adapters, "adapter_for", real)


def _until_final(jobs: list[Job], settings: Any, t: Any) -> None:
    for _ in range(20):
        open_ = [
            j
            for j in jobs
            if PostTarget.get_by_id(j.payload["target_id"]).status not in ("succeeded", "failed")
        ]
        if not open_:
            return
        for job in open_:
            try:
                publishing.publish_target(Job.get_by_id(job.id), settings)
            except RetryLater:
                pass
        t.shift(1)


def _two_ambiguous(client, owner, fast, monkeypatch):  # type: ignore[no-untyped-def]
    """Two targets of one account, one caption, both cut off: one's call reached the network (one publication
    there), the other's did not."""
    (job_a, a), (job_c, c) = _fanned_out(client, owner, CAPTION), _fanned_out(client, owner, CAPTION)
    _killed(job_a, fast, monkeypatch, reached=True)
    _killed(job_c, fast, monkeypatch, reached=False)
    assert len(list_published("facebook")) == 1
    return (job_a, a), (job_c, c)


def _end_state(client, owner, a: PostTarget, c: PostTarget) -> None:  # type: ignore[no-untyped-def]
    ids = []
    for target in (a, c):
        shown = read(client, owner, target.post_id)
        assert shown["status"] == "completed", shown
        ids.append(shown["targets"][0]["externalPostId"])
    published = list_published("facebook")
    assert len(published) == 2, "one of the two was never published"
    assert sorted(ids) == sorted(p["external_id"] for p in published)


def test_two_reconciliations_at_once_cannot_both_take_one_publication(
    client, owner, sandbox, fast, monkeypatch
):
    """The restart after a kill in a burst: two ambiguous targets of one caption reconciled by two threads at once.
    Both list the one publication before either records it; one takes it, the other is refused by the store (or
    sees it held), asks again with it excluded, and publishes."""
    (job_a, a), (job_c, c) = _two_ambiguous(client, owner, fast, monkeypatch)
    both_listed = threading.Barrier(2, timeout=20)
    found: list[Any] = []

    def together(real, account):  # type: ignore[no-untyped-def]
        def find_existing(pub):  # type: ignore[no-untyped-def]
            out = real.find_existing(pub)
            found.append(out)
            if len(found) <= 2:
                both_listed.wait()  # each has read the listing before either writes what it found
            return out

        return Wrapped(real, find_existing=find_existing)

    patch_adapters(monkeypatch, together)
    errors: list[BaseException] = []

    def run(job: Job) -> None:
        try:
            publishing.publish_target(Job.get_by_id(job.id), fast)
        except RetryLater:
            pass
        except BaseException as exc:  # noqa: BLE001 — reported below, in the test's thread
            errors.append(exc)
        finally:
            database.close()

    with time_machine.travel(clock.now() + timedelta(seconds=fast.job_lease_s + 1), tick=False) as t:
        threads = [threading.Thread(target=run, args=(j,)) for j in (job_a, job_c)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(30)
        assert not errors, errors
        assert [f is not None and f.state == "published" for f in found[:2]] == [True, True]  # both saw it
        took = [PostTarget.get_by_id(x.id).external_post_id for x in (a, c)]
        assert sum(1 for x in took if x) == 1, took  # one took it, the other did not
        _until_final([job_a, job_c], fast, t)
    _end_state(client, owner, a, c)


def test_a_refused_reconciled_success_is_still_ambiguous_and_published_after_all(
    client, owner, sandbox, fast, monkeypatch, caplog
):
    """The store decides the race the engine's own reads cannot see (its check after the listing and its write are
    not one statement): C took the publication between A's check and A's write. A's write is refused; A is neither
    failed nor succeeded: it waits, asks again with that publication excluded, and publishes its own."""
    (job_a, a), (job_c, c) = _two_ambiguous(client, owner, fast, monkeypatch)
    real_check = engine._unless_another_call
    taken: list[bool] = []

    def c_takes_it_first(*args: Any, **kwargs: Any) -> None:
        if taken:
            return real_check(*args, **kwargs)
        taken.append(True)
        # A has listed the publication; now C's whole run takes it (C's own check passes: A is reconciling, no
        # call of it under way) — and A's check is as if it had read the store before C's write: it passes
        publishing.publish_target(Job.get_by_id(job_c.id), fast)
        return None

    monkeypatch.setattr(engine, "_unless_another_call", c_takes_it_first)
    caplog.set_level("INFO", logger="socialpub.engine")
    with time_machine.travel(clock.now() + timedelta(seconds=fast.job_lease_s + 1), tick=False) as t:
        with pytest.raises(RetryLater):
            publishing.publish_target(Job.get_by_id(job_a.id), fast)
        held = PostTarget.get_by_id(c.id)
        assert (
            held.status == "succeeded"
            and held.external_post_id == list_published("facebook")[0]["external_id"]
        )
        waiting = PostTarget.get_by_id(a.id)
        assert waiting.status == "pending" and waiting.external_post_id is None  # not failed, not succeeded
        assert any("holds" in r.getMessage() and a.id in r.getMessage() for r in caplog.records)
        open_attempts = PublishAttempt.select().where(
            (PublishAttempt.target == a.id) & PublishAttempt.finished_at.is_null()
        )
        assert open_attempts.count() == 1  # the cut-off attempt stays unresolved: the next one asks first
        monkeypatch.setattr(engine, "_unless_another_call", real_check)
        _until_final([job_a], fast, t)
    _end_state(client, owner, a, c)


def test_a_reconciliation_does_not_take_the_publication_of_a_call_still_under_way(
    client, owner, sandbox, fast, monkeypatch, caplog
):
    """The order "B's call in flight, A reconciles, B's answer arrives": the network has B's publication, B's answer
    is not recorded yet, and A's reconciliation lists it. A does not take it (B's call began before the network made
    it): A waits, B's answer is recorded as B's, and A, asking again with it excluded, publishes its own."""
    (job_a, a), (job_b, b) = _fanned_out(client, owner, CAPTION), _fanned_out(client, owner, CAPTION)
    _killed(job_a, fast, monkeypatch, reached=False)
    inside: list[bool] = []

    def answer_late(real, account):  # type: ignore[no-untyped-def]
        def publish(pub):  # type: ignore[no-untyped-def]
            out = real.publish(pub)  # B's publication is at the network...
            if not inside:
                inside.append(True)
                with pytest.raises(RetryLater):  # ...and A reconciles before B's answer is recorded
                    publishing.publish_target(Job.get_by_id(job_a.id), fast)
            return out

        return Wrapped(real, publish=publish)

    real = patch_adapters(monkeypatch, answer_late)
    caplog.set_level("INFO", logger="socialpub.engine")
    with time_machine.travel(clock.now() + timedelta(seconds=fast.job_lease_s + 1), tick=False) as t:
        publishing.publish_target(Job.get_by_id(job_b.id), fast)
        assert inside
        mine = PostTarget.get_by_id(b.id)
        assert (
            mine.status == "succeeded"
            and mine.external_post_id == list_published("facebook")[0]["external_id"]
        )
        waiting = PostTarget.get_by_id(a.id)
        assert waiting.status == "pending" and waiting.external_post_id is None
        assert any(f"the call of target {b.id}" in r.getMessage() for r in caplog.records)
        monkeypatch.setattr(adapters, "adapter_for", real)
        _until_final([job_a], fast, t)
    assert not [
        r for r in caplog.records if "reconciliation_shared" in r.getMessage() or r.levelname == "ERROR"
    ]
    _end_state(client, owner, a, b)


def test_the_store_refuses_one_publication_on_two_targets_of_an_account(client, owner, sandbox, fast):
    """Migration 0053's index: one account's publication is held by one target at most (any number may hold none;
    another account may hold the same id)."""
    (_, a), (_, c) = _fanned_out(client, owner, "one"), _fanned_out(client, owner, "two")
    PostTarget.update(external_post_id="123_456").where(PostTarget.id == a.id).execute()
    with pytest.raises(IntegrityError), tx():
        PostTarget.update(external_post_id="123_456").where(PostTarget.id == c.id).execute()
    assert PostTarget.get_by_id(c.id).external_post_id is None


def test_the_migration_unshares_a_publication_two_targets_held_before_it(client, owner, sandbox, fast):
    """A store written before migration 0053 may hold one publication on two targets of an account (the bug): the
    first to complete keeps it; the other is left without the id, warned that it may never have been published,
    and the index is made."""
    migration = importlib.import_module("backend.store.migrations.0053_target_publication_unique")
    (_, a), (_, c) = _fanned_out(client, owner, CAPTION), _fanned_out(client, owner, CAPTION)
    now = clock.now()
    migration.down(None, database.obj)
    try:
        for target, at in ((a, now), (c, now + timedelta(seconds=5))):
            PostTarget.update(status="succeeded", external_post_id="123_456", completed_at=at).where(
                PostTarget.id == target.id
            ).execute()
    finally:
        migration.up(None, database.obj)  # the store's schema, whatever happened (PostgreSQL's is kept)
    assert PostTarget.get_by_id(a.id).external_post_id == "123_456"
    later = PostTarget.get_by_id(c.id)
    assert later.status == "succeeded" and later.external_post_id is None
    assert [w["code"] for w in later.warnings] == ["reconciliation_shared_publication"]
    shown = read(client, owner, c.post_id)["targets"][0]
    assert "may never have been published" in shown["warnings"][0]["message"]
    assert {
        "post_target_account_external",
        "post_target_account_completed",
        "post_target_account_publishing",
    } <= {i.name for i in database.obj.get_indexes("post_target")}
    migration.up(None, database.obj)  # a second run changes nothing
    assert PostTarget.get_by_id(a.id).external_post_id == "123_456"


# ---- what the network made late is still the cut-off attempt's own, within the network's listing delay -----------
def test_a_publication_made_after_the_calls_were_over_but_within_the_listing_delay_is_the_attempts_own(
    client, owner, sandbox, fast, monkeypatch
):
    """The network received the cut-off call and made the publication some seconds after the call was over on our
    side (a network processing a received request; TikTok publishing after its processing): within the network's
    listing delay that publication may be the attempt's own, so the reconciliation takes it rather than skip it as
    another target's — skipping it would publish the post twice. Publication.made_by is the calls' end plus the
    listing delay (decide.absence_conclusive_at); only what the network made after that is skipped."""
    monkeypatch.setattr(adapters, "listing_delay_s", lambda account, settings: 60.0)
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        job, target = _fanned_out(client, owner, CAPTION)
        _killed(job, fast, monkeypatch, reached=False)  # cut off before its call reached the network
        t.shift(fast.job_lease_s + 1)
        over_by = clock.now()  # the next attempt's start: the earlier call is over by then
        seen: list[Any] = []

        def watching(real, account):  # type: ignore[no-untyped-def]
            def find_existing(pub):  # type: ignore[no-untyped-def]
                seen.append(pub)
                return real.find_existing(pub)

            return Wrapped(real, find_existing=find_existing)

        patch_adapters(monkeypatch, watching)
        with pytest.raises(RetryLater):  # absence is not conclusive before the listing delay: it waits
            publishing.publish_target(Job.get_by_id(job.id), fast)
    assert seen, "the reconciliation did not ask the network"
    pub = seen[-1]
    assert pub.made_by is not None
    assert pub.made_by >= decide.absence_conclusive_at(over_by, 60.0) - timedelta(seconds=1)
    assert not pub.made_later(over_by + timedelta(seconds=40))  # made late, within the delay: may be its own
    assert pub.made_later(pub.made_by + timedelta(seconds=30))  # made after it: another target's


def test_a_container_published_by_a_cut_off_call_is_found_by_its_reconciliation_not_by_the_status_check(
    client, owner, sandbox, fast, monkeypatch
):
    """Instagram's container flow: A's publishing call (media_publish of its FINISHED container) reached the network,
    its worker died before recording the answer; B, one caption on one account, published normally meanwhile. A's next
    status check finds its container PUBLISHED and the media looked up in the listing by caption: that lookup is a
    reconciliation (its match is by text), so it skips what B holds and waits for calls under way, like every other.
    Before, the status check took the newest media of the caption — B's — for A's own: A `succeeded` with B's
    publication, and the store's unique index refused it or B's answer (`bench/crash.py`, two workers)."""
    media = _media(client, owner, "video")
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        first = create(client, owner, targets=["instagram"], content=CAPTION, mediaUrls=media)

        def killing(real, account):  # type: ignore[no-untyped-def]
            def complete(pub, ref):  # type: ignore[no-untyped-def]
                real.complete(pub, ref)  # the media is published at the network...
                raise Killed()  # ...and the worker dies before recording it

            return Wrapped(real, complete=complete)

        real = patch_adapters(monkeypatch, killing)
        with pytest.raises(Killed):
            _done(client, owner, first["id"], t, fast, 10)
        monkeypatch.setattr(adapters, "adapter_for", real)
        assert len(list_published("instagram")) == 1
        second = create(client, owner, targets=["instagram"], content=CAPTION, mediaUrls=media)
        _done(client, owner, second["id"], t, fast, int(fast.job_lease_s) - 2)
        b = read(client, owner, second["id"])
        assert b["status"] == "completed", b["targets"][0]["failReason"]
        assert len(list_published("instagram")) == 2
        t.shift(fast.job_lease_s + 1)  # A's job is taken over
        _done(client, owner, first["id"], t, fast, 40, skip=True)
        done = read(client, owner, first["id"])
        assert done["status"] == "completed", done
        mine, theirs = done["targets"][0]["externalPostId"], b["targets"][0]["externalPostId"]
        assert mine and mine != theirs, "A was marked succeeded with B's publication"
        assert sorted(p["external_id"] for p in list_published("instagram")) == sorted([mine, theirs])


def test_a_published_container_whose_media_cannot_be_told_apart_succeeds_without_an_id_saying_so(
    client, owner, sandbox, fast, monkeypatch
):
    """Instagram says A's container is PUBLISHED, A's publishing call's answer recorded already (the network answered
    "still processing", and published it meanwhile): the check looks the media up in the account's listing by its
    caption. The newest match is B's (held by B: skipped); the next is A's own, but target C's call began before the
    network made it and is still under way — C's call may have made it (skipped). No match is left: A succeeds
    without an id and says so (`publication_not_told_apart`) — never failed, never published again, never given
    B's publication. Before, it waited for its deadline and failed."""
    media = _media(client, owner, "video")
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        # C: a target of the account whose publishing call is under way in another worker since `start`
        third = create(
            client,
            owner,
            targets=["instagram"],
            content=CAPTION,
            mediaUrls=media,
            scheduledAt=(start + timedelta(days=1)).isoformat(),
        )
        PostTarget.update(status="publishing", call_started_at=start).where(
            PostTarget.post == third["id"]
        ).execute()
        t.shift(1)

        def still_processing(real, account):  # type: ignore[no-untyped-def]
            def complete(pub, ref):  # type: ignore[no-untyped-def]
                real.complete(pub, ref)  # published at the network; its answer: still processing
                return dataclasses.replace(
                    real.check_status(pub, ref), state="pending", external_post_id=None
                )

            return Wrapped(real, complete=complete)

        real = patch_adapters(monkeypatch, still_processing)
        first = create(client, owner, targets=["instagram"], content=CAPTION, mediaUrls=media)
        for _ in range(10):  # the container made, processed, then the publishing call
            if list_published("instagram"):
                break
            work(fast)
            t.shift(1)
        assert len(list_published("instagram")) == 1
        monkeypatch.setattr(adapters, "adapter_for", real)
        assert read(client, owner, first["id"])["targets"][0]["status"] == "publishing"
        t.shift(2)
        second = create(client, owner, targets=["instagram"], content=CAPTION, mediaUrls=media)
        _done(client, owner, second["id"], t, fast, 20)
        b = read(client, owner, second["id"])
        assert b["status"] == "completed", b
        theirs = b["targets"][0]["externalPostId"]
        _done(client, owner, first["id"], t, fast, 20)
        done = read(client, owner, first["id"])
        target = done["targets"][0]
        assert done["status"] == "completed", target
        assert target["status"] == "succeeded"
        assert target["externalPostId"] is None and target["postUrl"] is None
        assert [w["code"] for w in target["warnings"]] == ["publication_not_told_apart"]
        assert read(client, owner, second["id"])["targets"][0]["externalPostId"] == theirs
        assert len(list_published("instagram")) == 2  # A published once, B once
        assert not PublishAttempt.select().where(PublishAttempt.outcome.is_null()).exists()
