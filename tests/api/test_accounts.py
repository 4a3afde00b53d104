# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""Connected accounts (spec 2.7, 4.7): listing, defaults, sandbox connection, plan limits, isolation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.services import accounts as accounts_service
from backend.services import plans
from backend.services import workspace as ws_service
from backend.store.models import Account
from tests.api.posts_support import fast  # noqa: F401  (fixture)
from tests.conftest import key_headers, session_headers

pytestmark = pytest.mark.usefixtures("fast")


def connect(client, owner, **body):  # type: ignore[no-untyped-def]
    return client.post("/v1/accounts", json=body, headers=session_headers(owner.session_token))


def listing(client, owner):  # type: ignore[no-untyped-def]
    r = client.get("/v1/accounts", headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    return r.json()


def test_init_sandbox_defaults_one_per_network_and_fit_free_plan(settings, client, owner):
    created = accounts_service.connect_sandbox_defaults(settings, owner.workspace_id)
    assert sorted(a["platform"] for a in created) == [
        "bluesky",
        "facebook",
        "instagram",
        "linkedin",
        "mastodon",
        "threads",
        "tiktok",
        "youtube",
    ]
    assert plans.PLANS["FREE"].max_accounts >= len(created)
    body = listing(client, owner)
    assert body["limit"] == plans.PLANS["FREE"].max_accounts and body["used"] == len(created)
    assert {a["id"] for a in body["items"]} == {a["id"] for a in created}
    for item in body["items"]:
        assert set(item) >= {
            "id",
            "platform",
            "name",
            "status",
            "isDefault",
            "kind",
            "behaviour",
            "connectedAt",
        }
        assert item["isDefault"] and item["status"] == "active" and item["kind"] == "sandbox"
        assert "accessToken" not in item and "access_token" not in item
    # idempotent: a second run connects nothing more
    accounts_service.connect_sandbox_defaults(settings, owner.workspace_id)
    assert listing(client, owner)["used"] == len(created)


def test_connect_with_session_and_default_is_the_oldest(client, owner):
    r1 = connect(client, owner, platform="tiktok", name="Brand TikTok")
    r2 = connect(client, owner, platform="tiktok", name="Second TikTok", behaviour="fail-permanent")
    assert r1.status_code == r2.status_code == 201, r2.text
    first, second = r1.json(), r2.json()
    assert first["isDefault"] is True and second["isDefault"] is False
    assert second["behaviour"] == "fail-permanent" and second["id"].startswith("acc_")
    assert second["username"]  # network-side identity from the sandbox
    by_id = {a["id"]: a for a in listing(client, owner)["items"]}
    assert by_id[first["id"]]["isDefault"] and not by_id[second["id"]]["isDefault"]
    row = Account.get_by_id(first["id"])
    assert row.access_token and row.external_id  # the sandbox network knows this account
    assert row.access_token not in repr(row)
    # disconnecting the default makes the next one the default
    r = client.delete(f"/v1/accounts/{first['id']}", headers=session_headers(owner.session_token))
    assert r.status_code == 200 and r.json()["status"] == "disconnected"
    items = listing(client, owner)["items"]
    assert [(a["id"], a["isDefault"]) for a in items] == [(second["id"], True)]


def test_post_accounts_needs_a_session_not_a_key(client, owner):
    r = client.post(
        "/v1/accounts", json={"platform": "facebook", "name": "x"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 403 and r.json()["error"] == "session_required"


@pytest.mark.parametrize(
    "body,field",
    [
        ({"platform": "myspace", "name": "x"}, "platform"),
        ({"platform": "facebook", "name": ""}, "name"),
        ({"platform": "facebook", "name": "x", "behaviour": "explode"}, "behaviour"),
        ({"platform": "facebook"}, "name"),
        ({"platform": "facebook", "name": "x", "kind": "live"}, "kind"),
    ],
)
def test_connect_validation(client, owner, body, field):
    r = connect(client, owner, **body)
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "validation_error"
    assert field in {d["field"] for d in r.json()["details"]}


def test_blank_name_refused(client, owner):
    r = connect(client, owner, platform="facebook", name="   ")
    assert r.status_code == 400 and r.json()["error"] == "validation_error"


def test_plan_account_limit_402_and_upgrade(client, owner):
    limit = plans.PLANS["FREE"].max_accounts
    for i in range(limit):
        assert connect(client, owner, platform="facebook", name=f"Page {i}").status_code == 201
    r = connect(client, owner, platform="linkedin", name="one too many")
    assert r.status_code == 402, r.text
    assert r.json()["error"] == "channel_limit_exceeded"
    assert r.json()["details"][0]["limit"] == limit
    assert Account.select().where(Account.workspace == owner.workspace_id).count() == limit
    # a subscription raises the limit
    ws_service.set_plan(owner.workspace_id, "STARTER", "active", clock.now() + timedelta(days=30))
    assert connect(client, owner, platform="linkedin", name="now fine").status_code == 201
    assert listing(client, owner)["limit"] == plans.PLANS["STARTER"].max_accounts
    # disconnecting frees a slot on the FREE plan again
    ws_service.set_plan(owner.workspace_id, "FREE", None, None)
    assert connect(client, owner, platform="youtube", name="over").status_code == 402
    victim = listing(client, owner)["items"][0]["id"]
    client.delete(f"/v1/accounts/{victim}", headers=session_headers(owner.session_token))
    client.delete(
        f"/v1/accounts/{listing(client, owner)['items'][0]['id']}",
        headers=session_headers(owner.session_token),
    )
    assert connect(client, owner, platform="youtube", name="fits").status_code == 201


def test_concurrent_connections_never_exceed_the_limit(client, owner):
    import threading

    limit = plans.PLANS["FREE"].max_accounts
    barrier = threading.Barrier(limit + 3)
    codes: list[int] = []

    def run(i: int) -> None:
        barrier.wait()
        codes.append(connect(client, owner, platform="instagram", name=f"IG {i}").status_code)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(limit + 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [201] * limit + [402] * 3
    assert Account.select().where(Account.workspace == owner.workspace_id).count() == limit


def test_workspace_isolation_and_scope(client, owner, other_owner):
    mine = connect(client, owner, platform="facebook", name="Mine").json()
    assert listing(client, other_owner)["items"] == []
    r = client.delete(f"/v1/accounts/{mine['id']}", headers=session_headers(other_owner.session_token))
    assert r.status_code == 404 and r.json()["error"] == "account_not_found"
    key = client.post(
        "/v1/api-keys",
        json={"name": "no accounts", "scopes": ["publish:posts"]},
        headers=session_headers(owner.session_token),
    ).json()["key"]
    r = client.get("/v1/accounts", headers=key_headers(key))
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
