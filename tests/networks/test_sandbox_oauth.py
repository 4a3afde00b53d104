"""The emulators' OAuth side (issue 17 item 6): authorize -> token with PKCE and state, refresh (rotating for
TikTok and Google), expiry with the clock moved, revoke, the dead-grant and transient switches, the product's
sandbox-account tokens left immortal, and `socialpub sandbox serve` answering over real HTTP."""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import time_machine

from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig, oauth
from backend.networks.sandbox.developer_app import EmulatedApp
from backend.services.adapters import sandbox_emulators
from tests.support.networks import own

NETWORKS = ("tiktok", "facebook", "instagram", "linkedin", "youtube")
REDIRECT = "http://127.0.0.1:53682/callback"
VERIFIER = "v" * 20 + "-._~" + "k" * 40
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).decode().rstrip("=")
HEX_CHALLENGE = hashlib.sha256(VERIFIER.encode()).hexdigest()  # TikTok's Login Kit writes S256 in hex
SPEC: dict[str, dict[str, Any]] = {
    "tiktok": {
        "authorize": "/v2/auth/authorize/",
        "token": "/v2/oauth/token/",
        "client": "client_key",
        "scope": "user.info.basic,video.publish,video.upload",
    },
    "facebook": {
        "authorize": "/v26.0/dialog/oauth",
        "token": "/v26.0/oauth/access_token",
        "client": "client_id",
        "scope": "pages_show_list,pages_manage_posts,pages_read_engagement",
    },
    "instagram": {
        "authorize": "/v26.0/dialog/oauth",
        "token": "/v26.0/oauth/access_token",
        "client": "client_id",
        "scope": "instagram_basic,instagram_content_publish,pages_show_list",
    },
    "linkedin": {
        "authorize": "/oauth/v2/authorization",
        "token": "/oauth/v2/accessToken",
        "client": "client_id",
        "scope": "openid profile w_member_social",
    },
    "youtube": {
        "authorize": "/o/oauth2/v2/auth",
        "token": "/token",
        "client": "client_id",
        "scope": "https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly",
    },
}


# these flows use PKCE for every network: LinkedIn's only for a native app (a web app sending it is refused:
# tests/networks/linkedin), here one approved for the Community Management API (its organisations)
LINKEDIN_APP = EmulatedApp(products=frozenset({"openid", "share", "community"}), kind="native")


@pytest.fixture
def sb(tmp_path: Path) -> Sandbox:
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            apps=(("linkedin", LINKEDIN_APP),),
        )
    )


def client(sb: Sandbox, platform: str) -> httpx.Client:
    return httpx.Client(transport=sb.transport(platform), base_url="https://oauth.sandbox.invalid")


def authorize(
    c: httpx.Client, platform: str, *, state: str = "st4te", challenge: str | None = CHALLENGE, **extra: str
) -> dict[str, str]:
    spec = SPEC[platform]
    params = {
        spec["client"]: "app-123",
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "state": state,
        "scope": spec["scope"],
        **extra,
    }
    if challenge:
        if platform == "tiktok" and challenge == CHALLENGE:
            challenge = HEX_CHALLENGE
        params.update(code_challenge=challenge, code_challenge_method="S256")
    if platform == "youtube":
        params["access_type"] = "offline"
    r = c.get(spec["authorize"], params=params)
    assert r.status_code == 302, r.text
    loc = r.headers["location"]
    assert loc.startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(loc).query).items()}


def exchange(c: httpx.Client, platform: str, code: str, verifier: str | None = VERIFIER) -> httpx.Response:
    spec = SPEC[platform]
    form = {
        spec["client"]: "app-123",
        "client_secret": "s3cret",
        "code": code,
        "redirect_uri": REDIRECT,
        "grant_type": "authorization_code",
    }
    if verifier:
        form["code_verifier"] = verifier
    if platform in ("facebook", "instagram"):
        form.pop("grant_type")
        return c.get(spec["token"], params=form)
    return c.post(spec["token"], data=form)


def refresh(c: httpx.Client, platform: str, token: str) -> httpx.Response:
    spec = SPEC[platform]
    return c.post(
        spec["token"],
        data={
            spec["client"]: "app-123",
            "client_secret": "s3cret",
            "grant_type": "refresh_token",
            "refresh_token": token,
        },
    )


