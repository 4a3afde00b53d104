# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""Bluesky through the API (issue 32 items 2 and 5): connect with a handle and an app password
(POST /v1/accounts/connect/login), the sandbox account of `init --sandbox` publishing, the rules at creation. The
emulator answers in process (no traffic)."""

from __future__ import annotations

import httpx
import pytest

from backend.jobs.worker import Worker
from backend.networks.factory import http_client
from backend.networks.sandbox.store import SandboxItem
from backend.services import adapters
from backend.store.db import database
from backend.store.models import Account, PostTarget
from tests.api.posts_support import IMG, details, fast, post, remote_media, sandbox  # noqa: F401
from tests.conftest import session_headers
from tests.support.networks import own

pytestmark = pytest.mark.usefixtures("fast", "remote_media")
PDS = "https://pds.bluesky.invalid"


@pytest.fixture
def live(settings, monkeypatch):  # type: ignore[no-untyped-def]
    """Bluesky's hosts are the emulator's, its calls answered by the data dir's emulator in process."""
    mine = own(settings, "bluesky")
    mine.api_base, mine.plc_url = PDS, "https://plc.bluesky.invalid"
    monkeypatch.setattr(
        adapters,
        "network_client",
        lambda s, platform, kind="live": http_client(
            adapters.sandbox(s).transport(platform), s.network_timeout_s
        ),
    )
    return settings


def new_account(settings) -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
    """(handle, account password, app password) of a new account at the emulated PDS."""
    with httpx.Client(transport=adapters.sandbox(settings).transport("bluesky")) as c:
        r = c.post(
            f"{PDS}/xrpc/com.atproto.server.createAccount", json={"handle": "alice.test", "password": "pw-1"}
        )
        assert r.status_code == 200, r.text
        r2 = c.post(
            f"{PDS}/xrpc/com.atproto.server.createAppPassword",
            json={"name": "socialpub"},
            headers={"Authorization": f"Bearer {r.json()['accessJwt']}"},
        )
        return "alice.test", "pw-1", r2.json()["password"]


def login(client, owner, **body):  # type: ignore[no-untyped-def]
    return client.post(
        "/v1/accounts/connect/login",
        json={"platform": "bluesky", **body},
        headers=session_headers(owner.session_token),
    )


def test_connect_with_a_handle_and_an_app_password(client, owner, live):
    handle, password, app_password = new_account(live)
    r = login(client, owner, identifier=handle, password=app_password, name="Alice")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["platform"] == "bluesky" and body["name"] == "Alice" and body["username"] == handle
    assert "accessToken" not in body and app_password not in r.text
    acc = Account.get_by_id(body["id"])
    assert acc.external_id.startswith("did:plc:") and acc.granted_scopes == "com.atproto.appPass"
    sql = f"SELECT access_token FROM account WHERE id = {database.obj.param}"
    raw = database.obj.execute_sql(sql, (acc.id,)).fetchone()[0]
    assert acc.access_token.count(".") == 2 and raw != acc.access_token  # encrypted at rest
    assert acc.refresh_token and acc.token_expires_at is not None

    wrong = login(client, owner, identifier=handle, password="xxxx-xxxx-xxxx-xxxx")
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_credentials"
    assert "Invalid identifier or password" in wrong.json()["message"]
    full = login(client, owner, identifier=handle, password=password)
    assert full.status_code == 400 and full.json()["error"] == "network_refused"
    assert "app password" in full.json()["message"]
    oauth = client.post(
        "/v1/accounts/oauth/start",
        json={"platform": "bluesky", "redirectUri": "http://127.0.0.1:5/callback"},
        headers=session_headers(owner.session_token),
    )
    assert oauth.status_code == 400 and oauth.json()["error"] == "oauth_not_supported"


def test_a_did_of_another_method_is_the_callers_400(client, owner, live):
    """atproto accounts are did:plc or hostname-level did:web: any other DID is refused before any call, as the
    caller's mistake (found by the fuzz: it was a 502 network_error)."""
    for did in ("did:iwto:.W", "did:web:example.com:alice"):
        r = login(client, owner, identifier=did, password="xxxx-xxxx-xxxx-xxxx")
        assert r.status_code == 400 and r.json()["error"] == "network_refused", r.text
        assert did.lower() in r.json()["message"].lower()


def test_a_login_network_only(client, owner, live):
    r = login(client, owner, identifier="jo.example.com", password="y", platform="tiktok")
    assert r.status_code == 400 and r.json()["error"] == "login_not_supported"


