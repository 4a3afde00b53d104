"""The networks' OAuth flows (backend/networks/oauth.py) against each emulator in process: PKCE, the authorize
URL, the code exchange, the accounts a grant reaches (Facebook pages, Instagram through its page, LinkedIn member
and organisations, TikTok user, YouTube channel), the health check, and how failures are classified."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
import time_machine

from backend.config import Settings
from backend.networks import oauth, oauth_apps
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.networks.sandbox import oauth as emu
from backend.networks.sandbox.developer_app import EmulatedApp
from backend.services.adapters import sandbox_emulators
from tests.support.networks import oauth_names, own

NETWORKS = oauth_names()
# the networks whose apps register only HTTPS redirect URIs (Threads): the loopback http listener below cannot be
# registered there; their own package's tests connect with an HTTPS redirect (tests/networks/threads/test_oauth.py)
HTTPS_ONLY = frozenset({"threads"})
HTTP_REDIRECT_NETWORKS = tuple(n for n in NETWORKS if n not in HTTPS_ONLY)
REDIRECT = "http://127.0.0.1:53682/callback"
BASES = {
    "tiktok": "http://127.0.0.1:9",
    "facebook": "http://127.0.0.1:9",
    "instagram": "http://127.0.0.1:9",
    "linkedin": "http://127.0.0.1:9/rest",
    "youtube": "http://127.0.0.1:9/youtube/v3",
    "threads": "http://127.0.0.1:9",
}


@pytest.fixture
def sb(tmp_path: Path) -> Sandbox:
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path), emulators=sandbox_emulators(), delay_s=0, processing_s=0
        )
    ).activate()


def settings_for(platform: str, tmp_path: Path, configured: bool = True) -> Settings:
    settings = Settings(data_dir=tmp_path)
    mine = own(settings, platform)
    mine.api_base = BASES[platform]
    if configured:
        mine.client_id, mine.client_secret = "app-1", "s3cret"
    return settings


def consent(c: httpx.Client, url: str, **sandbox: str) -> dict[str, str]:
    """The scripted browser: the authorize URL answers a redirect to the loopback listener."""
    r = c.get(url + "".join(f"&{k}={quote(v)}" for k, v in sandbox.items()))
    assert r.status_code == 302, r.text
    assert r.headers["location"].startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"]).query).items()}


def grant(sb: Sandbox, platform: str, tmp_path: Path, **sandbox: str):  # type: ignore[no-untyped-def]
    s = settings_for(platform, tmp_path)
    app = oauth_apps.app(platform, s)
    c = httpx.Client(transport=sb.transport(platform))
    verifier, challenge = oauth.pkce_pair(app.endpoints.pkce_encoding)
    got = consent(c, oauth.authorize_url(app, REDIRECT, "state-1", challenge), **sandbox)
    assert got["state"] == "state-1"
    tokens = oauth.exchange_code(app, c, got["code"], REDIRECT, verifier)
    return s, c, tokens


def test_pkce_pair_is_s256_of_an_unreserved_verifier() -> None:
    verifier, challenge = oauth.pkce_pair()
    assert 43 <= len(verifier) <= 128 and set(verifier) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )
    assert emu.pkce_ok(challenge, "S256", verifier) and not emu.pkce_ok(challenge, "S256", verifier + "x")
    assert oauth.pkce_pair()[0] != verifier


@pytest.mark.parametrize("platform", NETWORKS)
def test_authorize_url_carries_the_app_scopes_state_and_challenge(platform: str, tmp_path: Path) -> None:
    app = oauth_apps.app(platform, settings_for(platform, tmp_path))
    url = oauth.authorize_url(app, REDIRECT, "st", "chal")
    parts = urlsplit(url)
    assert parts.netloc == "127.0.0.1:9"  # the emulator's origin lent by the loopback API base
    q = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert (
        q[app.endpoints.client_id_param] == "app-1" and q["redirect_uri"] == REDIRECT and q["state"] == "st"
    )
    if app.endpoints.pkce:
        assert q["code_challenge"] == "chal" and q["code_challenge_method"] == "S256"
    else:  # LinkedIn's web flow: PKCE refused (tests/networks/linkedin)
        assert "code_challenge" not in q and "code_challenge_method" not in q
    assert q["scope"] == app.endpoints.scope_separator.join(app.endpoints.scopes)
    assert "s3cret" not in url
    if platform == "tiktok":
        assert "video.publish" in q["scope"].split(",")
    if platform == "youtube":
        assert q["access_type"] == "offline"


def test_not_configured_names_the_settings(tmp_path: Path) -> None:
    with pytest.raises(oauth_apps.NotConfigured, match="SOCIALPUB_TIKTOK_CLIENT_ID"):
        oauth_apps.app("tiktok", settings_for("tiktok", tmp_path, configured=False))


@pytest.mark.parametrize("platform", HTTP_REDIRECT_NETWORKS)
def test_connect_discover_and_check_each_network(sb: Sandbox, platform: str, tmp_path: Path) -> None:
    s, c, tokens = grant(sb, platform, tmp_path, sandbox_user=f"Brand {platform}")
    assert "access_token" not in repr(tokens) and tokens.access_token not in repr(tokens)
    found = oauth.discover(platform, s, c, tokens)
    assert len(found) == 1
    cand = found[0]
    assert cand.external_id and cand.access_token and cand.access_token not in repr(cand)
    expected_type = {
        "facebook": "page",
        "instagram": "instagram_account",
        "linkedin": "member",
        "tiktok": "user",
        "youtube": "channel",
    }[platform]
    assert cand.type == expected_type
    if platform in ("tiktok", "youtube"):
        assert cand.refresh_token and cand.expires_at is not None  # refreshable, short-lived access
    if platform in ("facebook", "instagram"):
        assert (
            cand.access_token != tokens.access_token and cand.expires_at is None
        )  # a never-expiring page token
    if platform == "linkedin":
        assert cand.external_id.startswith("urn:li:person:") and cand.name == f"Brand {platform}"
    assert oauth.check(platform, s, c, cand.external_id, cand.access_token) == oauth.Health("ok")


def test_facebook_lists_one_candidate_per_page_with_its_own_token(sb: Sandbox, tmp_path: Path) -> None:
    s, c, tokens = grant(sb, "facebook", tmp_path, sandbox_user="Acme", sandbox_pages="3")
    pages = oauth.discover("facebook", s, c, tokens)
    assert [p.name for p in pages] == ["Acme 1", "Acme 2", "Acme 3"]
    assert len({p.access_token for p in pages}) == 3 and len({p.external_id for p in pages}) == 3
    # each page token acts as its page only; the short-lived user token was exchanged for a long-lived one
    assert oauth.check("facebook", s, c, pages[1].external_id, pages[1].access_token).status == "ok"
    assert oauth.check("facebook", s, c, pages[1].external_id, pages[0].access_token).status == "other"
    with time_machine.travel(
        datetime.now(UTC) + timedelta(days=30), tick=False
    ):  # past the short token's hour
        assert oauth.check("facebook", s, c, pages[0].external_id, pages[0].access_token).status == "ok"


def test_instagram_accounts_come_through_their_linked_pages(sb: Sandbox, tmp_path: Path) -> None:
    s, c, tokens = grant(sb, "instagram", tmp_path, sandbox_user="Shop", sandbox_pages="2")
    found = oauth.discover("instagram", s, c, tokens)
    assert len(found) == 2 and all(f.username and f.external_id.isdigit() for f in found)
    for f in found:
        assert oauth.check("instagram", s, c, f.external_id, f.access_token).status == "ok"


def _community_app(tmp_path: Path) -> Sandbox:
    """A sandbox whose LinkedIn app holds the Community Management API (organisation posting)."""
    app = EmulatedApp(products=frozenset({"openid", "share", "community"}))
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path / "cma"),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            apps=(("linkedin", app),),
        )
    ).activate()


def test_linkedin_member_and_its_organisations(tmp_path: Path) -> None:
    sb = _community_app(tmp_path)
    s = settings_for("linkedin", tmp_path)
    own(s, "linkedin").organizations = True  # SOCIALPUB_LINKEDIN_ORGANIZATIONS=1
    app = oauth_apps.app("linkedin", s)
    c = httpx.Client(transport=sb.transport("linkedin"))
    got = consent(c, oauth.authorize_url(app, REDIRECT, "st", None), sandbox_user="Jo", sandbox_pages="3")
    tokens = oauth.exchange_code(app, c, got["code"], REDIRECT, None)
    found = oauth.discover("linkedin", s, c, tokens)
    assert [f.type for f in found] == ["member", "organization", "organization"]
    assert all(f.external_id.startswith("urn:li:organization:") for f in found[1:])
    assert [f.name for f in found] == ["Jo", "Jo Org 1", "Jo Org 2"]  # the organisations' localizedName
    assert all(f.access_token == tokens.access_token for f in found)  # the member's token acts for them
    assert all(oauth.check("linkedin", s, c, f.external_id, f.access_token).status == "ok" for f in found)


def test_linkedin_without_the_organisation_lookup_connects_the_member(tmp_path: Path) -> None:
    sb = _community_app(tmp_path)
    s = settings_for("linkedin", tmp_path)
    own(s, "linkedin").organizations = True
    app = oauth_apps.app("linkedin", s)
    c = httpx.Client(transport=sb.transport("linkedin"))
    url = oauth.authorize_url(app, REDIRECT, "state-1", None).replace("%20r_organization_admin", "")
    got = consent(c, url, sandbox_user="Jo", sandbox_pages="2")  # the user granted no r_organization_admin
    tokens = oauth.exchange_code(app, c, got["code"], REDIRECT, None)
    found = oauth.discover("linkedin", s, c, tokens)
    assert [f.name for f in found] == ["Jo"]  # the ACLs' 403: the member only


@pytest.mark.parametrize("platform", HTTP_REDIRECT_NETWORKS)
def test_a_revoked_grant_is_dead_and_an_expired_token_too(sb: Sandbox, platform: str, tmp_path: Path) -> None:
    s, c, tokens = grant(sb, platform, tmp_path)
    cand = oauth.discover(platform, s, c, tokens)[0]
    if platform not in ("facebook", "instagram"):  # page tokens never expire
        with time_machine.travel(datetime.now(UTC) + timedelta(days=400), tick=False):
            health = oauth.check(platform, s, c, cand.external_id, cand.access_token)
            assert health.status == "dead", health
    emu.revoke_grant(emu.grants(platform)[-1].id)
    health = oauth.check(platform, s, c, cand.external_id, cand.access_token)
    assert health.status == "dead" and health.message and cand.access_token not in health.message


@pytest.mark.parametrize("platform", HTTP_REDIRECT_NETWORKS)
def test_token_endpoint_failures_are_classified(sb: Sandbox, platform: str, tmp_path: Path) -> None:
    s = settings_for(platform, tmp_path)
    app = oauth_apps.app(platform, s)
    c = httpx.Client(transport=sb.transport(platform))
    verifier, challenge = oauth.pkce_pair(app.endpoints.pkce_encoding)
    code = consent(c, oauth.authorize_url(app, REDIRECT, "x", challenge))["code"]
    emu.configure_oauth(platform, token_failure="server_error")
    with pytest.raises(oauth.OAuthError) as transient:
        oauth.exchange_code(app, c, code, REDIRECT, verifier)
    assert transient.value.kind == "transient"
    emu.configure_oauth(platform, token_failure=None)
    if app.endpoints.pkce:
        with pytest.raises(oauth.OAuthError) as wrong_verifier:
            oauth.exchange_code(app, c, code, REDIRECT, verifier + "x")
        assert wrong_verifier.value.kind in ("dead", "other")
    oauth.exchange_code(app, c, code, REDIRECT, verifier)
    with pytest.raises(oauth.OAuthError) as reused:  # a code is good once
        oauth.exchange_code(app, c, code, REDIRECT, verifier)
    assert reused.value.kind == "dead"


def test_transport_failure_is_transient(tmp_path: Path) -> None:
    def boom(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    s = settings_for("youtube", tmp_path)
    health = oauth.check("youtube", s, httpx.Client(transport=httpx.MockTransport(boom)), "UC1", "tok")
    assert health.status == "transient"


def test_an_answer_of_an_unexpected_shape_is_an_error_not_a_crash(tmp_path: Path) -> None:
    def odd(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"items": [{"snippet": "no id"}]})

    s = settings_for("youtube", tmp_path)
    with pytest.raises(oauth.OAuthError) as err:
        oauth.discover("youtube", s, httpx.Client(transport=httpx.MockTransport(odd)), oauth.TokenSet("t"))
    assert err.value.kind == "other" and err.value.code == "unexpected_answer"


# ---- classification: the adapters' own reading of an API call's refusal ---------------------------------------
def _graph(code: int, status: int = 400, sub: int | None = None) -> httpx.Response:
    err: dict[str, object] = {"message": "m", "type": "OAuthException", "code": code}
    if sub is not None:
        err["error_subcode"] = sub
    return httpx.Response(status, json={"error": err})


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
@pytest.mark.parametrize(
    ("code", "sub", "kind"),
    [
        (190, 458, "dead"),
        (190, 463, "dead"),
        (102, None, "dead"),
        (368, None, "transient"),
        (80001, None, "transient"),
        (80002, None, "transient"),
        (80004, None, "transient"),
        (4, None, "transient"),
        (100, None, "other"),
    ],
)
def test_graph_refusals_read_as_the_adapter_reads_them(platform, code, sub, kind) -> None:  # type: ignore[no-untyped-def]
    got = oauth.classify(platform, _graph(code, 401 if code == 102 else 400, sub))
    assert got.kind == kind and got.code == (f"{code}/{sub}" if sub else str(code))


@pytest.mark.parametrize(
    ("platform", "resp", "kind"),
    [
        (
            "tiktok",
            httpx.Response(401, json={"error": {"code": "access_token_invalid", "message": "revoked"}}),
            "dead",
        ),
        (
            "tiktok",
            httpx.Response(429, json={"error": {"code": "rate_limit_exceeded", "message": "slow"}}),
            "transient",
        ),
        (
            "linkedin",
            httpx.Response(401, json={"code": "REVOKED_ACCESS_TOKEN", "serviceErrorCode": 65602}),
            "dead",
        ),
        ("linkedin", httpx.Response(503, json={"message": "down"}), "transient"),
        (
            "youtube",
            httpx.Response(401, json={"error": {"code": 401, "errors": [{"reason": "authError"}]}}),
            "dead",
        ),
        (
            "youtube",
            httpx.Response(403, json={"error": {"code": 403, "errors": [{"reason": "quotaExceeded"}]}}),
            "transient",
        ),
    ],
)
def test_api_refusals_per_network(platform, resp, kind) -> None:  # type: ignore[no-untyped-def]
    assert oauth.classify(platform, resp).kind == kind


@pytest.mark.parametrize(
    "resp, kind",
    [
        # an API's sentence under `error` (docs.joinmastodon.org/entities/Error/) is not an OAuth code: it was read as
        # an unknown one (`other`), so a revoked token did not ask for a reconnection
        (httpx.Response(401, json={"error": "The access token is invalid"}), "dead"),
        (
            httpx.Response(503, json={"error": "There was a temporary problem serving your request"}),
            "transient",
        ),
        # OAuth's own codes are still read as such
        (httpx.Response(400, json={"error": "invalid_grant", "error_description": "expired"}), "dead"),
        (httpx.Response(503, json={"error": "temporarily_unavailable"}), "transient"),
    ],
)
def test_a_sentence_under_error_is_the_apis_refusal_not_an_oauth_code(resp, kind) -> None:  # type: ignore[no-untyped-def]
    refused = oauth.classify("linkedin", resp)
    assert refused.kind == kind
    if resp.status_code == 401:
        assert "The access token is invalid" in refused.message
