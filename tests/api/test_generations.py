# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""/v1/generations (spec 2.5, 3.3, 4.5, 5.4, 6, 7, 8; issue 15): every validation rule with its code, subscription and
credits (the ledger: charged once, refunded once, never negative), the worker's outcomes with their events, dryRun,
DELETE, scopes and workspace isolation, and a created video posted to youtube."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.services import credits
from backend.services import keys as keys_service
from backend.services import workspace as ws_service
from backend.store.models import CreditEntry, Event, Generation, Job, Media
from tests.conftest import key_headers, make_owner, session_headers
from tests.support import gen_provider
from tests.support.gen_fixtures import (  # noqa: F401  (fixtures)
    balance_is_the_ledger,
    gen_provider_dir,
    ledger,
    run_worker,
    subscribed,
)

pytestmark = pytest.mark.usefixtures("gen_provider_dir")

IMAGE = {"type": "image", "prompt": "A flat white on a sunny terrace"}
VIDEO = {"type": "video", "prompt": "Slow pan over fresh roasted coffee beans"}


def create(client, owner, body, expect=202, **params):  # type: ignore[no-untyped-def]
    r = client.post("/v1/generations", json=body, headers=key_headers(owner.api_key), params=params)
    assert r.status_code == expect, r.text
    return r.json()


def problems(r):  # type: ignore[no-untyped-def]
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "validation_error"
    return [(d["field"], d["error"]) for d in body["details"]]


def rejected(client, owner, body):  # type: ignore[no-untyped-def]
    return problems(client.post("/v1/generations", json=body, headers=key_headers(owner.api_key)))


def nothing_written(owner, balance: int) -> None:
    assert Generation.select().where(Generation.workspace == owner.workspace_id).count() == 0
    assert Job.select().where(Job.kind == "generation.produce").count() == 0
    assert credits.balance(owner.workspace_id) == balance
    assert not CreditEntry.select().where(CreditEntry.reason == "charge").exists()


# ---------------------------------------------------------------------------------------------- validation


def test_unknown_type(client, subscribed):
    assert rejected(client, subscribed, {**IMAGE, "type": "gif"}) == [("type", "invalid_type")]
    nothing_written(subscribed, 1000)


def test_type_is_required(client, subscribed):
    r = client.post(
        "/v1/generations", json={"prompt": "hello there"}, headers=key_headers(subscribed.api_key)
    )
    assert problems(r) == [("type", "missing")]


@pytest.mark.parametrize("prompt", ["ab", "  ab  ", "   ", ""])
def test_prompt_too_short(client, subscribed, prompt):
    r = client.post(
        "/v1/generations", json={**IMAGE, "prompt": prompt}, headers=key_headers(subscribed.api_key)
    )
    assert problems(r) == [("prompt", "prompt_too_short")]
    detail = r.json()["details"][0]
    assert detail["minLength"] == 3 and "at least 3 characters" in detail["message"]


def test_prompt_too_long(client, subscribed):
    r = client.post(
        "/v1/generations", json={**IMAGE, "prompt": "x" * 1801}, headers=key_headers(subscribed.api_key)
    )
    assert problems(r) == [("prompt", "prompt_too_long")]
    assert r.json()["details"][0]["maxLength"] == 1800


def test_prompt_bounds_are_accepted(client, subscribed):
    assert create(client, subscribed, {**IMAGE, "prompt": "abc"})["prompt"] == "abc"
    assert len(create(client, subscribed, {**IMAGE, "prompt": "é" * 1800})["prompt"]) == 1800


def test_unknown_aspect_ratio(client, subscribed):
    r = client.post(
        "/v1/generations", json={**IMAGE, "aspectRatio": "4:3"}, headers=key_headers(subscribed.api_key)
    )
    assert problems(r) == [("aspectRatio", "invalid_aspect_ratio")]
    assert r.json()["details"][0]["allowed"] == ["9:16", "1:1", "16:9"]


@pytest.mark.parametrize("duration", [4, 6, 8, 0, 20, -5])
def test_duration_outside_the_set(client, subscribed, duration):
    """The field definition (5, 10, 15) wins over the error table's 4/6/8."""
    r = client.post(
        "/v1/generations", json={**VIDEO, "durationSec": duration}, headers=key_headers(subscribed.api_key)
    )
    assert problems(r) == [("durationSec", "invalid_duration")]
    assert r.json()["details"][0]["allowed"] == [5, 10, 15]


def test_duration_is_for_videos_only(client, subscribed):
    assert rejected(client, subscribed, {**IMAGE, "durationSec": 10}) == [
        ("durationSec", "duration_not_allowed_for_image")
    ]


