# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""Connecting live accounts (issue 17 items 1 and 5; docs/accounts.md): POST /v1/accounts/oauth/start, finish,
{grantId}/connect, connect/token and /{id}/check, each network's emulator answering in process (the browser step
scripted: the authorize URL followed to its redirect). State and PKCE kept server-side, one use; tokens encrypted,
never in an answer."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import time_machine
from peewee import Table

from backend import clock
from backend.networks.factory import http_client
from backend.networks.sandbox import oauth as emu
from backend.services import adapters
from backend.store.db import database
from backend.store.models import Account, OAuthSession
from tests.api.posts_support import fast  # noqa: F401  (fixture)
from tests.conftest import key_headers, session_headers
from tests.support.networks import own

pytestmark = pytest.mark.usefixtures("fast")
NETWORKS = ("facebook", "instagram", "linkedin", "tiktok", "youtube")
REDIRECT = "http://127.0.0.1:53682/callback"
BASES = {
    "tiktok": "http://127.0.0.1:9",
    "facebook": "http://127.0.0.1:9",
    "instagram": "http://127.0.0.1:9",
    "linkedin": "http://127.0.0.1:9/rest",
    "youtube": "http://127.0.0.1:9/youtube/v3",
}


@pytest.fixture
def live(settings, monkeypatch):  # type: ignore[no-untyped-def]
    """Every network's OAuth app configured, its API base a loopback origin, its calls answered by the data
    dir's emulator in process (no traffic)."""
    for p in NETWORKS:
        mine = own(settings, p)
        mine.client_id, mine.client_secret, mine.api_base = f"app-{p}", "s3cret-app", BASES[p]
    monkeypatch.setattr(
        adapters,
        "network_client",
        lambda s, platform, kind="live": http_client(
            adapters.sandbox(s).transport(platform), s.network_timeout_s
        ),
    )
    return settings


def post(client, owner, path, body=None):  # type: ignore[no-untyped-def]
    return client.post(path, json=body, headers=session_headers(owner.session_token))


