"""Threads' OAuth against its strict emulator (a new app): the Authorization Window on threads.com, the code
exchanged by POST, th_exchange_token at discovery (60 days), th_refresh_token through the one refresh path; a person
who is not a Threads tester and an http redirect are refused without a redirect (fidelity table: docs.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
import time_machine

from backend.config import Settings
from backend.networks import oauth, oauth_apps, tokens
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.networks.sandbox.developer_app import parse_apps
from backend.networks.threads.checks import check_account
from backend.services.adapters import sandbox_emulators
from tests.support.networks import own

HTTPS_REDIRECT = "https://127.0.0.1:53682/callback"


@pytest.fixture
def sb(tmp_path: Path) -> Sandbox:
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path), emulators=sandbox_emulators(), delay_s=0, processing_s=0
        )
    ).activate()


def configured(tmp_path: Path) -> Settings:
    s = Settings(data_dir=tmp_path)
    mine = own(s, "threads")
    mine.api_base = "http://127.0.0.1:9"
    mine.client_id, mine.client_secret = "threads-app-1", "s3cret"
    return s


def authorize(sb: Sandbox, s: Settings, redirect: str, **extra: str) -> httpx.Response:
    app = oauth_apps.app("threads", s)
    c = httpx.Client(transport=sb.transport("threads"))
    url = oauth.authorize_url(app, redirect, "st", None)
    return c.get(url + "".join(f"&{k}={quote(v)}" for k, v in extra.items()))


def test_authorize_is_on_threads_com_and_asks_both_permissions() -> None:
    app = oauth_apps.oauth_app("threads")
    assert app.endpoints.authorize == "https://threads.com/oauth/authorize"
    assert app.endpoints.token == "https://graph.threads.net/oauth/access_token"
    assert app.endpoints.scopes == ("threads_basic", "threads_content_publish") and not app.endpoints.pkce


def test_connect_exchanges_for_a_60_day_token_and_refreshes_it(sb: Sandbox, tmp_path: Path) -> None:
    s = configured(tmp_path)
    r = authorize(sb, s, HTTPS_REDIRECT, sandbox_user="Jo")
    assert r.status_code == 302 and r.headers["location"].endswith("#_")
    got = {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"].removesuffix("#_")).query).items()}
    c = httpx.Client(transport=sb.transport("threads"))
    app = oauth_apps.app("threads", s)
    short = oauth.exchange_code(app, c, got["code"], HTTPS_REDIRECT, None)
    [cand] = oauth.discover("threads", s, c, short)
    assert cand.type == "user" and cand.name == "Jo" and cand.access_token != short.access_token
    assert cand.refresh_token == cand.access_token  # a long-lived token refreshes itself
    assert cand.granted_scopes == ("threads_basic", "threads_content_publish")  # read from /debug_token
    assert cand.expires_at is not None and cand.expires_at - datetime.now(UTC) > timedelta(days=59)
    assert oauth.check("threads", s, c, cand.external_id, cand.access_token) == oauth.Health("ok")
    # younger than 24 h: Threads refuses to refresh it (not a dead grant)
    with pytest.raises(tokens.RefreshRejected):
        tokens.refresh_grant("threads", s, c, cand.refresh_token, now=datetime.now(UTC))
    with time_machine.travel(datetime.now(UTC) + timedelta(days=2), tick=False):
        new = tokens.refresh_grant("threads", s, c, cand.refresh_token, now=datetime.now(UTC))
        assert new.access_token != cand.access_token and new.refresh_token == new.access_token
        assert new.expires_at is not None and new.expires_at - datetime.now(UTC) > timedelta(days=59)
    with time_machine.travel(datetime.now(UTC) + timedelta(days=70), tick=False):  # never refreshed: dead
        with pytest.raises(tokens.GrantDead):
            tokens.refresh_grant("threads", s, c, cand.refresh_token, now=datetime.now(UTC))


def test_a_person_who_is_not_a_tester_of_a_new_app_is_refused_without_a_redirect(
    sb: Sandbox, tmp_path: Path
) -> None:
    r = authorize(sb, configured(tmp_path), HTTPS_REDIRECT, sandbox_role="none")
    assert r.status_code == 400 and "location" not in r.headers
    assert r.json()["error_code"] == 1349245


def test_an_http_redirect_is_url_blocked(sb: Sandbox, tmp_path: Path) -> None:
    r = authorize(sb, configured(tmp_path), "http://127.0.0.1:53682/callback")
    assert r.status_code == 400 and "location" not in r.headers
    assert r.json()["error_code"] == 1349168 and r.json()["error_message"].startswith("URL Blocked")


def connected(sb: Sandbox, s: Settings) -> oauth.Candidate:
    r = authorize(sb, s, HTTPS_REDIRECT, sandbox_user="Jo")
    got = {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"].removesuffix("#_")).query).items()}
    c = httpx.Client(transport=sb.transport("threads"))
    short = oauth.exchange_code(oauth_apps.app("threads", s), c, got["code"], HTTPS_REDIRECT, None)
    assert short.scopes == ()  # the code exchange does not say what was granted
    [cand] = oauth.discover("threads", s, c, short)
    return cand


def test_the_granted_permissions_are_read_from_debug_token_and_a_missing_one_is_a_finding(
    tmp_path: Path,
) -> None:
    """An app whose Threads use case holds threads_basic alone: the person grants only that, the token exchange
    does not say so, /debug_token does — and the doctor names threads_content_publish as missing."""
    sb = Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            apps=parse_apps({"threads": {"products": ["threads_basic"]}}),
        )
    ).activate()
    cand = connected(sb, configured(tmp_path))
    assert cand.granted_scopes == ("threads_basic",)
    [finding] = [f for f in check_account(cand.granted_scopes) if f.severity == "error"]
    assert "threads_content_publish" in finding.message


def test_debug_token_refuses_a_caller_token_that_is_not_valid(sb: Sandbox, tmp_path: Path) -> None:
    cand = connected(sb, configured(tmp_path))
    c = httpx.Client(transport=sb.transport("threads"))
    r = c.get(
        "https://graph.threads.net/v1.0/debug_token",
        params={"input_token": cand.access_token, "access_token": "THAAnot-a-token"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == 190
    r = c.get(
        "https://graph.threads.net/v1.0/debug_token",
        params={"input_token": "THAAnot-a-token", "access_token": cand.access_token},
    )
    assert r.status_code == 200 and r.json()["data"]["is_valid"] is False
