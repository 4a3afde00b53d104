"""An Instagram attempt left without outcome is reconciled by its own container (IG Container `status_code`), not
by the caption alone: two posts of one caption published in the same minutes cannot be told apart in the listing,
and a reconciliation by caption took another post's media for its own — the target succeeded, never published
(seen once in 10,000 targets of bench/burst.py, whose posts share one caption)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import httpx
import time_machine

from backend import clock
from backend.networks.base import decode_ref
from backend.services.adapters import make_adapter, sandbox
from tests.networks.conftest import IMG, VID, publication
from tests.networks.test_networks import adapter, loader

CAPTION = "Good morning from the team"


def _finished_container(settings, ident, token: str):  # type: ignore[no-untyped-def]
    """A second post of the same caption whose container is FINISHED (its check said `ready`) and never
    published: the state of a media_publish call that timed out before reaching Instagram."""
    ad = adapter("instagram", settings)
    pub = publication(ident, "instagram", CAPTION, [IMG[1]], token=token, attempted_at=clock.now())
    out = ad.check_status(pub, str(ad.publish(dataclasses.replace(pub)).tracking_ref))
    return ad, pub, out


def test_a_finished_container_is_not_published_even_when_a_post_of_its_caption_is_listed(
    settings, account
) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 5.0
    ident = account("instagram")
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        first = adapter("instagram", settings)
        one = publication(ident, "instagram", CAPTION, [IMG[0]], token="tgt_a", attempted_at=start)
        done = first.publish(one)
        t.move_to(start + timedelta(seconds=6))
        done = first.complete(one, str(first.check_status(one, str(done.tracking_ref)).tracking_ref))
        assert done.state == "published"
        ad, two, ready = _finished_container(settings, ident, "tgt_b")
        t.move_to(start + timedelta(seconds=12))
        ready = ad.check_status(two, str(ready.tracking_ref))
        assert ready.state == "ready"
        asked = dataclasses.replace(two, resume=ready.tracking_ref)
        assert (
            ad.find_existing(asked) is None
        )  # its container never published: publish it, not the other's media
        assert ad.listed(asked) is not None  # what the caption alone would have said: the first post's media
        published = ad.complete(two, str(ready.tracking_ref))
        assert published.state == "published" and published.external_post_id != done.external_post_id
        found = ad.find_existing(asked)
        assert found is not None and found.state == "published"


def test_a_container_the_network_no_longer_knows_leaves_the_listing_to_decide(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram")
    ad = adapter("instagram", settings)
    pub = publication(ident, "instagram", "only once", [IMG[0]], attempted_at=clock.now())
    assert ad.publish(pub).state == "published"
    unknown = dataclasses.replace(pub, resume='{"container": "17999999999999999"}')
    found = ad.find_existing(unknown)
    assert found is not None and found.state == "published"


def test_a_failing_container_status_is_an_ambiguous_failure_not_an_absence(settings, account) -> None:  # type: ignore[no-untyped-def]
    """Instagram unreachable while asked about the container: never "absent" (that would publish twice)."""
    ident = account("instagram")
    handler = sandbox(settings).handler("instagram")
    down = {"on": False}

    def flaky(request: httpx.Request) -> httpx.Response:
        if down["on"] and request.method == "GET":
            return httpx.Response(500, json={"error": {"message": "down", "code": 2, "is_transient": True}})
        return handler(request)

    ad = make_adapter("instagram", settings, transport=httpx.MockTransport(flaky), media_loader=loader)
    pub = publication(ident, "instagram", "asked while down", [IMG[0]], attempted_at=clock.now())
    out = ad.publish(pub)
    ref = str(out.tracking_ref)
    assert decode_ref(ref).get("container")
    down["on"] = True
    found = ad.find_existing(dataclasses.replace(pub, resume=ref))
    assert found is not None and found.state == "failed" and found.ambiguous


def test_an_attempt_that_saved_no_container_published_nothing_whatever_its_caption_lists(
    settings, account
) -> None:  # type: ignore[no-untyped-def]
    """A publish call saves its container before it publishes it (Publication.saved, committed by the engine), so
    an attempt cut off before the save — its container creation reached Instagram, its answer lost — never reached
    media_publish: nothing is published, and the listing is not asked. It used to be, by caption: under kills with
    one caption on every post (bench/crash.py), such an attempt B took the media of target A, whose media_publish
    had just gone through and whose answer was not recorded yet — B succeeded without being published, and A was
    left without its id."""
    settings.sandbox_processing_s = 5.0
    ident = account("instagram")
    start = clock.now()
    with time_machine.travel(start, tick=False) as t:
        b = publication(ident, "instagram", CAPTION, [VID], token="tgt_b", attempted_at=start)
        # B's container made at Instagram (processing); the attempt's save of it never happened (no saver here)
        assert adapter("instagram", settings).publish(b).state == "pending"
        t.shift(2)
        a = publication(ident, "instagram", CAPTION, [IMG[0]], token="tgt_a", attempted_at=clock.now())
        other = adapter("instagram", settings)
        made = other.publish(a)
        t.shift(6)
        theirs = other.complete(a, str(other.check_status(a, str(made.tracking_ref)).tracking_ref))
        assert theirs.state == "published"
        seen: list[httpx.Request] = []
        handler = sandbox(settings).handler("instagram")

        def spy(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return handler(request)

        asked = make_adapter("instagram", settings, transport=httpx.MockTransport(spy), media_loader=loader)
        assert asked.find_existing(b) is None
        assert seen == []
        assert asked.listed(b) is not None  # what the caption alone would have said: A's media