def connect(c: httpx.Client, platform: str) -> dict[str, Any]:
    """The whole flow: authorize, exchange; Facebook/Instagram: the long-lived token and a page token."""
    got = exchange(c, platform, authorize(c, platform)["code"])
    assert got.status_code == 200, got.text
    body = got.json()
    if platform in ("facebook", "instagram"):
        long = c.get(
            SPEC[platform]["token"],
            params={
                "grant_type": "fb_exchange_token",
                "client_id": "app-123",
                "client_secret": "s3cret",
                "fb_exchange_token": body["access_token"],
            },
        )
        assert long.status_code == 200, long.text
        body["long"] = long.json()
        pages = c.get(
            "/v26.0/me/accounts",
            params={
                "access_token": long.json()["access_token"],
                "fields": "id,name,access_token,instagram_business_account",
            },
        )
        assert pages.status_code == 200, pages.text
        body["page"] = pages.json()["data"][0]
    return body


def api_call(
    c: httpx.Client, platform: str, tokens: dict[str, Any], token: str | None = None
) -> httpx.Response:
    """The network's cheapest authenticated API call, with the grant's API token (or `token`)."""
    if platform == "tiktok":
        return c.post(
            "/v2/post/publish/creator_info/query/",
            json={},
            headers={"Authorization": f"Bearer {token or tokens['access_token']}"},
        )
    if platform == "facebook":
        page = tokens["page"]
        return c.get(
            f"/v26.0/{page['id']}/published_posts", params={"access_token": token or page["access_token"]}
        )
    if platform == "instagram":
        page = tokens["page"]
        return c.get(
            f"/v26.0/{page['instagram_business_account']['id']}/content_publishing_limit",
            params={"access_token": token or page["access_token"]},
        )
    if platform == "linkedin":  # (the author finder needs r_member_social, which no app here holds)
        return c.get("/v2/userinfo", headers={"Authorization": f"Bearer {token or tokens['access_token']}"})
    return c.get(
        "/youtube/v3/channels",
        params={"mine": "true", "part": "id"},
        headers={"Authorization": f"Bearer {token or tokens['access_token']}"},
    )


def assert_token_refused(platform: str, r: httpx.Response, problem: str) -> None:
    """The network's own answer to an expired / revoked token."""
    body = r.json()
    if platform == "tiktok":
        assert r.status_code == 401 and body["error"]["code"] == "access_token_invalid"
    elif platform in ("facebook", "instagram"):
        assert (
            r.status_code == 400
            and body["error"]["code"] == 190
            and body["error"]["type"] == "OAuthException"
        )
        assert body["error"]["error_subcode"] == (463 if problem == "expired" else 458)
    elif platform == "linkedin":
        assert r.status_code == 401
        assert body["code"] == ("EXPIRED_ACCESS_TOKEN" if problem == "expired" else "REVOKED_ACCESS_TOKEN")
    else:
        assert r.status_code == 401 and body["error"]["errors"][0]["reason"] == "authError"
        assert 'error="invalid_token"' in r.headers["www-authenticate"]


