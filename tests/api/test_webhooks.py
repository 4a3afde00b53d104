"""The endpoints API (docs/webhooks.md): create / list / read / update / delete / rotate / test, the delivery log,
events, scopes, isolation, URL rules."""

from __future__ import annotations

import pytest

from backend.outbound import guard
from backend.services import keys
from tests.conftest import key_headers, session_headers


@pytest.fixture
def private_ok(settings):  # type: ignore[no-untyped-def]
    settings.allow_private_urls = True
    settings.rate_limit_per_minute = 1_000_000
    return settings


def add(client, owner, url="http://127.0.0.1:9/hook", **body):  # type: ignore[no-untyped-def]
    r = client.post("/v1/webhooks", json={"url": url, **body}, headers=key_headers(owner.api_key))
    assert r.status_code == 201, r.text
    return r.json()


def test_create_shows_the_secret_once(client, owner, private_ok):
    ep = add(client, owner, events=["publish.completed", "publish.failed"], description="ops")
    assert ep["secret"].startswith("whsec_") and ep["id"].startswith("we_")
    assert ep["events"] == ["publish.completed", "publish.failed"] and ep["enabled"] and not ep["failing"]
    listed = client.get("/v1/webhooks", headers=key_headers(owner.api_key)).json()["items"]
    assert [e["id"] for e in listed] == [ep["id"]] and "secret" not in listed[0]
    one = client.get(f"/v1/webhooks/{ep['id']}", headers=key_headers(owner.api_key)).json()
    assert "secret" not in one and one["description"] == "ops"


def test_update_delete_rotate(client, owner, private_ok):
    ep = add(client, owner)
    h = key_headers(owner.api_key)
    r = client.patch(
        f"/v1/webhooks/{ep['id']}", json={"events": ["generation.completed"], "description": None}, headers=h
    )
    assert (
        r.status_code == 200
        and r.json()["events"] == ["generation.completed"]
        and r.json()["description"] is None
    )
    assert client.patch(f"/v1/webhooks/{ep['id']}", json={"url": None}, headers=h).status_code == 400
    r = client.patch(f"/v1/webhooks/{ep['id']}", json={"enabled": False}, headers=h)
    assert r.json()["enabled"] is False and r.json()["disabledReason"] == "disabled by a user"
    assert client.post(f"/v1/webhooks/{ep['id']}/test", headers=h).json()["error"] == "webhook_disabled"
    assert (
        client.patch(f"/v1/webhooks/{ep['id']}", json={"enabled": True}, headers=h).json()["enabled"] is True
    )
    rotated = client.post(f"/v1/webhooks/{ep['id']}/rotate", headers=h).json()
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != ep["secret"]
    assert rotated["secretRotatedAt"]
    assert client.delete(f"/v1/webhooks/{ep['id']}", headers=h).json() == {"id": ep["id"], "deleted": True}
    assert client.get(f"/v1/webhooks/{ep['id']}", headers=h).json()["error"] == "webhook_not_found"


def test_bad_bodies(client, owner, private_ok):
    h = key_headers(owner.api_key)
    r = client.post(
        "/v1/webhooks", json={"url": "http://127.0.0.1:9/", "events": ["post.created"]}, headers=h
    )
    assert (
        r.status_code == 400
        and r.json()["error"] == "validation_error"
        and "publish.completed" in r.json()["message"]
    )
    for url in ("ftp://example.com/x", "http://user:pw@127.0.0.1/", ""):
        r = client.post("/v1/webhooks", json={"url": url}, headers=h)
        assert r.status_code == 400 and r.json()["error"] in ("invalid_webhook_url", "validation_error"), (
            r.text
        )
    assert (
        client.post("/v1/webhooks", json={"url": "http://127.0.0.1:9/", "x": 1}, headers=h).status_code == 400
    )