def test_the_sandbox_account_publishes_with_facets(client, owner, sandbox, settings):
    assert "bluesky" in sandbox
    text = "Launch day! https://example.com/launch #socialpub"
    body = post(client, owner, 202, targets=["bluesky"], content=text).json()
    Worker(settings, concurrency=1).run_until_idle(max_seconds=20, settle_s=0)
    target = PostTarget.get(PostTarget.post == body["id"])
    assert target.status == "succeeded", target.fail_reason
    held = SandboxItem.get(SandboxItem.platform == "bluesky", SandboxItem.kind == "post")
    assert held.post_id == target.external_post_id and held.text == text
    kinds = [f["features"][0]["$type"] for f in held.data["record"]["facets"]]
    assert kinds == ["app.bsky.richtext.facet#link", "app.bsky.richtext.facet#tag"]
    assert target.post_url.startswith("https://bsky.app/profile/did:plc:")


def test_the_rules_at_creation(client, owner, sandbox):
    r = post(client, owner, 400, targets=["bluesky"], content="a" * 301)
    assert details(r) == [("bluesky", "content_too_long_for_target")]
    assert "300" in r.json()["details"][0]["message"]
    post(client, owner, 202, targets=["bluesky"], content="👍🏽" * 300)  # 300 graphemes, 2,400 bytes
    r = post(
        client, owner, 400, targets=["bluesky"], content="x", mediaUrls=[IMG.format(i) for i in range(5)]
    )
    assert details(r) == [("bluesky", "media_unsupported_for_target")]
    assert "at most 4 images" in r.json()["details"][0]["message"]
    r = post(client, owner, 400, targets=["bluesky"], content=" ")
    assert details(r) == [("bluesky", "content_required_for_target")]


def test_the_token_life_refreshes_the_session_without_app_credentials(client, owner, live):
    from datetime import timedelta

    import time_machine

    from backend import clock
    from backend.services import tokens

    handle, _password, app_password = new_account(live)
    acc_id = login(client, owner, identifier=handle, password=app_password).json()["id"]
    before = Account.get_by_id(acc_id)
    assert tokens.refreshable("bluesky", before.refresh_token, live)  # no SOCIALPUB_BLUESKY_CLIENT_ID needed
    assert not tokens.due(before, clock.now(), live)
    later = before.token_expires_at - timedelta(seconds=60)  # within the margin: due
    with time_machine.travel(later, tick=False):
        assert tokens.due(before, clock.now(), live)
        done = tokens.refresh_account(acc_id, live)
    assert done.result == "refreshed"
    after = Account.get_by_id(acc_id)
    assert after.refresh_token != before.refresh_token and after.token_expires_at > before.token_expires_at


def test_accounts_check_reads_the_session(client, owner, live):
    handle, _password, app_password = new_account(live)
    acc_id = login(client, owner, identifier=handle, password=app_password).json()["id"]
    r = client.post(f"/v1/accounts/{acc_id}/check", headers=session_headers(owner.session_token))
    assert r.status_code == 200 and r.json()["status"] == "ok", r.text


def test_doctor_hooks():
    from backend.config import Settings
    from backend.networks import registry

    checks = registry.get("bluesky").network_checks()
    assert checks is not None
    assert checks.check_app(Settings()) == []
    plain = Settings()
    own(plain, "bluesky").api_base = "http://bsky.example.com"
    assert [f.code for f in checks.check_app(plain)] == ["bluesky_insecure_host"]
    assert checks.check_account(["com.atproto.appPass"]) == []
    assert checks.check_account([]) == []
    [full] = checks.check_account(["com.atproto.access"])
    assert full.code == "bluesky_not_app_password" and "app password" in full.fix


@pytest.mark.parametrize("service", ["http://0", "https://127.0.0.1:9", "https://10.0.0.7"])
def test_a_server_the_address_rule_refuses_is_the_callers_400(client, owner, settings, service):  # type: ignore[no-untyped-def]
    """The fuzzer's find: `service: http://0` answered 502 network_error, as if the network were down. The live client
    refuses it before anything is sent (backend/outbound/guarded.py): 400 address_refused, naming the rule. Literal
    addresses: no resolver, no traffic."""
    settings.allow_private_urls = False
    r = login(client, owner, identifier="alice.example.com", password="app-pass-word", service=service)
    assert r.status_code == 400 and r.json()["error"] == "address_refused", r.text
    assert "address rule" in r.json()["message"]
    assert Account.select().count() == 0