def test_source_urls_are_for_videos_only(client, subscribed, settings):
    url = _host_image(settings, subscribed)
    assert rejected(client, subscribed, {**IMAGE, "sourceUrls": [url]}) == [
        ("sourceUrls", "source_urls_not_allowed_for_image")
    ]


def test_more_than_two_source_urls(client, subscribed, settings):
    urls = [_host_image(settings, subscribed) for _ in range(3)]
    r = client.post(
        "/v1/generations", json={**VIDEO, "sourceUrls": urls}, headers=key_headers(subscribed.api_key)
    )
    assert problems(r) == [("sourceUrls", "too_many_source_urls")]
    assert r.json()["details"][0]["maxItems"] == 2


def test_a_source_url_that_cannot_be_a_start_image(client, subscribed, settings):
    from backend.services import media as media_service
    from tests.media import corpus

    video = media_service.ingest_bytes(settings, subscribed.workspace_id, corpus.video("mp4"))
    cases = {
        "http://cdn.example.com/a.jpg": "source_url_unreadable",  # not https
        settings.public_media_url
        + "med_00000000000000000000000000.jpg": "source_url_unreadable",  # no such file
        media_service.url_for(settings, video.key): "source_not_an_image",
    }
    for url, code in cases.items():
        r = client.post(
            "/v1/generations", json={**VIDEO, "sourceUrls": [url]}, headers=key_headers(subscribed.api_key)
        )
        assert problems(r) == [("sourceUrls.0", code)], url
        assert r.json()["details"][0]["sourceUrl"] == url
    nothing_written(subscribed, 1000)


def test_a_source_url_on_a_private_address_is_refused_without_traffic(client, subscribed, monkeypatch):
    """The SSRF rule of the fetcher, checked with a stubbed resolver: the name resolves to a private address, no
    connection is made."""
    from backend.outbound import guard

    resolved: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        resolved.append(host)
        return ["10.0.0.7"]

    def no_connection(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("no connection may be attempted")

    monkeypatch.setattr(guard, "RESOLVER", resolver)
    monkeypatch.setattr(guard.PinnedBackend, "connect_tcp", no_connection)
    r = client.post(
        "/v1/generations",
        json={**VIDEO, "sourceUrls": ["https://intranet.example.com/start.jpg"]},
        headers=key_headers(subscribed.api_key),
    )
    assert problems(r) == [("sourceUrls.0", "source_url_unreadable")]
    assert resolved == ["intranet.example.com"] and "10.0.0.7" in r.json()["details"][0]["message"]


def test_every_problem_is_reported_at_once(client, subscribed):
    body = {
        "type": "video",
        "prompt": "x",
        "aspectRatio": "2:1",
        "durationSec": 7,
        "sourceUrls": ["https://a.example/1.jpg"] * 3,
    }
    assert rejected(client, subscribed, body) == [
        ("prompt", "prompt_too_short"),
        ("aspectRatio", "invalid_aspect_ratio"),
        ("durationSec", "invalid_duration"),
        ("sourceUrls", "too_many_source_urls"),
    ]


def test_unknown_fields_and_wrong_types_are_400(client, subscribed):
    assert rejected(client, subscribed, {**IMAGE, "style": "noir"}) == [("style", "extra_forbidden")]
    assert rejected(client, subscribed, {**VIDEO, "durationSec": "ten"}) == [("durationSec", "int_type")]
    assert rejected(client, subscribed, {**VIDEO, "durationSec": "10"}) == [
        ("durationSec", "int_type")
    ]  # no lax str


# ---------------------------------------------------------------------------------------------- acceptance, credits


def test_accepted_image_defaults_and_charge(client, subscribed):
    g = create(client, subscribed, IMAGE)
    assert g["status"] == "pending" and g["type"] == "image" and g["aspectRatio"] == "9:16"
    assert (
        g["durationSec"] is None and g["sourceUrls"] == [] and g["mediaUrl"] is None and g["mimeType"] is None
    )
    assert g["error"] is None and g["completedAt"] is None and g["creditsCost"] == 2
    assert g["id"].startswith("gen_") and g["createdAt"].endswith("Z")
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -2)]
    assert balance_is_the_ledger(subscribed.workspace_id) == 998
    workspace = client.get("/v1/workspace", headers=key_headers(subscribed.api_key)).json()
    assert workspace["credits"]["balance"] == 998


@pytest.mark.parametrize(("duration", "cost"), [(None, 15), (5, 15), (10, 30), (15, 45)])
def test_video_prices_and_default_duration(client, subscribed, duration, cost):
    body = {**VIDEO, "aspectRatio": "16:9"} | ({"durationSec": duration} if duration else {})
    g = create(client, subscribed, body)
    assert g["durationSec"] == (duration or 5) and g["creditsCost"] == cost and g["aspectRatio"] == "16:9"
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000 - cost


