"""Each network's own revocation of a grant (its OAuth app's `revoke`, called when an account is disconnected),
tried against its emulator in process: the grant is connected through the emulator's OAuth endpoints, revoked
through the network package's `revoke`, and the emulator then refuses it as the network does — the refresh token
`invalid_grant`, the API 401. The API and CLI faces: tests/api/test_accounts_revoke.py, tests/cli/."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from backend.config import Settings
from backend.networks import oauth, registry
from backend.networks.sandbox import Sandbox
from tests.networks.test_sandbox_oauth import (  # noqa: F401  (sb: fixture)
    api_call,
    assert_token_refused,
    client,
    connect,
    refresh,
    sb,
)
from tests.support.networks import own


def revoke(settings: Settings, c: httpx.Client, platform: str, tokens: dict[str, Any]) -> str | None:
    app = registry.get(platform).oauth_app()
    assert app is not None and app.revoke is not None, platform
    said: str | None = app.revoke(
        settings, c, "ext-1", tokens["access_token"], tokens.get("refresh_token"), None
    )
    return said


def configured(settings: Settings, platform: str) -> Settings:
    mine = own(settings, platform)
    mine.client_id, mine.client_secret = "app-123", "s3cret"
    return settings


# --- Google (YouTube) ----------------------------------------------------------------------------------------------
def test_google_revokes_the_grant_by_its_refresh_token(sb: Sandbox, settings: Settings) -> None:  # noqa: F811
    c = client(sb, "youtube")
    tokens = connect(c, "youtube")
    sent: list[httpx.Request] = []
    c.event_hooks["request"].append(sent.append)
    assert revoke(settings, c, "youtube", tokens) == (
        "the grant was revoked at Google (its refresh and access tokens)"
    )
    # one form-encoded POST to oauth2.googleapis.com/revoke, the refresh token, no app credentials
    [req] = sent
    assert (req.method, req.url.host, req.url.path) == ("POST", "oauth2.googleapis.com", "/revoke")
    assert req.headers["content-type"] == "application/x-www-form-urlencoded"
    assert dict(httpx.QueryParams(req.read().decode())) == {"token": tokens["refresh_token"]}
    assert refresh(c, "youtube", tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert_token_refused("youtube", api_call(c, "youtube", tokens), "revoked")
    # Google answers a token it no longer knows 400 invalid_token: nothing left to revoke
    assert revoke(settings, c, "youtube", tokens) is None


def test_google_takes_the_access_token_when_there_is_no_refresh_token(
    sb: Sandbox,  # noqa: F811
    settings: Settings,
) -> None:
    c = client(sb, "youtube")
    tokens = connect(c, "youtube")
    assert revoke(settings, c, "youtube", {"access_token": tokens["access_token"]})
    # the access token takes its refresh token with it
    assert refresh(c, "youtube", tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert_token_refused("youtube", api_call(c, "youtube", tokens), "revoked")


def test_google_down_is_a_transient_failure(settings: Settings) -> None:
    c = httpx.Client(
        transport=httpx.MockTransport(lambda r: httpx.Response(503, json={"error": "internal_failure"}))
    )
    with pytest.raises(oauth.OAuthError) as exc:
        revoke(settings, c, "youtube", {"access_token": "ya29.x", "refresh_token": "1//0x"})
    assert exc.value.kind == "transient"


# --- TikTok ----------------------------------------------------------------------------------------------------------
def test_tiktok_revokes_the_access_token_with_the_apps_credentials(sb: Sandbox, settings: Settings) -> None:  # noqa: F811
    c = client(sb, "tiktok")
    tokens = connect(c, "tiktok")
    sent: list[httpx.Request] = []
    c.event_hooks["request"].append(sent.append)
    said = revoke(configured(settings, "tiktok"), c, "tiktok", tokens)
    assert said == "the token was revoked at TikTok: socialpub left the user's connected apps"
    [req] = sent
    assert (req.method, req.url.host, req.url.path) == ("POST", "open.tiktokapis.com", "/v2/oauth/revoke/")
    assert dict(httpx.QueryParams(req.read().decode())) == {
        "client_key": "app-123",
        "client_secret": "s3cret",
        "token": tokens["access_token"],
    }
    assert_token_refused("tiktok", api_call(c, "tiktok", tokens), "revoked")
    assert refresh(c, "tiktok", tokens["refresh_token"]).json()["error"] == "invalid_grant"
    # TikTok refuses a token it does not know, said with its error
    with pytest.raises(oauth.OAuthError) as exc:
        revoke(settings, c, "tiktok", {"access_token": "act.nope"})
    assert exc.value.code == "invalid_request" and "TikTok refused the revocation" in exc.value.message


def test_tiktok_needs_socialpubs_app(sb: Sandbox, settings: Settings) -> None:  # noqa: F811
    c = client(sb, "tiktok")
    tokens = connect(c, "tiktok")
    with pytest.raises(oauth.OAuthError) as exc:
        revoke(settings, c, "tiktok", tokens)  # no SOCIALPUB_TIKTOK_CLIENT_ID here
    assert exc.value.code == "oauth_not_configured" and "SOCIALPUB_TIKTOK_CLIENT_ID" in exc.value.message
    assert api_call(c, "tiktok", tokens).status_code == 200  # nothing was sent: the token lives


# --- no revocation socialpub can call -------------------------------------------------------------------------------
@pytest.mark.parametrize("platform", ["linkedin", "facebook", "instagram", "threads"])
def test_no_sourced_revocation_is_not_offered(platform: str) -> None:
    """LinkedIn documents no revocation endpoint; Meta's revokes a user's login, and a Page (Facebook, Instagram)
    holds no user token; Threads documents none: their fidelity tables give the sources. Disconnecting says
    `not_offered` (tests/api/test_accounts_revoke.py)."""
    app = registry.get(platform).oauth_app()
    assert app is not None and app.revoke is None