@pytest.mark.parametrize("platform", NETWORKS)
def test_authorize_token_pkce_and_state(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    got = authorize(c, platform, state="xyz-123")
    assert got["state"] == "xyz-123" and got["code"]
    wrong = exchange(c, platform, got["code"], verifier="w" * 64)
    assert wrong.status_code == 400
    missing = exchange(c, platform, got["code"], verifier=None)
    assert missing.status_code == 400
    ok = exchange(c, platform, got["code"])
    assert ok.status_code == 200, ok.text
    assert exchange(c, platform, got["code"]).status_code == 400  # a code is good once
    if platform in ("tiktok", "linkedin", "youtube"):
        body = ok.json()
        assert body["access_token"] and body["expires_in"] > 0
        if platform == "tiktok":
            assert (
                body["open_id"]
                and body["refresh_token"].startswith("rft.")
                and body["token_type"] == "Bearer"
            )
            assert set(body["scope"].split(",")) == set(SPEC["tiktok"]["scope"].split(","))
            assert got["scopes"] == SPEC["tiktok"]["scope"]
        if platform == "youtube":
            assert body["refresh_token"].startswith("1//") and got["scope"] == SPEC["youtube"]["scope"]
        if platform == "linkedin":
            assert "refresh_token" not in body  # programmatic refresh is for approved partners only
    tokens = connect(c, platform)
    assert api_call(c, platform, tokens).status_code == 200


def test_pkce_without_a_method_is_plain(sb: Sandbox) -> None:
    c = client(sb, "youtube")
    code = authorize(c, "youtube", challenge=None, code_challenge=VERIFIER)["code"]
    assert exchange(c, "youtube", code, verifier=CHALLENGE).status_code == 400
    code = authorize(c, "youtube", challenge=None, code_challenge=VERIFIER)["code"]
    assert exchange(c, "youtube", code).status_code == 200


def test_tiktok_accepts_its_hex_pkce_variant(sb: Sandbox) -> None:
    c = client(sb, "tiktok")
    code = authorize(c, "tiktok", challenge=hashlib.sha256(VERIFIER.encode()).hexdigest())["code"]
    assert exchange(c, "tiktok", code).status_code == 200


@pytest.mark.parametrize("platform", NETWORKS)
def test_token_errors_have_the_networks_shape(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    r = exchange(c, platform, "not-a-code")
    assert r.status_code == 400
    body = r.json()
    if platform in ("facebook", "instagram"):
        assert body["error"]["type"] == "OAuthException" and "fbtrace_id" in body["error"]
    else:
        assert body["error"] == "invalid_grant" and body["error_description"]
        if platform == "tiktok":
            assert body["log_id"]


@pytest.mark.parametrize("platform", ["tiktok", "youtube"])
def test_refresh_rotates(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    if platform == "youtube":  # Google re-issues no refresh token by default (see the test below)
        sb.activate()
        oauth.configure_oauth("youtube", rotate=True)
    first = connect(c, platform)
    again = refresh(c, platform, first["refresh_token"])
    assert again.status_code == 200, again.text
    new = again.json()
    assert new["access_token"] != first["access_token"] and new["refresh_token"] != first["refresh_token"]
    old = refresh(c, platform, first["refresh_token"])
    assert old.status_code == 400 and old.json()["error"] == "invalid_grant"
    assert refresh(c, platform, new["refresh_token"]).status_code == 200
    assert api_call(c, platform, new).status_code == 200
    assert api_call(c, platform, first).status_code == 200  # the old access token lives out its life


def test_linkedin_refresh_only_when_enabled(sb: Sandbox) -> None:
    c = client(sb, "linkedin")
    sb.activate()
    oauth.configure_oauth("linkedin", refresh_enabled=True)
    first = connect(c, "linkedin")
    assert first["refresh_token"] and first["refresh_token_expires_in"] > 364 * 86400
    with time_machine.travel(datetime.now(UTC) + timedelta(days=30), tick=False):
        again = refresh(c, "linkedin", first["refresh_token"])
        assert again.status_code == 200
        body = again.json()
        assert body["refresh_token"] == first["refresh_token"]  # not rotated, and its life is not extended
        assert body["refresh_token_expires_in"] <= 336 * 86400
    oauth.configure_oauth("linkedin", refresh_enabled=False)
    assert refresh(c, "linkedin", first["refresh_token"]).json()["error"] == "invalid_grant"


def test_facebook_short_long_lived_and_page_tokens(sb: Sandbox) -> None:
    c = client(sb, "facebook")
    tokens = connect(c, "facebook")
    assert tokens["expires_in"] <= 3600 and tokens["token_type"] == "bearer"
    assert tokens["long"]["expires_in"] > 59 * 86400
    user_token = tokens["long"]["access_token"]
    me = c.get("/v26.0/me", params={"access_token": user_token}).json()
    assert me["id"] and me["name"] == "Sandbox user"
    page = tokens["page"]
    assert {"id", "name", "access_token", "tasks"} <= set(page)
    posted = c.post(
        f"/v26.0/{page['id']}/feed", data={"message": "hello", "access_token": page["access_token"]}
    )
    assert posted.status_code == 200 and posted.json()["id"].startswith(page["id"] + "_")
    as_user = c.post(f"/v26.0/{page['id']}/feed", data={"message": "hello", "access_token": user_token})
    assert as_user.status_code == 403 and as_user.json()["error"]["code"] == 200
    with time_machine.travel(datetime.now(UTC) + timedelta(days=200), tick=False):  # page tokens never expire
        assert api_call(c, "facebook", tokens).status_code == 200
        assert_token_refused("facebook", c.get("/v26.0/me", params={"access_token": user_token}), "expired")


def test_instagram_through_the_linked_page(sb: Sandbox) -> None:
    c = client(sb, "instagram")
    tokens = connect(c, "instagram")
    ig = tokens["page"]["instagram_business_account"]["id"]
    assert ig.startswith("178414")
    # the long-lived user token reaches the account too
    r = c.get(
        f"/v26.0/{ig}/content_publishing_limit", params={"access_token": tokens["long"]["access_token"]}
    )
    assert r.status_code == 200 and r.json()["data"][0]["config"]["quota_total"] == 50
    # Instagram Login's refresh: only for a long-lived token at least 24 h old
    long = tokens["long"]["access_token"]
    assert (
        c.get(
            "/refresh_access_token", params={"grant_type": "ig_refresh_token", "access_token": long}
        ).status_code
        == 400
    )
    with time_machine.travel(datetime.now(UTC) + timedelta(days=2), tick=False):
        r = c.get("/refresh_access_token", params={"grant_type": "ig_refresh_token", "access_token": long})
        assert r.status_code == 200 and r.json()["expires_in"] > 59 * 86400


@pytest.mark.parametrize("platform", NETWORKS)
def test_tokens_expire_with_the_clock(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    sb.activate()
    oauth.configure_oauth(
        platform, access_ttl_s=60, **({"long_ttl_s": 60} if platform in ("facebook", "instagram") else {})
    )
    tokens = connect(c, platform)
    if platform in ("facebook", "instagram"):
        assert tokens["long"]["expires_in"] <= 60
    else:
        assert tokens["expires_in"] <= 60
    if platform == "facebook":  # page tokens of a long-lived user token never expire: probe the user token
        probe = lambda: c.get("/v26.0/me", params={"access_token": tokens["long"]["access_token"]})  # noqa: E731
    elif platform == "instagram":
        ig = tokens["page"]["instagram_business_account"]["id"]
        probe = lambda: c.get(  # noqa: E731
            f"/v26.0/{ig}/content_publishing_limit",
            params={"access_token": tokens["long"]["access_token"]},
        )
    else:
        probe = lambda: api_call(c, platform, tokens)  # noqa: E731
    assert probe().status_code == 200
    with time_machine.travel(datetime.now(UTC) + timedelta(seconds=61), tick=False):
        assert_token_refused(platform, probe(), "expired")
        if platform in ("tiktok", "youtube"):  # the refresh token still works: a new access token
            again = refresh(c, platform, tokens["refresh_token"])
            assert again.status_code == 200
            assert api_call(c, platform, again.json()).status_code == 200


def revoke(c: httpx.Client, platform: str, tokens: dict[str, Any]) -> httpx.Response:
    if platform == "tiktok":
        return c.post(
            "/v2/oauth/revoke/",
            data={"client_key": "app-123", "client_secret": "s3cret", "token": tokens["access_token"]},
        )
    if platform in ("facebook", "instagram"):
        return c.delete("/v26.0/me/permissions", params={"access_token": tokens["long"]["access_token"]})
    if platform == "linkedin":
        return c.post(
            "/oauth/v2/revoke",
            data={"client_id": "app-123", "client_secret": "s3cret", "token": tokens["access_token"]},
        )
    return c.post("/revoke", data={"token": tokens["refresh_token"]})


@pytest.mark.parametrize("platform", NETWORKS)
def test_revoke_then_the_networks_401(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    tokens = connect(c, platform)
    assert api_call(c, platform, tokens).status_code == 200
    r = revoke(c, platform, tokens)
    assert r.status_code == 200, r.text
    assert_token_refused(platform, api_call(c, platform, tokens), "revoked")
    if platform in ("tiktok", "youtube"):  # the whole grant is gone: its refresh token too
        assert refresh(c, platform, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    if platform == "youtube":
        assert c.post("/revoke", data={"token": "nope"}).json()["error"] == "invalid_token"


@pytest.mark.parametrize("platform", NETWORKS)
def test_switches_dead_grant_transient_and_deny(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    sb.activate()
    code = authorize(c, platform)["code"]
    oauth.configure_oauth(platform, token_failure="server_error")
    transient = exchange(c, platform, code)
    assert transient.status_code >= 500
    oauth.configure_oauth(platform, token_failure="invalid_grant")
    dead = exchange(c, platform, code)
    assert dead.status_code == 400
    if platform in ("facebook", "instagram"):
        assert dead.json()["error"]["code"] == 190
    else:
        assert dead.json()["error"] == "invalid_grant"
    oauth.configure_oauth(platform, token_failure=None)
    assert exchange(c, platform, code).status_code == 200  # the switches refused before using the code
    denied = authorize(c, platform, sandbox_consent="deny", state="s1")
    assert "code" not in denied and denied["state"] == "s1"
    assert denied["error"] == ("user_cancelled_authorize" if platform == "linkedin" else "access_denied")
    oauth.configure_oauth(platform, consent="deny")
    assert "error" in authorize(c, platform)
    assert oauth.configure_oauth(platform, reset=True)["consent"] == "grant"
    with pytest.raises(ValueError):
        oauth.configure_oauth(platform, token_failure="boom")


def test_switches_over_the_control_endpoint(sb: Sandbox) -> None:
    c = client(sb, "youtube")
    r = c.post("/_sandbox/oauth", json={"token_failure": "server_error", "access_ttl_s": 5})
    assert (
        r.status_code == 200 and r.json()["token_failure"] == "server_error" and r.json()["access_ttl_s"] == 5
    )
    assert c.get("/_sandbox/oauth").json()["access_ttl_s"] == 5
    assert c.post("/_sandbox/oauth", json={"nope": 1}).status_code == 400


@pytest.mark.parametrize("platform", NETWORKS)
def test_sandbox_account_tokens_never_expire_unless_asked(sb: Sandbox, platform: str) -> None:
    c = client(sb, platform)
    ident = sb.register_account(platform, "Brand")
    tokens: dict[str, Any] = {
        "access_token": ident.access_token,
        "page": {
            "id": ident.external_account_id,
            "access_token": ident.access_token,
            "instagram_business_account": {"id": ident.external_account_id},
        },
    }
    probe = {
        "linkedin": lambda: c.get(  # unversioned: 800 days on, every version of today is sunset
            "/v2/userinfo", headers={"Authorization": f"Bearer {ident.access_token}"}
        )
    }.get(platform, lambda: api_call(c, platform, tokens))
    with time_machine.travel(datetime.now(UTC) + timedelta(days=800), tick=False):
        assert probe().status_code == 200
    oauth.expire_account_token(ident.sandbox_account_id, in_s=30)
    assert probe().status_code == 200
    with time_machine.travel(datetime.now(UTC) + timedelta(seconds=31), tick=False):
        assert_token_refused(platform, probe(), "expired")
    oauth.revoke_account_token(ident.sandbox_account_id)
    assert_token_refused(platform, probe(), "revoked")


def test_linkedin_member_and_organisation(sb: Sandbox) -> None:
    c = client(sb, "linkedin")
    code = authorize(
        c,
        "linkedin",
        sandbox_pages="2",
        sandbox_user="Org admin",
        scope="openid profile w_member_social w_organization_social r_organization_admin",
    )["code"]
    token = exchange(c, "linkedin", code).json()["access_token"]
    bearer = {
        "Authorization": f"Bearer {token}",
        "LinkedIn-Version": "202603",
        "X-Restli-Protocol-Version": "2.0.0",
    }
    acls = c.get("/rest/organizationAcls", params={"q": "roleAssignee"}, headers=bearer).json()["elements"]
    assert len(acls) == 1 and acls[0]["role"] == "ADMINISTRATOR"
    org = acls[0]["organization"]
    post = {
        "author": org,
        "commentary": "hi",
        "visibility": "PUBLIC",
        "lifecycleState": "PUBLISHED",
        "distribution": {
            "feedDistribution": "MAIN_FEED",
            "targetEntities": [],
            "thirdPartyDistributionChannels": [],
        },
    }
    r = c.post("/rest/posts", json=post, headers=bearer)
    assert r.status_code == 201 and r.headers["x-restli-id"].startswith("urn:li:share:")
    assert (
        c.post("/rest/posts", json={**post, "author": "urn:li:organization:1"}, headers=bearer).status_code
        == 403
    )


def test_linkedin_organisation_lookup_gives_the_localized_name(sb: Sandbox) -> None:
    c = client(sb, "linkedin")
    code = authorize(
        c,
        "linkedin",
        sandbox_pages="3",
        sandbox_user="Acme admin",
        scope="openid profile w_organization_social r_organization_admin",
    )["code"]
    token = exchange(c, "linkedin", code).json()["access_token"]
    bearer = {
        "Authorization": f"Bearer {token}",
        "LinkedIn-Version": "202603",
        "X-Restli-Protocol-Version": "2.0.0",
    }
    orgs = [
        a["organization"].rsplit(":", 1)[-1]
        for a in c.get("/rest/organizationAcls", params={"q": "roleAssignee"}, headers=bearer).json()[
            "elements"
        ]
    ]
    assert len(orgs) == 2
    one = c.get(f"/rest/organizations/{orgs[0]}", headers=bearer)
    assert one.status_code == 200 and one.json()["localizedName"] == "Acme admin Org 1"
    assert one.json()["id"] == int(orgs[0]) and one.json()["name"]["localized"]["en_US"] == "Acme admin Org 1"
    batch = c.get(f"/rest/organizations?ids=List({orgs[0]},{orgs[1]},99)", headers=bearer).json()
    assert {k: v["localizedName"] for k, v in batch["results"].items()} == {
        orgs[0]: "Acme admin Org 1",
        orgs[1]: "Acme admin Org 2",
    }
    assert batch["errors"]["99"]["status"] == 403
    unknown = c.get("/rest/organizations/99", headers=bearer)
    assert unknown.status_code == 404
    assert c.get("/rest/organizations", params={"ids": "1,2"}, headers=bearer).status_code == 400
    # another member's organisation is not readable through this grant
    other = exchange(
        c,
        "linkedin",
        authorize(
            c, "linkedin", sandbox_pages="2", sandbox_user="Rival", scope="openid r_organization_admin"
        )["code"],
    ).json()["access_token"]
    r = c.get(f"/rest/organizations/{orgs[0]}", headers={**bearer, "Authorization": f"Bearer {other}"})
    assert r.status_code == 403 and r.json()["code"] == "ACCESS_DENIED"
    # without r_organization_admin / rw_organization_admin the ACLs and the lookup are refused
    narrow = exchange(
        c,
        "linkedin",
        authorize(
            c, "linkedin", sandbox_pages="2", sandbox_user="Narrow", scope="openid w_organization_social"
        )["code"],
    ).json()["access_token"]
    nb = {**bearer, "Authorization": f"Bearer {narrow}"}
    r = c.get("/rest/organizationAcls", params={"q": "roleAssignee"}, headers=nb)
    assert r.status_code == 403 and r.json()["code"] == "ACCESS_DENIED"
    r = c.get(f"/rest/organizations/{orgs[0]}", headers=nb)
    assert r.status_code == 403 and r.json()["code"] == "ACCESS_DENIED"


def test_settings_read_the_issue_base_url_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from backend.config import Settings

    monkeypatch.setenv("SOCIALPUB_YOUTUBE_BASE_URL", "http://127.0.0.1:9/youtube/v3")
    monkeypatch.setenv("SOCIALPUB_FACEBOOK_BASE_URL", "http://127.0.0.1:8")
    monkeypatch.setenv("SOCIALPUB_TIKTOK_API_BASE", "http://127.0.0.1:7")  # the older name still works
    s = Settings()
    assert own(s, "youtube").api_base == "http://127.0.0.1:9/youtube/v3"
    assert own(s, "youtube").upload_base == "http://127.0.0.1:9/upload/youtube/v3"
    assert own(s, "facebook").api_base == own(s, "facebook").video_api_base == "http://127.0.0.1:8"
    assert own(s, "tiktok").api_base == "http://127.0.0.1:7"
    from backend.networks.linkedin.settings import LinkedInSettings

    assert LinkedInSettings(api_base="http://x/rest").api_base == "http://x/rest"
    assert own(Settings(), "linkedin").api_base == "https://api.linkedin.com/rest"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_sandbox_serve_answers_over_http(tmp_path: Path) -> None:
    port = _free_port()
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "SOCIALPUB_DATA_DIR": str(tmp_path / "product"),
        "SOCIALPUB_SANDBOX_DELAY_S": "0",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from socialpub_tui.cli.main import main; main()",
            "sandbox",
            "serve",
            "youtube",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "emu"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        with httpx.Client(base_url=base, trust_env=False, timeout=5) as c:
            while True:
                try:
                    c.get("/_sandbox/oauth")
                    break
                except httpx.TransportError:
                    assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1]
                    time.sleep(0.2)
            tokens = connect(c, "youtube")
            assert tokens["access_token"].startswith("ya29.")
            assert api_call(c, "youtube", tokens).status_code == 200
            # the upload session's Location points back at this server
            r = c.post(
                "/upload/youtube/v3/videos",
                params={"uploadType": "resumable", "part": "snippet,status"},
                json={"snippet": {"title": "t"}, "status": {"privacyStatus": "private"}},
                headers={
                    "Authorization": f"Bearer {tokens['access_token']}",
                    "X-Upload-Content-Length": "10",
                    "X-Upload-Content-Type": "video/mp4",
                },
            )
            assert r.status_code == 200 and r.headers["location"].startswith(
                base + "/upload/youtube/v3/videos"
            )
            # an error switch armed over HTTP answers the next upload session with YouTube's own error
            assert c.post("/_sandbox/errors", json={"code": "quotaExceeded"}).status_code == 200
            r = c.post(
                "/upload/youtube/v3/videos",
                params={"uploadType": "resumable", "part": "snippet,status"},
                json={"snippet": {"title": "t"}, "status": {"privacyStatus": "private"}},
                headers={
                    "Authorization": f"Bearer {tokens['access_token']}",
                    "X-Upload-Content-Length": "10",
                    "X-Upload-Content-Type": "video/mp4",
                },
            )
            assert r.status_code == 403 and r.json()["error"]["errors"][0]["reason"] == "quotaExceeded"
            assert c.get("/_sandbox/errors").json()["armed"] == []
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl+C
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert f"SOCIALPUB_YOUTUBE_BASE_URL={base}/youtube/v3" in out
    assert f"{base}/token" in out and "stopped" in out
    assert f"{base}/_sandbox/errors" in out
    assert (tmp_path / "emu" / "sandbox.db").exists()


def test_tiktok_video_needs_its_scope(sb: Sandbox) -> None:
    c = client(sb, "tiktok")
    code = authorize(c, "tiktok", scope="user.info.basic,video.upload")["code"]
    token = exchange(c, "tiktok", code).json()["access_token"]
    body = {
        "post_info": {"privacy_level": "SELF_ONLY", "title": "t"},
        "source_info": {"source": "PULL_FROM_URL", "video_url": "https://media.example/v.mp4"},
    }
    r = c.post("/v2/post/publish/video/init/", json=body, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "scope_not_authorized"
    r = c.post(
        "/v2/post/publish/inbox/video/init/",
        json={"source_info": body["source_info"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 200 and r.json()["data"]["publish_id"].startswith("v_inbox_url~")
    info = c.get(
        "/v2/user/info/",
        params={"fields": "open_id,display_name"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    assert set(info["data"]["user"]) == {"open_id", "display_name"} and info["error"]["code"] == "ok"


def test_google_keeps_the_refresh_token_and_a_testing_apps_dies_after_7_days(sb: Sandbox) -> None:
    """F-Y10: a refresh answers no new refresh token (the old one keeps working); F-Y6: a new project's consent
    screen is in Testing, so its refresh tokens expire 7 days after consent (refresh_token_expires_in)."""
    c = client(sb, "youtube")
    first = connect(c, "youtube")
    assert 7 * 86400 - 5 <= first["refresh_token_expires_in"] <= 7 * 86400
    again = refresh(c, "youtube", first["refresh_token"])
    assert again.status_code == 200 and "refresh_token" not in again.json()
    assert refresh(c, "youtube", first["refresh_token"]).status_code == 200  # still the same one
    with time_machine.travel(datetime.now(UTC) + timedelta(days=7, seconds=5), tick=False):
        dead = refresh(c, "youtube", first["refresh_token"])
    assert dead.status_code == 400
    assert dead.json() == {
        "error": "invalid_grant",
        "error_description": "Token has been expired or revoked.",
    }


def test_a_published_google_apps_refresh_token_lasts(tmp_path: Path) -> None:
    from backend.networks.sandbox.developer_app import EmulatedApp

    sb = Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            apps=(("youtube", EmulatedApp(products=frozenset({"in-production"}))),),
        )
    )
    c = client(sb, "youtube")
    first = connect(c, "youtube")
    assert "refresh_token_expires_in" not in first
    with time_machine.travel(datetime.now(UTC) + timedelta(days=30), tick=False):
        assert refresh(c, "youtube", first["refresh_token"]).status_code == 200