def test_subscription_required(client, owner):
    ws_service.set_credits(owner.workspace_id, set_to=500)  # credits alone are not enough
    r = client.post("/v1/generations", json=IMAGE, headers=key_headers(owner.api_key))
    assert r.status_code == 402 and r.json()["error"] == "subscription_required"
    nothing_written(owner, 500)


def test_a_lapsed_subscription_is_not_current(client, owner):
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=1))
    with time_machine.travel(clock.now() + timedelta(days=2), tick=False):
        r = client.post("/v1/generations", json=IMAGE, headers=key_headers(owner.api_key))
    assert r.status_code == 402 and r.json()["error"] == "subscription_required"


def test_insufficient_credits_debits_nothing(client, subscribed):
    ws_service.set_credits(subscribed.workspace_id, set_to=44)
    r = client.post(
        "/v1/generations", json={**VIDEO, "durationSec": 15}, headers=key_headers(subscribed.api_key)
    )
    assert r.status_code == 402 and r.json()["error"] == "insufficient_credits"
    assert r.json()["details"] == [{"required": 45, "balance": 44, "missing": 1}]
    nothing_written(subscribed, 44)
    g = create(client, subscribed, {**VIDEO, "durationSec": 10})  # 30 of 44
    assert g["creditsCost"] == 30 and credits.balance(subscribed.workspace_id) == 14


def test_the_last_credits_can_be_spent(client, subscribed):
    ws_service.set_credits(subscribed.workspace_id, set_to=15)
    create(client, subscribed, VIDEO)
    assert balance_is_the_ledger(subscribed.workspace_id) == 0
    r = client.post("/v1/generations", json=IMAGE, headers=key_headers(subscribed.api_key))
    assert r.status_code == 402 and r.json()["error"] == "insufficient_credits"


def test_validation_comes_before_the_subscription(client, owner):
    r = client.post("/v1/generations", json={**IMAGE, "type": "gif"}, headers=key_headers(owner.api_key))
    assert r.status_code == 400


def test_concurrent_creations_never_overdraw(settings, subscribed):
    """20 threads race for 100 credits with 45-credit videos: exactly two are accepted, the balance is 10 and is the
    sum of the ledger (SQLite: serialised writers; PostgreSQL: the workspace row lock)."""
    from backend.errors import ApiError
    from backend.services import generations

    ws_service.set_credits(subscribed.workspace_id, set_to=100)
    outcomes: list[str] = []
    start = threading.Barrier(20)

    def one() -> None:
        start.wait()
        try:
            generations.accept(settings, subscribed.workspace_id, {**VIDEO, "duration_sec": 15})
            outcomes.append("accepted")
        except ApiError as exc:
            outcomes.append(exc.code)
        finally:
            from backend.store.db import database

            database.close()

    threads = [threading.Thread(target=one) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["accepted"] * 2 + ["insufficient_credits"] * 18
    assert balance_is_the_ledger(subscribed.workspace_id) == 10
    assert Generation.select().where(Generation.workspace == subscribed.workspace_id).count() == 2


def test_a_generation_can_be_charged_and_refunded_only_once(settings, subscribed):
    import peewee

    from backend.store.db import tx

    g = create_direct(settings, subscribed)
    with pytest.raises(peewee.IntegrityError), tx():
        credits.charge(subscribed.workspace_id, g["id"], 2)
    assert credits.refund(subscribed.workspace_id, g["id"]) is not None
    assert credits.refund(subscribed.workspace_id, g["id"]) is None
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -2), ("refund", 2)]
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000


def create_direct(settings, owner, body=None):  # type: ignore[no-untyped-def]
    from backend.services import generations

    return generations.accept(
        settings, owner.workspace_id, dict(body or {"type": "image", "prompt": "a cup"})
    )


def test_grants_and_operator_changes_are_ledger_entries(settings, owner):
    ws_service.set_plan(owner.workspace_id, "STARTER", "active", clock.now() + timedelta(days=90))
    ws_service.set_credits(owner.workspace_id, add=-50)
    ws_service.set_credits(owner.workspace_id, set_to=70)
    assert [r for r, _ in ledger(owner.workspace_id)] == ["grant", "admin", "admin"]
    assert [a for _, a in ledger(owner.workspace_id)] == [200, -50, -80]
    with pytest.raises(ValueError):
        ws_service.set_credits(owner.workspace_id, add=-71)
    assert balance_is_the_ledger(owner.workspace_id) == 70


# ---------------------------------------------------------------------------------------------- dryRun