def browser(settings, platform: str, url: str, **sandbox: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The scripted user: opens the authorize URL, consents, is redirected to the loopback listener."""
    with httpx.Client(transport=adapters.sandbox(settings).transport(platform)) as c:
        r = c.get(url + "".join(f"&{k}={v}" for k, v in sandbox.items()))
    assert r.status_code == 302, r.text
    assert r.headers["location"].startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"]).query).items()}


def start(client, owner, platform, **extra):  # type: ignore[no-untyped-def]
    r = post(
        client, owner, "/v1/accounts/oauth/start", {"platform": platform, "redirectUri": REDIRECT, **extra}
    )
    assert r.status_code == 200, r.text
    return r.json()


def finish(client, owner, settings, platform, **sandbox):  # type: ignore[no-untyped-def]
    started = start(client, owner, platform)
    got = browser(settings, platform, started["authorizeUrl"], **sandbox)
    assert got["state"] == started["state"]
    r = post(client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]})
    assert r.status_code == 200, r.text
    return r.json()


def secrets_of(platform: str) -> list[str]:
    return [a.access_token for a in Account.select().where(Account.platform == platform)] + [
        a.refresh_token for a in Account.select().where(Account.platform == platform) if a.refresh_token
    ]


@pytest.mark.parametrize("platform", NETWORKS)
def test_connect_flow_end_to_end(client, owner, live, platform):
    started = start(client, owner, platform, name="My brand")
    q = {k: v[0] for k, v in parse_qs(urlsplit(started["authorizeUrl"]).query).items()}
    assert q["state"] == started["state"] and q["redirect_uri"] == REDIRECT
    if platform == "linkedin":  # LinkedIn's web flow refuses PKCE (tests/networks/linkedin)
        assert "code_challenge" not in q and "code_challenge_method" not in q
    else:
        assert q["code_challenge_method"] == "S256"
    assert "s3cret-app" not in started["authorizeUrl"]
    row = OAuthSession.get()
    assert row.verifier and row.verifier not in json.dumps(started)  # the verifier stays server-side
    got = browser(live, platform, started["authorizeUrl"], sandbox_user="Brand")
    done = post(client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]})
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["platform"] == platform and len(body["candidates"]) == 1
    cand = body["candidates"][0]
    assert set(cand) == {"externalId", "name", "username", "type"}
    r = post(
        client, owner, f"/v1/accounts/oauth/{body['grantId']}/connect", {"externalIds": [cand["externalId"]]}
    )
    assert r.status_code == 201, r.text
    [acc] = r.json()["items"]
    assert acc["kind"] == "live" and acc["status"] == "active" and acc["platform"] == platform
    assert acc["name"] == "My brand" and acc["isDefault"]
    stored = Account.get_by_id(acc["id"])
    assert stored.external_id == cand["externalId"] and stored.access_token
    if platform in ("tiktok", "youtube"):
        assert stored.refresh_token and stored.token_expires_at is not None
    if platform in ("tiktok", "linkedin", "youtube"):  # their token answers name the granted scopes
        granted = stored.granted_scopes.split()
        assert granted and set(granted) <= set(q["scope"].replace(",", " ").split())
        assert acc["grantedScopes"] == granted
    # tokens never in an answer, encrypted at rest (the account row and the session row)
    listing = client.get("/v1/accounts", headers=key_headers(owner.api_key)).text
    for text in (json.dumps(started), done.text, r.text, listing):
        for secret in secrets_of(platform):
            assert secret not in text
    raw = (
        Table("account")
        .bind(database)
        .select(Table("account").c.access_token)
        .where(Table("account").c.id == acc["id"])
        .scalar()
    )
    assert raw.startswith("enc:v1:") and stored.access_token not in raw
    assert OAuthSession.get_by_id(body["grantId"]).tokens is None  # wiped once connected
    # the grant is used once
    again = post(
        client, owner, f"/v1/accounts/oauth/{body['grantId']}/connect", {"externalIds": [cand["externalId"]]}
    )
    assert again.status_code == 400 and again.json()["error"] == "invalid_oauth_state"


def test_session_tokens_are_encrypted_until_connected(client, owner, live):
    body = finish(client, owner, live, "tiktok")
    raw = (
        Table("oauth_session")
        .bind(database)
        .select(Table("oauth_session").c.tokens)
        .where(Table("oauth_session").c.id == body["grantId"])
        .scalar()
    )
    kept = json.loads(OAuthSession.get_by_id(body["grantId"]).tokens)
    assert (
        raw.startswith("enc:v1:") and kept[0]["accessToken"] not in raw and kept[0]["refreshToken"] not in raw
    )


def test_a_grant_never_connected_is_deleted_with_its_tokens_once_expired(client, owner, live):
    """A Ctrl+C at the picker: the session's tokens go with the session when the housekeeping job runs after
    its 10 minutes."""
    from backend.jobs.housekeeping import prune
    from backend.services import oauth_connect

    body = finish(client, owner, live, "tiktok")
    ctx = type("Ctx", (), {"now": staticmethod(clock.now)})()
    prune(ctx)
    assert OAuthSession.get_or_none(OAuthSession.id == body["grantId"]) is not None  # still alive: kept
    assert oauth_connect.prune_sessions(clock.now() + timedelta(minutes=11)) == 1
    assert OAuthSession.get_or_none(OAuthSession.id == body["grantId"]) is None
    gone = post(client, owner, f"/v1/accounts/oauth/{body['grantId']}/connect", {"externalIds": ["x"]})
    assert gone.status_code == 404 and gone.json()["error"] == "oauth_grant_not_found"


def test_state_is_checked_and_used_once(client, owner, other_owner, live):
    started = start(client, owner, "linkedin")
    got = browser(live, "linkedin", started["authorizeUrl"])
    wrong = post(client, owner, "/v1/accounts/oauth/finish", {"state": "forged-state", "code": got["code"]})
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_oauth_state"
    theirs = post(
        client, other_owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]}
    )
    assert (
        theirs.status_code == 400 and theirs.json()["error"] == "invalid_oauth_state"
    )  # another workspace's
    ok = post(client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]})
    assert ok.status_code == 200, ok.text
    reused = post(client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]})
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_oauth_state"


def test_a_state_expires_after_ten_minutes(client, owner, live):
    started = start(client, owner, "youtube")
    got = browser(live, "youtube", started["authorizeUrl"])
    with time_machine.travel(datetime.now(UTC) + timedelta(minutes=11), tick=False):
        r = post(client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]})
    assert r.status_code == 400 and r.json()["error"] == "invalid_oauth_state"


def test_a_code_is_good_once_and_bound_to_its_verifier(client, owner, live):
    first = start(client, owner, "tiktok")
    got = browser(live, "tiktok", first["authorizeUrl"])
    assert (
        post(
            client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]}
        ).status_code
        == 200
    )
    # the same code under a new session (another verifier): the network refuses it
    second = start(client, owner, "tiktok")
    r = post(client, owner, "/v1/accounts/oauth/finish", {"state": second["state"], "code": got["code"]})
    assert r.status_code == 400 and r.json()["error"] == "oauth_code_rejected"
    # a fresh code with the wrong session's verifier (PKCE): refused too
    third, fourth = start(client, owner, "youtube"), start(client, owner, "youtube")
    code = browser(live, "youtube", third["authorizeUrl"])["code"]
    r = post(client, owner, "/v1/accounts/oauth/finish", {"state": fourth["state"], "code": code})
    assert r.status_code == 400 and r.json()["error"] == "oauth_code_rejected"


def test_transient_failure_of_the_token_endpoint_is_a_502(client, owner, live):
    started = start(client, owner, "linkedin")
    got = browser(live, "linkedin", started["authorizeUrl"])
    adapters.sandbox(live)
    emu.configure_oauth("linkedin", token_failure="server_error")
    try:
        r = post(client, owner, "/v1/accounts/oauth/finish", {"state": got["state"], "code": got["code"]})
    finally:
        emu.configure_oauth("linkedin", reset=True)
    assert r.status_code == 502 and r.json()["error"] == "network_error"


def test_not_configured(client, owner, settings):
    r = post(client, owner, "/v1/accounts/oauth/start", {"platform": "tiktok", "redirectUri": REDIRECT})
    assert r.status_code == 400 and r.json()["error"] == "oauth_not_configured"
    assert "SOCIALPUB_TIKTOK_CLIENT_ID" in r.json()["message"] and "--access-token" in r.json()["message"]


@pytest.mark.parametrize("uri", ["ftp://127.0.0.1/cb", "callback", "http:///cb", "http://127.0.0.1/cb#frag"])
def test_redirect_uri_must_be_http(client, owner, live, uri):
    r = post(client, owner, "/v1/accounts/oauth/start", {"platform": "tiktok", "redirectUri": uri})
    assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri"


def test_routes_need_a_session(client, owner, live):
    for path, body in (
        ("/v1/accounts/oauth/start", {"platform": "tiktok", "redirectUri": REDIRECT}),
        ("/v1/accounts/oauth/finish", {"state": "s", "code": "c"}),
        ("/v1/accounts/connect/token", {"platform": "tiktok", "accessToken": "t"}),
    ):
        r = client.post(path, json=body, headers=key_headers(owner.api_key))
        assert r.status_code == 403 and r.json()["error"] == "session_required"


def test_facebook_pages_are_picked(client, owner, live):
    body = finish(client, owner, live, "facebook", sandbox_user="Acme", sandbox_pages="3")
    names = {c["name"]: c["externalId"] for c in body["candidates"]}
    assert sorted(names) == ["Acme 1", "Acme 2", "Acme 3"] and {c["type"] for c in body["candidates"]} == {
        "page"
    }
    unknown = post(client, owner, f"/v1/accounts/oauth/{body['grantId']}/connect", {"externalIds": ["999"]})
    assert unknown.status_code == 400 and unknown.json()["error"] == "unknown_external_id"
    r = post(
        client,
        owner,
        f"/v1/accounts/oauth/{body['grantId']}/connect",
        {"externalIds": [names["Acme 1"], names["Acme 3"]]},
    )
    assert r.status_code == 201, r.text
    got = {a["name"] for a in r.json()["items"]}
    assert got == {"Acme 1", "Acme 3"}
    tokens = {a.access_token for a in Account.select().where(Account.kind == "live")}
    assert len(tokens) == 2  # a page token each
    assert (
        post(client, owner, f"/v1/accounts/oauth/{body['grantId']}/connect", {"externalIds": []}).status_code
        == 400
    )


def test_linkedin_member_and_organisation(client, owner, live):
    # organisation posting configured, by an app approved for the Community Management API
    own(live, "linkedin").organizations = True
    live.sandbox_apps = {"linkedin": {"products": ["openid", "share", "community"]}}
    body = finish(client, owner, live, "linkedin", sandbox_user="Jo", sandbox_pages="2")
    types = {c["type"]: c["externalId"] for c in body["candidates"]}
    assert set(types) == {"member", "organization"}
    assert types["organization"].startswith("urn:li:organization:")
    names = {c["type"]: c["name"] for c in body["candidates"]}
    assert names == {
        "member": "Jo",
        "organization": "Jo Org 1",
    }  # LinkedIn's localizedName of the organisation
    r = post(
        client, owner, f"/v1/accounts/oauth/{body['grantId']}/connect", {"externalIds": list(types.values())}
    )
    assert r.status_code == 201 and len(r.json()["items"]) == 2
    for acc in r.json()["items"]:
        assert post(client, owner, f"/v1/accounts/{acc['id']}/check").json()["status"] == "ok"


def test_reconnecting_updates_the_token_rather_than_duplicating(client, owner, live):
    def connect_once() -> dict:
        body = finish(client, owner, live, "tiktok", sandbox_user="Same")
        r = post(
            client,
            owner,
            f"/v1/accounts/oauth/{body['grantId']}/connect",
            {"externalIds": [body["candidates"][0]["externalId"]]},
        )
        assert r.status_code == 201
        return r.json()["items"][0]

    first = connect_once()
    old = Account.get_by_id(first["id"]).access_token
    Account.update(status="needs_reauth").where(Account.id == first["id"]).execute()
    second = connect_once()
    assert second["id"] == first["id"] and second["status"] == "active"
    assert Account.get_by_id(first["id"]).access_token != old
    assert Account.select().where(Account.kind == "live").count() == 1


def test_plan_limit_applies(settings, client, owner, live):
    from backend.services import accounts as accounts_service

    accounts_service.connect_sandbox_defaults(settings, owner.workspace_id)  # 5: the FREE plan's limit
    body = finish(client, owner, live, "facebook", sandbox_user="Full")
    r = post(
        client,
        owner,
        f"/v1/accounts/oauth/{body['grantId']}/connect",
        {"externalIds": [body["candidates"][0]["externalId"]]},
    )
    assert r.status_code == 402 and r.json()["error"] == "channel_limit_exceeded"


# --- tokens obtained elsewhere ---------------------------------------------------------------------------------------
def network_token(settings, platform: str, **sandbox: str) -> dict:  # type: ignore[no-untyped-def]
    """A token got outside socialpub: the emulator's own flow, driven directly."""
    from backend.networks import oauth, oauth_apps

    app = oauth_apps.app(platform, settings)
    verifier, challenge = oauth.pkce_pair(app.endpoints.pkce_encoding)
    got = browser(settings, platform, oauth.authorize_url(app, REDIRECT, "x", challenge), **sandbox)
    with httpx.Client(transport=adapters.sandbox(settings).transport(platform)) as c:
        t = oauth.exchange_code(app, c, got["code"], REDIRECT, verifier)
    return {"accessToken": t.access_token, "refreshToken": t.refresh_token}


def test_access_token_path(client, owner, live):
    tok = network_token(live, "tiktok", sandbox_user="Elsewhere")
    r = post(
        client,
        owner,
        "/v1/accounts/connect/token",
        {"platform": "tiktok", **tok, "expiresIn": 3600, "name": "From elsewhere"},
    )
    assert r.status_code == 201, r.text
    acc = r.json()
    assert acc["kind"] == "live" and acc["name"] == "From elsewhere" and acc["tokenExpiresAt"]
    assert tok["accessToken"] not in r.text and tok["refreshToken"] not in r.text
    stored = Account.get_by_id(acc["id"])
    assert stored.access_token == tok["accessToken"] and stored.refresh_token == tok["refreshToken"]
    bad = post(client, owner, "/v1/accounts/connect/token", {"platform": "tiktok", "accessToken": "act.nope"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_access_token"
    assert "act.nope" not in bad.text


def test_access_token_reaching_several_accounts(client, owner, live):
    tok = network_token(live, "facebook", sandbox_user="Multi", sandbox_pages="2")
    r = post(
        client,
        owner,
        "/v1/accounts/connect/token",
        {"platform": "facebook", "accessToken": tok["accessToken"]},
    )
    assert r.status_code == 409 and r.json()["error"] == "account_choice_required"
    pages = r.json()["details"]
    assert len(pages) == 2 and tok["accessToken"] not in r.text
    ok = post(
        client,
        owner,
        "/v1/accounts/connect/token",
        {"platform": "facebook", "accessToken": tok["accessToken"], "externalId": pages[1]["externalId"]},
    )
    assert ok.status_code == 201 and ok.json()["name"] == pages[1]["name"]
    missing = post(
        client,
        owner,
        "/v1/accounts/connect/token",
        {"platform": "facebook", "accessToken": tok["accessToken"], "externalId": "123"},
    )
    assert missing.status_code == 400 and missing.json()["error"] == "unknown_external_id"


# --- health ------------------------------------------------------------------------------------------------------------
def connected(client, owner, settings, platform: str, **sandbox: str) -> dict:  # type: ignore[no-untyped-def]
    body = finish(client, owner, settings, platform, **sandbox)
    r = post(
        client,
        owner,
        f"/v1/accounts/oauth/{body['grantId']}/connect",
        {"externalIds": [body["candidates"][0]["externalId"]]},
    )
    assert r.status_code == 201
    return r.json()["items"][0]


@pytest.mark.parametrize("platform", NETWORKS)
def test_check_ok_then_needs_reauth_once_the_grant_is_revoked(client, owner, live, platform):
    acc = connected(client, owner, live, platform, sandbox_user=f"Chk {platform}")
    r = post(client, owner, f"/v1/accounts/{acc['id']}/check")
    assert r.status_code == 200, r.text
    assert r.json()["status"] in ("ok", "expiring") and r.json()["accountStatus"] == "active"
    emu.revoke_grant(emu.grants(platform)[-1].id)
    r = post(client, owner, f"/v1/accounts/{acc['id']}/check")
    body = r.json()
    assert body["status"] == "needs_reauth" and body["accountStatus"] == "needs_reauth"
    assert "reconnect" in body["message"] and Account.get_by_id(acc["id"]).access_token not in r.text
    listed = client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()["items"]
    assert [a["status"] for a in listed if a["id"] == acc["id"]] == ["needs_reauth"]


def test_check_expiring_for_a_token_that_cannot_be_refreshed(client, owner, live):
    adapters.sandbox(live)
    emu.configure_oauth("linkedin", access_ttl_s=3 * 86400)  # no refresh token: a reconnect is due in 3 days
    try:
        acc = connected(client, owner, live, "linkedin", sandbox_user="Short")
        body = post(client, owner, f"/v1/accounts/{acc['id']}/check").json()
        assert body["status"] == "expiring" and 2 * 86400 < body["expiresInS"] <= 3 * 86400
        assert (
            body["message"] == "token expires in 3 days: reconnect with socialpub accounts connect linkedin"
        )
        emu.configure_oauth("linkedin", access_ttl_s=60)
        assert connected(client, owner, live, "linkedin", sandbox_user="Short")["id"] == acc["id"]
    finally:
        emu.configure_oauth("linkedin", reset=True)
    with time_machine.travel(datetime.now(UTC) + timedelta(minutes=2), tick=False):
        body = post(client, owner, f"/v1/accounts/{acc['id']}/check").json()
    assert body["status"] == "needs_reauth" and body["expiresInS"] < 0


def test_check_renews_an_expired_refreshable_token(client, owner, live):
    """The token was refused because it expired: the check refreshes it (services/tokens, the one refresh path)
    and tries again; the account stays connected."""
    live.sandbox_apps = {"youtube": {"products": ["in-production"]}}  # refresh tokens beyond Testing's 7 days
    acc = connected(client, owner, live, "youtube")  # 1 h, a refresh token
    before = Account.get_by_id(acc["id"]).token_expires_at
    with time_machine.travel(datetime.now(UTC) + timedelta(hours=2), tick=False):
        body = post(client, owner, f"/v1/accounts/{acc['id']}/check").json()
    assert body["status"] == "ok" and body["accountStatus"] == "active" and body["expiresInS"] > 0
    after = Account.get_by_id(acc["id"])
    assert after.status == "active" and after.token_expires_at > before


def test_check_a_transient_failure_changes_nothing(client, owner, live, monkeypatch):
    acc = connected(client, owner, live, "tiktok")

    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json={"error": {"code": "internal_error", "message": "busy"}})

    monkeypatch.setattr(
        adapters,
        "network_client",
        lambda s, platform, kind="live": httpx.Client(transport=httpx.MockTransport(down)),
    )
    body = post(client, owner, f"/v1/accounts/{acc['id']}/check").json()
    assert body["status"] == "error" and body["accountStatus"] == "active"


def test_check_sandbox_account_and_unknown(client, owner, settings):
    r = client.post(
        "/v1/accounts",
        json={"platform": "linkedin", "name": "Sb"},
        headers=session_headers(owner.session_token),
    )
    acc = r.json()
    body = post(client, owner, f"/v1/accounts/{acc['id']}/check").json()
    assert body["status"] == "ok" and body["kind"] == "sandbox"
    missing = post(client, owner, "/v1/accounts/acc_nope/check")
    assert missing.status_code == 404 and missing.json()["error"] == "account_not_found"


def test_a_malformed_token_is_refused_without_being_echoed(client, owner, live):
    r = post(
        client, owner, "/v1/accounts/connect/token", {"platform": "tiktok", "accessToken": "act.sécret token"}
    )
    assert r.status_code == 400 and r.json()["error"] == "validation_error" and "sécret" not in r.text
