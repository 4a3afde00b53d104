# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""`idempotencyKey` on POST /v1/generations (extension, issue 15 item 13): a replay answers 200 with the generation
already made with the key and charges nothing; concurrent replays charge once (the UNIQUE (workspace, key) index
decides); another workspace's key is independent; a failed generation keeps its key (a replay answers it, failed);
a deleted generation's key is released."""

from __future__ import annotations

import threading

import pytest

from backend.services import credits
from backend.store.models import Generation
from tests.conftest import key_headers
from tests.support.gen_fixtures import (  # noqa: F401  (fixtures)
    balance_is_the_ledger,
    gen_provider_dir,
    ledger,
    run_worker,
    subscribed,
)

pytestmark = pytest.mark.usefixtures("gen_provider_dir")

IMAGE = {"type": "image", "prompt": "A flat white on a sunny terrace", "idempotencyKey": "recipe-gen-abc"}


def post(client, owner, body):  # type: ignore[no-untyped-def]
    return client.post("/v1/generations", json=body, headers=key_headers(owner.api_key))


def test_a_replay_answers_the_same_generation_with_200_and_charges_once(client, subscribed):
    first = post(client, subscribed, IMAGE)
    assert first.status_code == 202, first.text
    assert first.json()["idempotencyKey"] == "recipe-gen-abc"
    again = post(client, subscribed, IMAGE)
    assert again.status_code == 200 and again.json() == first.json()
    other_body = post(client, subscribed, {**IMAGE, "prompt": "something else entirely"})
    assert other_body.status_code == 200 and other_body.json()["id"] == first.json()["id"]  # the key decides
    assert ledger(subscribed.workspace_id) == [("grant", 1000), ("charge", -2)]
    assert balance_is_the_ledger(subscribed.workspace_id) == 998
    without = post(client, subscribed, {k: v for k, v in IMAGE.items() if k != "idempotencyKey"})
    assert without.status_code == 202 and without.json()["idempotencyKey"] is None


def test_a_key_is_at_most_200_characters(client, subscribed):
    assert post(client, subscribed, {**IMAGE, "idempotencyKey": "k" * 200}).status_code == 202
    r = post(client, subscribed, {**IMAGE, "idempotencyKey": "k" * 201})
    assert r.status_code == 400 and r.json()["details"][0]["field"] == "idempotencyKey"


def test_dry_run_ignores_the_key(client, subscribed):
    r = client.post(
        "/v1/generations", json=IMAGE, params={"dryRun": "true"}, headers=key_headers(subscribed.api_key)
    )
    assert r.status_code == 200 and r.json()["dryRun"] is True
    assert post(client, subscribed, IMAGE).status_code == 202  # the key was not taken by the dry run


def test_concurrent_replays_charge_once(settings, subscribed):
    from backend.services import generations

    ids: list[str] = []
    errors: list[str] = []
    start = threading.Barrier(8)

    def one() -> None:
        start.wait()
        try:
            ids.append(
                generations.accept(
                    settings,
                    subscribed.workspace_id,
                    {"type": "video", "prompt": "Beans", "idempotency_key": "same"},
                )["id"]
            )
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
        finally:
            from backend.store.db import database

            database.close()

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(ids) == 8 and len(set(ids)) == 1
    assert Generation.select().where(Generation.workspace == subscribed.workspace_id).count() == 1
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000 - 15


def test_another_workspaces_key_is_independent(client, subscribed, other_owner):
    from datetime import timedelta

    from backend import clock
    from backend.services import workspace as ws_service

    other = other_owner
    ws_service.set_plan(other.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))
    mine, theirs = post(client, subscribed, IMAGE), post(client, other, IMAGE)
    assert mine.status_code == theirs.status_code == 202 and mine.json()["id"] != theirs.json()["id"]
    assert credits.balance(subscribed.workspace_id) == credits.balance(other.workspace_id) == 998


def test_insufficient_credits_leaves_the_key_free(client, subscribed):
    from backend.services import workspace as ws_service

    ws_service.set_credits(subscribed.workspace_id, set_to=1)
    assert post(client, subscribed, IMAGE).status_code == 402
    assert not Generation.select().exists()
    ws_service.set_credits(subscribed.workspace_id, set_to=10)
    assert post(client, subscribed, IMAGE).status_code == 202


def test_a_failed_generations_key_answers_it_failed_and_a_deleted_ones_is_released(
    client, settings, subscribed
):
    body = {**IMAGE, "prompt": "A gory scene"}
    g = post(client, subscribed, body).json()
    run_worker(settings)
    replay = post(client, subscribed, body)
    assert (
        replay.status_code == 200 and replay.json()["status"] == "failed" and replay.json()["id"] == g["id"]
    )
    assert balance_is_the_ledger(subscribed.workspace_id) == 1000  # charged once, refunded once
    assert (
        client.delete(f"/v1/generations/{g['id']}", headers=key_headers(subscribed.api_key)).status_code
        == 200
    )
    fresh = post(client, subscribed, {**IMAGE})
    assert fresh.status_code == 202 and fresh.json()["id"] != g["id"]