def test_dry_run_prices_and_charges_nothing(client, subscribed):
    quote = create(client, subscribed, {**VIDEO, "durationSec": 10}, expect=200, dryRun="true")
    assert quote == {
        "dryRun": True,
        "type": "video",
        "durationSec": 10,
        "creditsCost": 30,
        "balance": 1000,
        "balanceAfter": 970,
        "enough": True,
    }
    nothing_written(subscribed, 1000)
    assert not Event.select().exists()


def test_dry_run_when_the_balance_is_short(client, subscribed):
    ws_service.set_credits(subscribed.workspace_id, set_to=1)
    quote = create(client, subscribed, IMAGE, expect=200, dryRun="true")
    assert (quote["creditsCost"], quote["balance"], quote["balanceAfter"], quote["enough"]) == (
        2,
        1,
        None,
        False,
    )
    nothing_written(subscribed, 1)


def test_dry_run_validates_and_needs_a_subscription(client, owner):
    r = client.post(
        "/v1/generations?dryRun=true", json={**VIDEO, "durationSec": 8}, headers=key_headers(owner.api_key)
    )
    assert problems(r) == [("durationSec", "invalid_duration")]
    r = client.post("/v1/generations?dryRun=true", json=IMAGE, headers=key_headers(owner.api_key))
    assert r.status_code == 402 and r.json()["error"] == "subscription_required"


# ---------------------------------------------------------------------------------------------- production


def _get(client, owner, gid):  # type: ignore[no-untyped-def]
    r = client.get(f"/v1/generations/{gid}", headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    return r.json()


def _events(gid: str) -> list[tuple[str, dict]]:
    return [
        (e.type, e.data) for e in Event.select().where(Event.subject_id == gid).order_by(Event.created_at)
    ]


def test_image_completes_on_the_media_host(client, settings, subscribed):
    g = create(client, subscribed, {**IMAGE, "aspectRatio": "1:1"})
    run_worker(settings)
    done = _get(client, subscribed, g["id"])
    assert done["status"] == "completed" and done["mimeType"] == "image/jpeg" and done["error"] is None
    assert done["mediaUrl"].startswith(settings.public_media_url) and done["completedAt"] is not None
    served = client.get(done["mediaUrl"])
    assert served.status_code == 200 and served.content[:3] == b"\xff\xd8\xff"
    media = Media.get(Media.key == done["mediaUrl"].rsplit("/", 1)[1])
    assert (
        media.origin == "generated" and media.expires_at is None and (media.width, media.height) == (108, 108)
    )
    assert _events(g["id"]) == [("generation.completed", done)]
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -2)]
    request = gen_provider.CALLS[-1]
    assert (request.type, request.aspect_ratio, request.duration_sec, request.prompt) == (
        "image",
        "1:1",
        None,
        IMAGE["prompt"],
    )
    assert request.brand.name == "Test workspace"


def test_video_completes_and_posts_to_youtube_as_synthetic_media(client, settings, subscribed):
    from backend.services import accounts

    accounts.connect_sandbox_defaults(settings, subscribed.workspace_id)
    g = create(client, subscribed, {**VIDEO, "durationSec": 10})
    run_worker(settings)
    done = _get(client, subscribed, g["id"])
    assert done["status"] == "completed" and done["mimeType"] == "video/mp4" and done["durationSec"] == 10
    assert gen_provider.CALLS[-1].duration_sec == 10
    r = client.post(
        "/v1/posts",
        json={
            "targets": ["youtube"],
            "content": "Fresh beans",
            "mediaUrls": [done["mediaUrl"]],
            "options": {"youtube": {"containsSyntheticMedia": False}},
        },
        headers=key_headers(subscribed.api_key),
    )
    assert r.status_code == 202, r.text
    assert r.json()["options"]["youtube"]["containsSyntheticMedia"] is True


def test_video_from_start_images(client, settings, subscribed):
    first, last = _host_image(settings, subscribed), _host_image(settings, subscribed)
    g = create(client, subscribed, {**VIDEO, "sourceUrls": [first, last]})
    assert g["sourceUrls"] == [first, last]
    run_worker(settings)
    assert _get(client, subscribed, g["id"])["status"] == "completed"
    sources = gen_provider.CALLS[-1].sources
    assert len(sources) == 2 and all(s[:3] == b"\xff\xd8\xff" for s in sources)


def _host_image(settings, owner) -> str:  # type: ignore[no-untyped-def]
    from backend.services import media as media_service
    from tests.media import corpus

    return media_service.url_for(
        settings, media_service.ingest_bytes(settings, owner.workspace_id, corpus.jpeg(80, 60)).key
    )


