"""API keys (spec 2.1, 3.4, 4.1, 5): creation rules, states, purge, session-only management."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.services.scopes import ALL_SCOPES
from backend.store.models import ApiKey
from tests.conftest import key_headers, session_headers


def create(client, owner, **body):
    return client.post("/v1/api-keys", json=body, headers=session_headers(owner.session_token))


def test_create_defaults_all_scopes_90_days_and_shows_key_once(client, owner):
    r = create(client, owner, name="ci")
    assert r.status_code == 201
    body = r.json()
    assert set(body) >= {"id", "name", "keyPrefix", "scopes", "expiresAt", "key"}
    assert body["scopes"] == list(ALL_SCOPES)
    assert body["key"].startswith(body["keyPrefix"])
    prefix = body["key"].split("v1-")[0] + "v1-"
    assert prefix.endswith("v1-")
    # at least 256 random bits after the prefix (base64url: 43 chars carry 256 bits)
    assert len(body["key"]) - len(prefix) >= 43
    expires = clock.to_utc(
        __import__("datetime").datetime.fromisoformat(body["expiresAt"].replace("Z", "+00:00"))
    )
    assert abs((expires - clock.now()) - timedelta(days=90)) < timedelta(minutes=1)
    listed = client.get("/v1/api-keys", headers=session_headers(owner.session_token)).json()["items"]
    mine = next(k for k in listed if k["id"] == body["id"])
    assert "key" not in mine
    assert mine["keyPrefix"] == body["keyPrefix"]
    assert {"lastUsedAt", "revokedAt"} <= set(mine)


def test_a_key_without_a_name_or_with_a_blank_one_is_named_api_key(client, owner):
    assert create(client, owner).json()["name"] == "API key"
    assert create(client, owner, name="   ").json()["name"] == "API key"
    assert create(client, owner, name=" ci ").json()["name"] == "ci"


def test_only_a_sha256_hash_is_stored(client, owner):
    body = create(client, owner, name="x").json()
    row = ApiKey.get_by_id(body["id"])
    import hashlib

    assert row.key_hash == hashlib.sha256(body["key"].encode()).hexdigest()
    for value in row.__data__.values():
        assert body["key"] not in str(value)


@pytest.mark.parametrize(
    "days,ok",
    [
        (30, True),
        (90, True),
        (365, True),
        (None, True),
        (7, False),
        (0, False),
        ("90", False),
        (91, False),
        (-30, False),
    ],
)
def test_expires_in_days(client, owner, days, ok):
    r = create(client, owner, name="k", expiresInDays=days)
    if ok:
        assert r.status_code == 201, r.text
        if days is None:
            assert r.json()["expiresAt"] is None
    else:
        assert r.status_code == 400
        assert r.json()["error"] == "validation_error"
        assert any(d["field"].startswith("expiresInDays") for d in r.json()["details"])


def test_unknown_scope_is_400_and_subset_kept(client, owner):
    r = create(client, owner, name="k", scopes=["media:write", "nope:x"])
    assert r.status_code == 400
    assert r.json()["error"] == "validation_error"
    r = create(client, owner, name="k", scopes=["media:write"])
    assert r.status_code == 201 and r.json()["scopes"] == ["media:write"]


def test_key_states_unknown_revoked_expired(client, owner):
    key = create(client, owner, name="k", expiresInDays=30).json()
    h = key_headers(key["key"])
    assert client.get("/v1/workspace", headers=h).status_code == 200
    assert (
        client.get("/v1/workspace", headers=key_headers(key["key"][:-2] + "zz")).json()["error"]
        == "invalid_api_key"
    )
    assert client.get("/v1/workspace", headers=key_headers("garbage")).json()["error"] == "invalid_api_key"
    with time_machine.travel(clock.now() + timedelta(days=31), tick=False):
        r = client.get("/v1/workspace", headers=h)
        assert r.status_code == 401 and r.json()["error"] == "api_key_expired"
    r = client.delete(f"/v1/api-keys/{key['id']}", headers=session_headers(owner.session_token))
    assert r.status_code == 200 and r.json()["ok"] is True
    r = client.get("/v1/workspace", headers=h)
    assert r.status_code == 401 and r.json()["error"] == "api_key_revoked"
    listed = client.get("/v1/api-keys", headers=session_headers(owner.session_token)).json()["items"]
    assert next(k for k in listed if k["id"] == key["id"])["revokedAt"] is not None


def test_a_revocation_elsewhere_is_seen_within_the_verified_ttl(client, owner):
    """Another process sharing the store (another server, an embedded backend) revokes the key: this process,
    which verified it a moment before, refuses it once VERIFIED_TTL has passed since that verification."""
    from backend.services.keys import VERIFIED_TTL

    key = create(client, owner, name="k").json()
    h = key_headers(key["key"])
    start = clock.now()
    with time_machine.travel(start, tick=False):
        assert client.get("/v1/workspace", headers=h).status_code == 200
        ApiKey.update(revoked_at=clock.now()).where(
            ApiKey.id == key["id"]
        ).execute()  # as another process does
    with time_machine.travel(start + VERIFIED_TTL, tick=False):
        r = client.get("/v1/workspace", headers=h)
        assert r.status_code == 401 and r.json()["error"] == "api_key_revoked"


def test_an_expiry_is_checked_on_every_request(client, owner):
    key = create(client, owner, name="k", expiresInDays=30).json()
    expires = clock.now() + timedelta(days=30)
    with time_machine.travel(expires - timedelta(milliseconds=500), tick=False):
        assert client.get("/v1/workspace", headers=key_headers(key["key"])).status_code == 200
    with time_machine.travel(expires + timedelta(milliseconds=100), tick=False):
        r = client.get("/v1/workspace", headers=key_headers(key["key"]))
        assert r.status_code == 401 and r.json()["error"] == "api_key_expired"


def test_last_used_at_is_kept(client, owner):
    key = create(client, owner, name="k").json()
    assert ApiKey.get_by_id(key["id"]).last_used_at is None
    client.get("/v1/workspace", headers=key_headers(key["key"]))
    assert ApiKey.get_by_id(key["id"]).last_used_at is not None


def test_purge_refused_while_active_and_never_revokes(client, owner):
    key = create(client, owner, name="k").json()
    s = session_headers(owner.session_token)
    r = client.delete(f"/v1/api-keys/{key['id']}?purge=true", headers=s)
    assert r.status_code == 409 and r.json()["error"] == "api_key_still_active"
    assert client.get("/v1/workspace", headers=key_headers(key["key"])).status_code == 200
    assert ApiKey.get_by_id(key["id"]).revoked_at is None


def test_purge_erases_revoked_and_expired(client, owner):
    s = session_headers(owner.session_token)
    revoked = create(client, owner, name="r").json()
    client.delete(f"/v1/api-keys/{revoked['id']}", headers=s)
    r = client.delete(f"/v1/api-keys/{revoked['id']}?purge=true", headers=s)
    assert r.status_code == 200 and r.json()["purged"] is True
    assert ApiKey.get_or_none(ApiKey.id == revoked["id"]) is None
    assert all(k["id"] != revoked["id"] for k in client.get("/v1/api-keys", headers=s).json()["items"])
    # the erased key now reads as unknown
    assert (
        client.get("/v1/workspace", headers=key_headers(revoked["key"])).json()["error"] == "invalid_api_key"
    )

    expiring = create(client, owner, name="e", expiresInDays=30).json()
    with time_machine.travel(clock.now() + timedelta(days=30, seconds=1), tick=False):
        token = client.post("/v1/auth/login", json={"email": owner.email, "password": owner.password}).json()
        r = client.delete(
            f"/v1/api-keys/{expiring['id']}?purge=true", headers=session_headers(token["sessionToken"])
        )
        assert r.status_code == 200
    assert ApiKey.get_or_none(ApiKey.id == expiring["id"]) is None


def test_api_key_cannot_manage_keys(client, owner):
    h = key_headers(owner.api_key)
    for method, path in [
        ("post", "/v1/api-keys"),
        ("get", "/v1/api-keys"),
        ("delete", f"/v1/api-keys/{owner.api_key_id}"),
    ]:
        r = client.request(method.upper(), path, headers=h, json={"name": "x"} if method == "post" else None)
        assert r.status_code in (401, 403)
        assert r.json()["error"] == "session_required"
    r = client.get("/v1/api-keys")
    assert r.status_code == 401 and r.json()["error"] == "session_required"


def test_other_workspace_keys_are_invisible(client, owner, other_owner):
    s_other = session_headers(other_owner.session_token)
    r = client.delete(f"/v1/api-keys/{owner.api_key_id}", headers=s_other)
    assert r.status_code == 404
    r = client.delete(f"/v1/api-keys/{owner.api_key_id}?purge=true", headers=s_other)
    assert r.status_code == 404
    ids = [k["id"] for k in client.get("/v1/api-keys", headers=s_other).json()["items"]]
    assert owner.api_key_id not in ids
    # and a key of one workspace reads its own workspace only
    assert (
        client.get("/v1/workspace", headers=key_headers(other_owner.api_key)).json()["id"]
        == other_owner.workspace_id
    )


def test_the_wire_format_knows_every_scope():
    """backend/schemas/keys.py (shared with the client) spells the scopes itself: it must list every one."""
    from typing import get_args

    from backend.schemas.keys import ScopeName
    from backend.services.scopes import ALL_SCOPES

    assert set(get_args(ScopeName)) == set(ALL_SCOPES)
