"""Workspace (spec 2.2, 4.2, 5.8): every field, plan in force, credits, PATCH extension."""

from __future__ import annotations

from datetime import timedelta

import time_machine

from backend import clock
from backend.services import workspace as ws_service
from tests.conftest import key_headers, session_headers


def get(client, owner):
    r = client.get("/v1/workspace", headers=key_headers(owner.api_key))
    assert r.status_code == 200
    return r.json()


def test_every_field_of_2_2(client, owner):
    body = get(client, owner)
    assert {
        "id",
        "name",
        "description",
        "currency",
        "logoUrl",
        "brand",
        "plan",
        "credits",
        "createdAt",
    } <= set(body)
    assert {"targetAudience", "uniqueValueProp", "voiceTone", "contentTopics"} <= set(body["brand"])
    assert {"name", "subscribed", "status", "periodEnd", "monthlyCredits"} <= set(body["plan"])
    assert body["credits"]["cost"] == {"IMAGE": 2, "VIDEO": 15}
    assert body["credits"]["clip"] == {"5": 15, "10": 30, "15": 45}
    assert body["plan"] == {
        "name": "FREE",
        "subscribed": "FREE",
        "status": None,
        "periodEnd": None,
        "monthlyCredits": 0,
    }


def test_active_plan_grants_allowance_and_carries_over(client, owner):
    end = clock.now() + timedelta(days=90)
    ws_service.set_plan(owner.workspace_id, "STARTER", "active", end)
    body = get(client, owner)
    assert body["plan"]["name"] == "STARTER" and body["plan"]["monthlyCredits"] == 200
    assert body["credits"]["balance"] == 200
    ws_service.set_credits(owner.workspace_id, add=-50)
    with time_machine.travel(clock.now() + timedelta(days=32), tick=False):
        token = client.post("/v1/auth/login", json={"email": owner.email, "password": owner.password})
        assert token.status_code == 200
        body = get(client, owner)
        assert body["credits"]["balance"] == 150 + 200  # unused credits carried over


def test_lapsed_subscription_falls_back_to_free(client, owner):
    ws_service.set_plan(owner.workspace_id, "GROWTH", "past_due", clock.now() + timedelta(days=10))
    body = get(client, owner)
    assert body["plan"]["name"] == "FREE"
    assert body["plan"]["subscribed"] == "GROWTH" and body["plan"]["status"] == "past_due"


def test_cancelled_keeps_access_until_period_end(client, owner):
    end = clock.now() + timedelta(days=5)
    ws_service.set_plan(owner.workspace_id, "GROWTH", "cancelled", end)
    assert get(client, owner)["plan"]["name"] == "GROWTH"
    with time_machine.travel(end + timedelta(seconds=1), tick=False):
        body = get(client, owner)
        assert body["plan"]["name"] == "FREE" and body["plan"]["subscribed"] == "GROWTH"
        assert body["plan"]["status"] == "cancelled"


def test_active_past_period_end_is_lapsed(client, owner):
    ws_service.set_plan(owner.workspace_id, "STARTER", "active", clock.now() - timedelta(days=1))
    assert get(client, owner)["plan"]["name"] == "FREE"


def test_patch_with_session(client, owner):
    s = session_headers(owner.session_token)
    r = client.patch(
        "/v1/workspace",
        headers=s,
        json={
            "name": "Acme",
            "description": "we sell anvils",
            "currency": "eur",
            "logoUrl": "https://acme.test/l.png",
            "brand": {"voiceTone": "playful", "contentTopics": ["anvils", "physics"], "colors": ["#ff0000"]},
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["name"], body["currency"], body["brand"]["voiceTone"]) == ("Acme", "EUR", "playful")
    assert body["brand"]["colors"] == ["#ff0000"]
    r = client.patch("/v1/workspace", headers=s, json={"brand": {"targetAudience": "roadrunners"}})
    assert r.json()["brand"]["voiceTone"] == "playful"  # merged, not replaced
    assert get(client, owner)["brand"]["targetAudience"] == "roadrunners"


def test_patch_refuses_keys_and_bad_values(client, owner):
    r = client.patch("/v1/workspace", headers=key_headers(owner.api_key), json={"name": "x"})
    assert r.status_code in (401, 403) and r.json()["error"] == "session_required"
    assert "cannot manage keys" not in r.json()["message"]  # PATCH /v1/workspace manages no key
    s = session_headers(owner.session_token)
    for bad in (
        {"currency": "EURO"},
        {"currency": "12"},
        {"name": ""},
        {"plan": "GROWTH"},
        {"logoUrl": "javascript:alert(1)"},
        {"logoUrl": "ftp://acme.test/l.png"},
        {"logoUrl": "logo.png"},
        {"logoUrl": "https://"},
        {"logoUrl": "https://acme.test/a b.png"},
    ):
        r = client.patch("/v1/workspace", headers=s, json=bad)
        assert r.status_code == 400, bad
    for good in ("", "http://acme.test/logo.png?v=2"):
        r = client.patch("/v1/workspace", headers=s, json={"logoUrl": good})
        assert r.status_code == 200 and r.json()["logoUrl"] == good, r.text


def test_workspaces_are_isolated(client, owner, other_owner):
    client.patch("/v1/workspace", headers=session_headers(other_owner.session_token), json={"name": "Other"})
    assert get(client, owner)["name"] != "Other"