def _failed_and_refunded_once(client, owner, gid: str, cost: int) -> dict:  # type: ignore[type-arg]
    failed = _get(client, owner, gid)
    assert failed["status"] == "failed" and failed["completedAt"] is not None and failed["mediaUrl"] is None
    assert failed["error"].endswith(f"Your {cost} credits were refunded.")
    assert ledger(owner.workspace_id, gid) == [("charge", -cost), ("refund", cost)]
    assert _events(gid) == [("generation.failed", failed)]
    assert (
        not Job.select()
        .where((Job.kind == "generation.produce") & Job.status.not_in(["done", "dead"]))
        .exists()
    )
    return failed


def test_guard_refusal_fails_and_refunds(client, settings, subscribed):
    g = create(client, subscribed, {**VIDEO, "prompt": "A GORY scene, in slow motion"})
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 15)
    assert "content policy" in failed["error"] and "\u201cgore\u201d" not in failed["error"]
    assert "\u201cgory\u201d" in failed["error"] and "rephrase" in failed["error"]
    assert gen_provider.CALLS == []  # the provider never saw it
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000


def test_guard_terms_from_the_settings_and_a_file(client, settings, subscribed, tmp_path):
    settings.generation_guard_terms = "competitor brand, acme"
    policy_file = tmp_path / "guard.txt"
    policy_file.write_text("# our policy\nmoonshine   # no spirits\n!suicide\n")
    settings.generation_guard_file = policy_file
    refused = create(client, subscribed, {**IMAGE, "prompt": "Our cup next to an ACME mug"})
    spirits = create(client, subscribed, {**IMAGE, "prompt": "Moonshine tasting"})
    allowed = create(client, subscribed, {**IMAGE, "prompt": "Suicide prevention helpline poster"})
    run_worker(settings)
    assert "\u201cacme\u201d" in _failed_and_refunded_once(client, subscribed, refused["id"], 2)["error"]
    assert "\u201cmoonshine\u201d" in _failed_and_refunded_once(client, subscribed, spirits["id"], 2)["error"]
    assert _get(client, subscribed, allowed["id"])["status"] == "completed"


def test_provider_refusal_fails_and_refunds(client, settings, subscribed):
    g = create(client, subscribed, {**IMAGE, "prompt": "a cup [refuse]"})
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 2)
    assert failed["error"].startswith(
        "The provider's own policy refuses this prompt: describe the scene differently."
    )


def test_provider_unavailable_is_retried_then_fails_and_refunds(client, settings, subscribed):
    settings.generation_max_attempts = 3
    g = create(client, subscribed, {**VIDEO, "prompt": "beans [unavailable]", "durationSec": 15})
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 45)
    assert "overloaded" in failed["error"] and "tried 3 times" in failed["error"]
    assert len(gen_provider.CALLS) == 3
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000


def test_provider_unavailable_once_then_completes_charged_once(client, settings, subscribed):
    g = create(client, subscribed, {**IMAGE, "prompt": "beans [unavailable x1]"})
    run_worker(settings)
    assert _get(client, subscribed, g["id"])["status"] == "completed"
    assert len(gen_provider.CALLS) == 2
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -2)]
    assert [t for t, _ in _events(g["id"])] == ["generation.completed"]


def test_an_unexpected_error_ends_failed_and_refunded_once_the_job_is_buried(client, settings, subscribed):
    settings.generation_max_attempts = 2
    g = create(client, subscribed, {**IMAGE, "prompt": "a cup [crash]"})
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 2)
    assert failed["error"].startswith("An internal error stopped this creation")
    assert Job.get(Job.dedupe_key == f"generation:{g['id']}").status == "dead"


def test_a_start_image_gone_before_production_fails_and_refunds(client, settings, subscribed):
    from backend.services import media as media_service

    url = _host_image(settings, subscribed)
    g = create(client, subscribed, {**VIDEO, "sourceUrls": [url]})
    media_service.delete_media(settings, subscribed.workspace_id, url.rsplit("/", 1)[1])  # e.g. retention
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 15)
    assert failed["error"].startswith(f"The start image {url} could not be read")
    assert "upload it with POST /v1/media" in failed["error"] and gen_provider.CALLS == []


def test_every_failure_path_after_the_first_refunds_nothing(client, settings, subscribed):
    from backend.services import generations

    g = create(client, subscribed, IMAGE)
    assert generations.fail(g["id"], "first reason") is True
    assert generations.fail(g["id"], "second reason") is False
    generations.give_up(g["id"], "buried")
    run_worker(settings)  # its job finds it final and ends
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 2)
    assert failed["error"] == "First reason. Your 2 credits were refunded." and gen_provider.CALLS == []


