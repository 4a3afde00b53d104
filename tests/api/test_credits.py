# ruff: noqa: F811  (pytest fixtures imported from tests.support.gen_fixtures)
"""GET /v1/credits (extension): the balance and the ledger newest first — a generation's charge and its refund,
the plan's grant, an operator's change; cursor pagination; scopes; workspace isolation."""

from __future__ import annotations

import pytest

from backend.services import credits
from backend.services import keys as keys_service
from tests.conftest import key_headers, session_headers
from tests.support.gen_fixtures import gen_provider_dir, run_worker, subscribed  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("gen_provider_dir")


def get(client, owner, expect: int = 200, **params):  # type: ignore[no-untyped-def]
    r = client.get("/v1/credits", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == expect, r.text
    return r.json()


def test_charges_refunds_and_grant_newest_first(client, subscribed, settings):
    ok = client.post(
        "/v1/generations",
        json={"type": "image", "prompt": "A flat white"},
        headers=key_headers(subscribed.api_key),
    ).json()
    bad = client.post(
        "/v1/generations",
        json={"type": "video", "prompt": "A cup [refuse]"},
        headers=key_headers(subscribed.api_key),
    ).json()
    run_worker(settings)
    body = get(client, subscribed)
    assert body["balance"] == 998 == credits.balance(subscribed.workspace_id)
    moves = [(e["reason"], e["amount"], e["generationId"], e["balanceAfter"]) for e in body["items"]]
    assert moves[-1][0] == "grant" and moves[-1][1] == 1000
    assert ("charge", -2, ok["id"], 998) in moves and ("charge", -15, bad["id"], 983) in moves
    assert moves[0] == ("refund", 15, bad["id"], 998)  # the refund came last: it is shown first
    assert body["nextCursor"] is None
    first = body["items"][0]
    assert set(first) == {"id", "at", "amount", "reason", "generationId", "note", "balanceAfter"}
    assert first["at"].endswith("Z")


def test_pages_with_a_cursor(client, subscribed):
    for _ in range(3):
        credits.adjust(subscribed.workspace_id, add=1, note="goodwill")
    page = get(client, subscribed, limit=2)
    assert len(page["items"]) == 2 and page["nextCursor"]
    rest = get(client, subscribed, limit=2, cursor=page["nextCursor"])
    ids = [e["id"] for e in page["items"] + rest["items"]]
    assert len(ids) == len(set(ids)) == 4 and ids == sorted(ids, reverse=True)
    assert rest["nextCursor"] is None and rest["items"][-1]["reason"] == "grant"
    assert page["items"][0] == {
        **page["items"][0],
        "reason": "admin",
        "amount": 1,
        "note": "goodwill",
        "balanceAfter": 1003,
    }
    bad = get(client, subscribed, expect=400, cursor="bm90LWEtY3Vyc29y")
    assert bad["error"] == "invalid_cursor"


def test_workspaces_are_isolated(client, subscribed, other_owner):
    credits.adjust(subscribed.workspace_id, add=5, note="mine")
    theirs = get(client, other_owner)
    assert all(e["note"] != "mine" for e in theirs["items"])
    assert theirs["balance"] == credits.balance(other_owner.workspace_id)
    page = get(client, subscribed, limit=1)
    assert page["items"][0]["note"] == "mine"
    # a cursor taken from another workspace's ledger reads only this workspace's entries
    assert all(e["note"] != "mine" for e in get(client, other_owner, cursor=page["nextCursor"])["items"])


@pytest.mark.parametrize(
    "scopes,status",
    [
        (["workspace:read"], 200),
        (["publish:posts"], 200),
        (["media:write"], 200),
        (["accounts:read"], 403),
        (["generations:write", "videos:read"], 403),
    ],
)
def test_scope(client, owner, scopes, status):
    _, key = keys_service.create(owner.workspace_id, "k", None, scopes)
    r = client.get("/v1/credits", headers=key_headers(key))
    assert r.status_code == status, r.text
    if status == 403:
        assert r.json()["error"] == "insufficient_scope"


def test_session_and_no_credential(client, owner):
    assert client.get("/v1/credits", headers=session_headers(owner.session_token)).status_code == 200
    r = client.get("/v1/credits")
    assert r.status_code == 401 and r.json()["error"] == "invalid_api_key"
