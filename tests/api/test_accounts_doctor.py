"""GET /v1/accounts/doctor (issue 29): the document's shape, its scope, the house's validation error for an
unknown platform, workspace isolation, and its place in the OpenAPI document."""

from __future__ import annotations

from datetime import timedelta

from backend import clock
from backend.ids import new_id
from backend.services import keys as keys_service
from backend.store.models import Account
from tests.conftest import key_headers, session_headers
from tests.support.networks import own


def _live(workspace_id: str, platform: str, **fields) -> Account:  # type: ignore[no-untyped-def]
    now = clock.now()
    values = {
        "id": new_id("acc"),
        "workspace": workspace_id,
        "platform": platform,
        "name": f"Live {platform}",
        "username": "live",
        "kind": "live",
        "status": "active",
        "external_id": "ext-1",
        "access_token": "tok",
        "token_expires_at": now + timedelta(days=60),
        "connected_at": now,
        "created_at": now,
    } | fields
    return Account.create(**values)


def test_the_document(client, settings, owner) -> None:  # type: ignore[no-untyped-def]
    acc = _live(owner.workspace_id, "tiktok", token_expires_at=clock.now() - timedelta(days=1))
    r = client.get("/v1/accounts/doctor", headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"ok", "networks", "accounts"} and body["ok"] is False
    assert [n["platform"] for n in body["networks"]] == sorted(n["platform"] for n in body["networks"])
    tiktok = next(n for n in body["networks"] if n["platform"] == "tiktok")
    assert tiktok["findings"][0]["code"] == "app_credentials_missing"  # a live account: needed to refresh
    assert tiktok["findings"][0]["severity"] == "error"
    [account] = body["accounts"]
    assert (account["id"], account["platform"], account["name"]) == (acc.id, "tiktok", "Live tiktok")
    [expired] = account["findings"]
    assert set(expired) == {"code", "severity", "message", "fix"}
    assert (expired["code"], expired["severity"]) == ("token_expired", "error")


def test_one_platform_and_ok(client, settings, owner) -> None:  # type: ignore[no-untyped-def]
    own(settings, "linkedin").client_id, own(settings, "linkedin").client_secret = "app-1", "s3cret"
    _live(owner.workspace_id, "tiktok", status="needs_reauth")  # another network's problem
    r = client.get("/v1/accounts/doctor?platform=linkedin", headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    body = r.json()
    assert [n["platform"] for n in body["networks"]] == ["linkedin"] and body["accounts"] == []
    assert body["ok"] is all(f["severity"] != "error" for f in body["networks"][0]["findings"])


def test_an_unknown_platform_is_the_houses_validation_error(client, owner) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/v1/accounts/doctor?platform=raven", headers=key_headers(owner.api_key))
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "validation_error" and r.json()["details"][0]["field"] == "platform"


def test_the_accounts_read_scope(client, owner) -> None:  # type: ignore[no-untyped-def]
    _, without = keys_service.create(owner.workspace_id, "without", None, ["publish:posts"])
    _, with_ = keys_service.create(owner.workspace_id, "with", None, ["accounts:read"])
    r = client.get("/v1/accounts/doctor", headers=key_headers(without))
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
    assert client.get("/v1/accounts/doctor", headers=key_headers(with_)).status_code == 200
    assert client.get("/v1/accounts/doctor", headers=session_headers(owner.session_token)).status_code == 200
    assert client.get("/v1/accounts/doctor").status_code == 401


def test_workspace_isolation(client, owner, other_owner) -> None:  # type: ignore[no-untyped-def]
    theirs = _live(other_owner.workspace_id, "tiktok", status="needs_reauth")
    mine = client.get("/v1/accounts/doctor", headers=key_headers(owner.api_key)).json()
    assert mine["accounts"] == []
    seen = client.get("/v1/accounts/doctor", headers=key_headers(other_owner.api_key)).json()
    assert [a["id"] for a in seen["accounts"]] == [theirs.id]


def test_in_the_openapi_document(app) -> None:  # type: ignore[no-untyped-def]
    doc = app.openapi()
    op = doc["paths"]["/v1/accounts/doctor"]["get"]
    assert op["operationId"] == "accountsDoctor"
    [param] = [p for p in op["parameters"] if p["name"] == "platform"]
    assert "tiktok" in param["schema"]["anyOf"][0]["enum"]
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    report = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(report["properties"]) == {"ok", "networks", "accounts"}
    finding = doc["components"]["schemas"]["DoctorFinding"]
    assert finding["properties"]["severity"]["enum"] == ["error", "warning"]