def test_a_misconfigured_provider_fails_it_at_once_and_says_so_in_the_log(
    client, settings, subscribed, caplog
):
    settings.generation_provider = "dall-e-9"
    g = create(client, subscribed, IMAGE)
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 2)
    assert failed["error"].startswith("Creations are not available on this server right now")
    assert "SOCIALPUB_GENERATION_PROVIDER='dall-e-9' names no generation provider" in caplog.text


def test_a_generation_interrupted_mid_production_fails_on_the_next_start(client, settings, subscribed):
    """A worker died (its process is gone) while the generation was `processing`: the next worker takes the job
    over and fails the generation, refunded once; it is not produced behind the user's back."""
    g = create(client, subscribed, IMAGE)
    now = clock.now()
    Generation.update(status="processing", started_at=now).where(Generation.id == g["id"]).execute()
    Job.update(
        status="running",
        attempts=1,
        locked_by="worker:elsewhere:1:1#1",
        lease_until=now - timedelta(seconds=1),
    ).where(Job.dedupe_key == f"generation:{g['id']}").execute()
    leftovers = settings.data_dir / "tmp" / "generations" / f"{g['id']}-abc"
    leftovers.mkdir(parents=True)
    (leftovers / "half.mp4").write_bytes(b"...")
    run_worker(settings)
    failed = _failed_and_refunded_once(client, subscribed, g["id"], 2)
    assert failed["error"].startswith("Production was interrupted by a restart of the service")
    assert gen_provider.CALLS == [] and not leftovers.exists()


def test_a_job_taken_over_before_production_started_still_produces(client, settings, subscribed):
    g = create(client, subscribed, IMAGE)
    Job.update(
        status="running",
        attempts=1,
        locked_by="worker:elsewhere:1:1#1",
        lease_until=clock.now() - timedelta(seconds=1),
    ).where(Job.dedupe_key == f"generation:{g['id']}").execute()
    run_worker(settings)
    assert _get(client, subscribed, g["id"])["status"] == "completed"


def test_a_worker_runs_at_most_generation_concurrency_productions_at_once(
    client, settings, subscribed, monkeypatch
):
    from backend.jobs.worker import Worker
    from backend.services import generations

    monkeypatch.setenv("SOCIALPUB_TEST_PROVIDER_SLOW_S", "0.3")
    monkeypatch.setattr(generations, "BUSY_RETRY_S", 0.05)
    settings.generation_concurrency = 1
    ids = [create(client, subscribed, {**IMAGE, "prompt": f"cup {i} [slow]"})["id"] for i in range(3)]
    Worker(settings, concurrency=4).run_until_idle(max_seconds=20, settle_s=1.0)
    assert [_get(client, subscribed, gid)["status"] for gid in ids] == ["completed"] * 3
    assert gen_provider.peak() == 1 and len(gen_provider.CALLS) == 3
    assert all(Job.get(Job.dedupe_key == f"generation:{gid}").attempts >= 1 for gid in ids)


# ---------------------------------------------------------------------------------------------- reads, list


def test_get_unknown_and_other_workspace(client, settings, subscribed):
    other = make_owner(settings, "Other workspace", "other@test.local")
    g = create(client, subscribed, IMAGE)
    for who, gid in ((subscribed, "gen_nope"), (other, g["id"])):
        r = client.get(f"/v1/generations/{gid}", headers=key_headers(who.api_key))
        assert r.status_code == 404 and r.json()["error"] == "generation_not_found"
        r = client.delete(f"/v1/generations/{gid}", headers=key_headers(who.api_key))
        assert r.status_code == 404 and r.json()["error"] == "generation_not_found"
    listing = client.get("/v1/generations", headers=key_headers(other.api_key)).json()
    assert listing["items"] == [] and listing["credits"]["balance"] == 0


def test_list_newest_first_with_cursor_and_credits(client, subscribed):
    ids = [create(client, subscribed, {**IMAGE, "prompt": f"cup number {i}"})["id"] for i in range(5)]
    h = key_headers(subscribed.api_key)
    first = client.get("/v1/generations", params={"limit": 2}, headers=h).json()
    assert [g["id"] for g in first["items"]] == ids[::-1][:2]
    assert first["credits"] == {
        "balance": 990,
        "cost": {"IMAGE": 2, "VIDEO": 15},
        "clip": {"5": 15, "10": 30, "15": 45},
    }
    seen = [g["id"] for g in first["items"]]
    cursor = first["nextCursor"]
    while cursor:
        page = client.get("/v1/generations", params={"limit": 2, "cursor": cursor}, headers=h).json()
        seen += [g["id"] for g in page["items"]]
        cursor = page["nextCursor"]
    assert seen == ids[::-1]
    assert client.get("/v1/generations", params={"status": "completed"}, headers=h).json()["items"] == []
    assert (
        len(
            client.get(
                "/v1/generations", params={"type": "image", "status": ["pending", "failed"]}, headers=h
            ).json()["items"]
        )
        == 5
    )
    r = client.get("/v1/generations", params={"cursor": "bm90LWEtY3Vyc29y"}, headers=h)
    assert r.status_code == 400 and r.json()["error"] == "invalid_cursor"


