"""`network_instance` (migration 0038): one app per (network, host), its client secret encrypted at rest."""

from __future__ import annotations

import peewee
import pytest

from backend import clock
from backend.store.db import database
from backend.store.models import NetworkInstance


def _create(host: str = "social.example") -> NetworkInstance:
    now = clock.now()
    return NetworkInstance.create(
        network="fediverse_test",
        host=host,
        client_id="cid",
        client_secret="s3cret-value",
        scopes="write:statuses write:media",
        redirect_uris="http://127.0.0.1/callback",
        limits={"max_characters": 500},
        limits_read_at=now,
        created_at=now,
        updated_at=now,
    )


def test_the_secret_is_encrypted_at_rest_and_out_of_repr(settings) -> None:  # type: ignore[no-untyped-def]
    row = _create()
    stored = database.execute_sql("SELECT client_secret FROM network_instance").fetchone()[0]
    assert stored.startswith("enc:v1:") and "s3cret-value" not in stored
    back = NetworkInstance.get(NetworkInstance.host == "social.example")
    assert back.client_secret == "s3cret-value"
    assert back.limits == {"max_characters": 500}
    assert "s3cret" not in repr(row)


def test_one_app_per_network_and_host(settings) -> None:  # type: ignore[no-untyped-def]
    _create()
    _create("other.example")
    with pytest.raises(peewee.IntegrityError), database.atomic():
        _create()
