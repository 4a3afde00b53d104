"""Security review: nothing a client can send produces a 500."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.services import accounts
from tests.conftest import key_headers

# Valid ISO 8601 with an offset, but outside what a UTC datetime can hold once converted.
EDGES = ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"]


@pytest.fixture
def ready(settings, owner):  # type: ignore[no-untyped-def]
    settings.rate_limit_per_minute = 1_000_000
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    return key_headers(owner.api_key)


@pytest.mark.parametrize("when", EDGES)
def test_out_of_range_scheduled_at_on_create_is_400(client, ready, when) -> None:  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/posts", json={"targets": ["facebook"], "content": "x", "scheduledAt": when}, headers=ready
    )
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_scheduled_at"


@pytest.mark.parametrize("when", EDGES)
def test_out_of_range_scheduled_at_on_patch_is_400(client, ready, when) -> None:  # type: ignore[no-untyped-def]
    at = clock.iso(clock.now() + timedelta(days=1))
    pid = client.post(
        "/v1/posts", json={"targets": ["facebook"], "content": "x", "scheduledAt": at}, headers=ready
    ).json()["id"]
    r = client.patch(f"/v1/posts/{pid}", json={"scheduledAt": when}, headers=ready)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_scheduled_at"


@pytest.mark.parametrize("param", ["from", "to"])
@pytest.mark.parametrize("when", EDGES)
def test_out_of_range_list_bounds_are_400(client, ready, param, when) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/v1/posts", params={param: when}, headers=ready)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "invalid_timestamp"