def test_loopback_is_refused_by_default_and_the_error_says_how(client, owner, settings):
    r = client.post(
        "/v1/webhooks", json={"url": "http://127.0.0.1:8765/"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_webhook_url"
    assert "`socialpub admin private-urls on`" in r.json()["message"], r.json()["message"]
    assert r.json()["details"] == [{"field": "url", "rule": "address", "setting": "private-urls"}]


def test_a_name_resolving_to_a_private_address_is_refused(client, owner, settings, monkeypatch):
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["10.1.2.3"])  # stubbed: no traffic leaves
    r = client.post(
        "/v1/webhooks", json={"url": "https://hooks.example.com/x"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and "10.1.2.3" in r.json()["message"]
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["93.184.216.34"])
    assert (
        client.post(
            "/v1/webhooks", json={"url": "https://hooks.example.com/x"}, headers=key_headers(owner.api_key)
        ).status_code
        == 201
    )


def test_scopes(client, owner, settings, private_ok):
    ep = add(client, owner)
    reader = keys.create(owner.workspace_id, "r", scopes=["webhooks:read"])[1]
    other = keys.create(owner.workspace_id, "o", scopes=["accounts:read"])[1]
    assert client.get("/v1/webhooks", headers=key_headers(reader)).status_code == 200
    assert client.get(f"/v1/webhooks/{ep['id']}/deliveries", headers=key_headers(reader)).status_code == 200
    assert (
        client.post(
            "/v1/webhooks", json={"url": "http://127.0.0.1:9/"}, headers=key_headers(reader)
        ).status_code
        == 403
    )
    assert client.get("/v1/webhooks", headers=key_headers(other)).status_code == 403
    assert client.get("/v1/webhooks", headers=session_headers(owner.session_token)).status_code == 200


def test_workspaces_are_isolated(client, owner, other_owner, private_ok):
    ep = add(client, owner)
    h = key_headers(other_owner.api_key)
    assert client.get("/v1/webhooks", headers=h).json()["items"] == []
    for method, path in (
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", "/rotate"),
        ("POST", "/test"),
        ("GET", "/deliveries"),
    ):
        r = client.request(
            method, f"/v1/webhooks/{ep['id']}{path}", headers=h, json={} if method == "PATCH" else None
        )
        assert r.status_code == 404 and r.json()["error"] == "webhook_not_found", (method, path)
    test = client.post(f"/v1/webhooks/{ep['id']}/test", headers=key_headers(owner.api_key)).json()
    assert client.get(f"/v1/events/{test['eventId']}", headers=h).json()["error"] == "event_not_found"
    assert client.post(f"/v1/events/{test['eventId']}/redeliver", headers=h).status_code == 404


def test_test_event_is_queued_and_logged(client, owner, private_ok):
    ep = add(client, owner)
    h = key_headers(owner.api_key)
    r = client.post(f"/v1/webhooks/{ep['id']}/test", headers=h)
    assert r.status_code == 202
    out = r.json()
    event = client.get(f"/v1/events/{out['eventId']}", headers=h).json()
    assert event["type"] == "webhook.test" and event["data"]["endpointId"] == ep["id"]
    log = client.get(f"/v1/webhooks/{ep['id']}/deliveries", headers=h).json()
    assert [d["id"] for d in log["items"]] == [out["deliveryId"]]
    assert log["items"][0]["status"] == "pending" and log["items"][0]["attemptLog"] == []
    assert client.get(f"/v1/webhooks/{ep['id']}/deliveries?cursor=nope", headers=h).status_code == 400
    again = client.post(f"/v1/events/{out['eventId']}/redeliver", headers=h).json()
    assert again["eventId"] == out["eventId"] and len(again["deliveries"]) == 1
    assert again["deliveries"][0] != out["deliveryId"]


def test_the_data_dirs_private_urls_setting_decides_for_every_process(client, owner, settings):
    """Issue 33: the address rule is one fact of the data dir (`socialpub admin private-urls on`, stored in its
    database), not an environment variable that differs from one process to the next. Changed, it holds at once
    (no restart); a test or a redelivery it would refuse is refused up front, naming the setting."""
    from backend.store.instance import set_private_urls

    h = key_headers(owner.api_key)
    settings.rate_limit_per_minute = 1_000_000
    url = "http://127.0.0.1:8765/"
    refused = client.post("/v1/webhooks?dryRun=true", json={"url": url}, headers=h)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_webhook_url"
    assert "this data dir refuses them" in refused.json()["message"]

    set_private_urls(True)
    dry = client.post("/v1/webhooks?dryRun=true", json={"url": url}, headers=h)
    assert dry.status_code == 200 and dry.json() == {"dryRun": True, "url": url, "events": []}
    assert client.get("/v1/webhooks", headers=h).json()["items"] == []  # nothing created
    ep = add(client, owner, url)
    sent = client.post(f"/v1/webhooks/{ep['id']}/test", headers=h)
    assert sent.status_code == 202

    set_private_urls(False)  # the operator turns it off again: nothing would be delivered, and it is said so
    for r in (
        client.post(f"/v1/webhooks/{ep['id']}/test", headers=h),
        client.post(f"/v1/events/{sent.json()['eventId']}/redeliver", headers=h),
        client.post(
            f"/v1/events/{sent.json()['eventId']}/redeliver", json={"endpointId": ep["id"]}, headers=h
        ),
    ):
        assert r.status_code == 409 and r.json()["error"] == "webhook_url_refused", r.text
        assert "`socialpub admin private-urls on`" in r.json()["message"]
        assert r.json()["details"] == [{"endpointId": ep["id"], "rule": "address", "setting": "private-urls"}]


def test_the_environment_overrides_the_data_dir_in_its_own_process_and_says_so(client, owner, settings):
    from backend.store.instance import set_private_urls

    set_private_urls(True)
    settings.allow_private_urls = False  # SOCIALPUB_ALLOW_PRIVATE_URLS=0 in this process
    r = client.post(
        "/v1/webhooks", json={"url": "http://127.0.0.1:8765/"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and "SOCIALPUB_ALLOW_PRIVATE_URLS=0" in r.json()["message"], r.text
    settings.allow_private_urls = None  # unset: the data dir decides
    assert add(client, owner, "http://127.0.0.1:8765/")["url"] == "http://127.0.0.1:8765/"