# ---------------------------------------------------------------------------------------------- delete


def test_delete_a_completed_generation_deletes_its_file(client, settings, subscribed):
    g = create(client, subscribed, IMAGE)
    run_worker(settings)
    url = _get(client, subscribed, g["id"])["mediaUrl"]
    h = key_headers(subscribed.api_key)
    r = client.delete(f"/v1/generations/{g['id']}", headers=h)
    assert r.status_code == 200
    assert r.json() == {
        "ok": True,
        "id": g["id"],
        "status": "completed",
        "mediaDeleted": True,
        "mediaKeptBy": [],
        "mediaKeptUntil": None,
        "creditsRefunded": 0,
    }
    assert client.get(url).status_code == 404
    assert not Media.select().where(Media.key == url.rsplit("/", 1)[1]).exists()
    assert client.get(f"/v1/generations/{g['id']}", headers=h).status_code == 404
    assert client.get("/v1/generations", headers=h).json()["items"] == []
    assert client.delete(f"/v1/generations/{g['id']}", headers=h).status_code == 404
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -2)]


def test_delete_keeps_a_file_a_scheduled_post_uses(client, settings, subscribed):
    from backend.services import accounts

    accounts.connect_sandbox_defaults(settings, subscribed.workspace_id)
    g = create(client, subscribed, VIDEO)
    run_worker(settings)
    url = _get(client, subscribed, g["id"])["mediaUrl"]
    h = key_headers(subscribed.api_key)
    post = client.post(
        "/v1/posts",
        json={
            "targets": ["youtube"],
            "content": "Soon",
            "mediaUrls": [url],
            "scheduledAt": clock.iso(clock.now() + timedelta(days=3)),
        },
        headers=h,
    )
    assert post.status_code == 202, post.text
    r = client.delete(f"/v1/generations/{g['id']}", headers=h).json()
    assert (
        r["mediaDeleted"] is False and r["mediaKeptBy"] == [post.json()["id"]] and r["mediaKeptUntil"] is None
    )
    assert client.get(url).status_code == 200  # still served for the post
    assert client.get(f"/v1/generations/{g['id']}", headers=h).status_code == 404
    assert (
        client.delete(f"/v1/posts/{post.json()['id']}", headers=h).status_code == 204
    )  # cancelled: nothing holds it
    assert client.get(url).status_code == 404


def test_delete_a_pending_generation_refunds_it(client, settings, subscribed):
    g = create(client, subscribed, {**VIDEO, "durationSec": 15})
    r = client.delete(f"/v1/generations/{g['id']}", headers=key_headers(subscribed.api_key)).json()
    assert (r["status"], r["creditsRefunded"], r["mediaDeleted"]) == ("pending", 45, False)
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -45), ("refund", 45)]
    assert not Job.select().where(Job.dedupe_key == f"generation:{g['id']}").exists()
    run_worker(settings)
    assert gen_provider.CALLS == []
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000


def test_delete_while_processing_is_refused(client, subscribed):
    g = create(client, subscribed, IMAGE)
    Generation.update(status="processing").where(Generation.id == g["id"]).execute()
    r = client.delete(f"/v1/generations/{g['id']}", headers=key_headers(subscribed.api_key))
    assert r.status_code == 409 and r.json()["error"] == "generation_in_progress"


def test_delete_a_failed_generation_refunds_nothing_more(client, settings, subscribed):
    g = create(client, subscribed, {**IMAGE, "prompt": "cup [refuse]"})
    run_worker(settings)
    r = client.delete(f"/v1/generations/{g['id']}", headers=key_headers(subscribed.api_key)).json()
    assert (r["status"], r["creditsRefunded"], r["mediaDeleted"]) == ("failed", 0, False)
    assert ledger(subscribed.workspace_id, g["id"]) == [("charge", -2), ("refund", 2)]


# ---------------------------------------------------------------------------------------------- scopes


def test_scopes(client, subscribed):
    g = create(client, subscribed, IMAGE)
    _, reader = keys_service.create(subscribed.workspace_id, "reader", None, ["videos:read"])
    _, writer = keys_service.create(subscribed.workspace_id, "writer", None, ["generations:write"])
    _, poster = keys_service.create(
        subscribed.workspace_id, "poster", None, ["publish:posts", "workspace:read"]
    )
    calls = {
        "create": lambda h: client.post("/v1/generations", json=IMAGE, headers=h),
        "dry": lambda h: client.post("/v1/generations?dryRun=true", json=IMAGE, headers=h),
        "list": lambda h: client.get("/v1/generations", headers=h),
        "get": lambda h: client.get(f"/v1/generations/{g['id']}", headers=h),
        "delete": lambda h: client.delete(f"/v1/generations/{g['id']}_x", headers=h),
    }
    expected = {
        "reader": {"create": 403, "dry": 403, "list": 200, "get": 200, "delete": 403},
        "writer": {"create": 202, "dry": 200, "list": 200, "get": 200, "delete": 404},
        "poster": {"create": 403, "dry": 403, "list": 403, "get": 403, "delete": 403},
        "session": {"create": 202, "dry": 200, "list": 200, "get": 200, "delete": 404},
    }
    headers = {
        "reader": key_headers(reader),
        "writer": key_headers(writer),
        "poster": key_headers(poster),
        "session": session_headers(subscribed.session_token),
    }
    for who, codes in expected.items():
        got = {name: call(headers[who]).status_code for name, call in calls.items()}
        assert got == codes, who
    r = calls["create"](headers["reader"])
    assert (
        r.json()["error"] == "insufficient_scope"
        and r.json()["details"][0]["required"] == "generations:write"
    )


def test_rate_limited_like_every_route(client, settings, subscribed):
    settings.rate_limit_per_minute = 2
    h = key_headers(subscribed.api_key)
    start = clock.now().replace(second=1, microsecond=0) + timedelta(minutes=1)
    with time_machine.travel(start, tick=False):
        codes = [client.get("/v1/generations", headers=h).status_code for _ in range(3)]
    assert codes == [200, 200, 429]


# ---- a photo as the background of an image (issue 33: the announcement card, an extension) -------------------


def test_a_background_photo_goes_to_the_provider_and_is_shown(client, subscribed, settings):
    url = _host_image(settings, subscribed)
    made = create(client, subscribed, {**IMAGE, "backgroundUrl": url})
    assert made["backgroundUrl"] == url and made["status"] == "pending"
    run_worker(settings)
    [request] = [c for c in gen_provider.CALLS if c.prompt == IMAGE["prompt"]]
    assert request.background is not None and request.background[:3] == b"\xff\xd8\xff"  # the stored JPEG
    shown = client.get(f"/v1/generations/{made['id']}", headers=key_headers(subscribed.api_key)).json()
    assert shown["status"] == "completed" and shown["backgroundUrl"] == url
    plain = create(client, subscribed, IMAGE)
    assert plain["backgroundUrl"] is None


def test_a_background_is_for_images_and_must_be_an_image(client, subscribed, settings):
    from backend.services import media as media_service
    from tests.media import corpus

    url = _host_image(settings, subscribed)
    assert rejected(client, subscribed, {**VIDEO, "backgroundUrl": url}) == [
        ("backgroundUrl", "background_url_not_allowed_for_video")
    ]
    video = media_service.ingest_bytes(settings, subscribed.workspace_id, corpus.video("mp4"))
    cases = {
        "http://cdn.example.com/a.jpg": "background_url_unreadable",  # not https
        settings.public_media_url + "med_00000000000000000000000000.jpg": "background_url_unreadable",
        media_service.url_for(settings, video.key): "background_not_an_image",
    }
    for bad, code in cases.items():
        r = client.post(
            "/v1/generations", json={**IMAGE, "backgroundUrl": bad}, headers=key_headers(subscribed.api_key)
        )
        assert problems(r) == [("backgroundUrl", code)], bad
        assert r.json()["details"][0]["backgroundUrl"] == bad
    nothing_written(subscribed, 1000)


def test_a_name_socialpub_gave_is_not_a_brand(settings, subscribed):
    """Issue 33: the tour's image closed on "Local workspace" (make run's name): a name the user never chose."""
    from backend.operator import devrun
    from backend.services import generations as gen_service

    assert (
        "Local workspace" in ws_service.PLACEHOLDER_NAMES and "My workspace" in ws_service.PLACEHOLDER_NAMES
    )
    import inspect

    from backend.operator import cli as operator_cli

    assert '"Local workspace"' in inspect.getsource(devrun.main)  # make run's name is one of them
    assert operator_cli.init_cmd.params[0].default in ws_service.PLACEHOLDER_NAMES  # so is init's default
    for name, shown in (
        ("Local workspace", None),
        ("My workspace", None),
        ("Acme Roasters", "Acme Roasters"),
    ):
        ws_service.edit(subscribed.workspace_id, {"name": name})
        assert gen_service._brand(settings, subscribed.workspace_id).name == shown
