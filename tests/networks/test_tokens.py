"""backend/networks/tokens.py: refresh per network against the emulators (TikTok rotation, Google, LinkedIn with
and without refresh), and each failure classified: a dead grant, a transient one (5xx, 429, timeout), the app
refused; Facebook and Instagram do not refresh."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from backend.config import Settings
from backend.networks import oauth_apps, oauth_types
from backend.networks import tokens as net
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig, oauth
from backend.services.adapters import sandbox_emulators
from tests.networks.test_sandbox_oauth import LINKEDIN_APP, client, connect
from tests.support.networks import own

NOW = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)


def about(at: datetime | None, life: timedelta) -> bool:
    """`at` is NOW + life, give or take the second the emulator rounds `expires_in` down by."""
    return at is not None and abs(at - (NOW + life)) <= timedelta(seconds=2)


@pytest.fixture
def sb(tmp_path: Path) -> Sandbox:
    return Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            processing_s=0,
            apps=(("linkedin", LINKEDIN_APP),),  # the flows of test_sandbox_oauth: PKCE, a native app
        )
    ).activate()


def app(platform: str) -> oauth_types.App:
    s = Settings(data_dir=Path("/nonexistent"))
    mine = own(s, platform)
    mine.client_id, mine.client_secret = "app-123", "s3cret"
    return oauth_apps.app(platform, s)


def test_tiktok_rotates(sb: Sandbox) -> None:
    got = connect(client(sb, "tiktok"), "tiktok")
    c = httpx.Client(transport=sb.transport("tiktok"))
    first = net.refresh(app("tiktok"), c, got["refresh_token"], now=NOW)
    assert first.refresh_token != got["refresh_token"] and first.refresh_token.startswith("rft.")
    assert about(first.expires_at, timedelta(hours=2)) and first.refresh_expires_at is not None
    assert "act." not in repr(first) and "rft." not in repr(first)  # never in a log
    with pytest.raises(net.GrantDead) as dead:  # the old one is spent
        net.refresh(app("tiktok"), c, got["refresh_token"], now=NOW)
    assert dead.value.code == "invalid_grant"
    assert net.refresh(app("tiktok"), c, first.refresh_token, now=NOW).access_token


@pytest.mark.parametrize("rotate", [True, False])
def test_google_keeps_the_refresh_token_when_none_is_given(sb: Sandbox, rotate: bool) -> None:
    oauth.configure_oauth("youtube", rotate=rotate)
    got = connect(client(sb, "youtube"), "youtube")
    out = net.refresh(
        app("youtube"), httpx.Client(transport=sb.transport("youtube")), got["refresh_token"], now=NOW
    )
    assert out.access_token.startswith("ya29.") and about(out.expires_at, timedelta(hours=1))
    assert (out.refresh_token != got["refresh_token"]) is rotate and out.refresh_token


def test_linkedin_refreshes_only_with_a_refresh_token(sb: Sandbox) -> None:
    got = connect(client(sb, "linkedin"), "linkedin")
    c = httpx.Client(transport=sb.transport("linkedin"))
    with pytest.raises(net.NotRefreshable):
        net.refresh(app("linkedin"), c, got.get("refresh_token"), now=NOW)
    oauth.configure_oauth("linkedin", refresh_enabled=True)
    got = connect(client(sb, "linkedin"), "linkedin")
    out = net.refresh(app("linkedin"), c, got["refresh_token"], now=NOW)
    assert out.refresh_token == got["refresh_token"]  # the same one, its life not extended
    assert about(out.expires_at, timedelta(days=60))


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
def test_graph_tokens_do_not_refresh(platform: str) -> None:
    with pytest.raises(net.NotRefreshable):
        net.refresh(app(platform), httpx.Client(), "anything", now=NOW)


@pytest.mark.parametrize("platform", ["tiktok", "youtube", "linkedin"])
def test_switched_failures_are_classified(sb: Sandbox, platform: str) -> None:
    if platform == "linkedin":
        oauth.configure_oauth(platform, refresh_enabled=True)
    got = connect(client(sb, platform), platform)
    c = httpx.Client(transport=sb.transport(platform))
    oauth.configure_oauth(platform, token_failure="server_error")
    with pytest.raises(net.RefreshTransient):
        net.refresh(app(platform), c, got["refresh_token"], now=NOW)
    oauth.configure_oauth(platform, token_failure="invalid_grant")
    with pytest.raises(net.GrantDead):
        net.refresh(app(platform), c, got["refresh_token"], now=NOW)
    oauth.configure_oauth(platform, token_failure=None)
    assert net.refresh(app(platform), c, got["refresh_token"], now=NOW).access_token  # not used up by either


def answering(status: int, body: dict | None = None, headers: dict | None = None) -> httpx.Client:
    return httpx.Client(
        transport=httpx.MockTransport(lambda r: httpx.Response(status, json=body, headers=headers))
    )


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (429, {"error": "rate_limit_exceeded"}, net.RefreshTransient),
        (502, None, net.RefreshTransient),
        (
            500,
            {"error": {"message": "An unknown error", "code": 2, "is_transient": True}},
            net.RefreshTransient,
        ),
        (
            400,
            {"error": {"message": "Error validating access token", "code": 190, "error_subcode": 458}},
            net.GrantDead,
        ),
        (401, {"error": "invalid_client", "error_description": "Unauthorized"}, net.RefreshRejected),
        (400, {"error": "invalid_request", "error_description": "bad"}, net.RefreshRejected),
        (200, {"error": "invalid_grant", "error_description": "in a 200"}, net.GrantDead),
    ],
)
def test_answers_are_classified(status: int, body: dict | None, kind: type) -> None:
    with pytest.raises(kind):
        net.refresh(app("tiktok"), answering(status, body, {"Retry-After": "7"}), "rft.x", now=NOW)


def test_a_timeout_is_transient_and_retry_after_is_kept() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(net.RefreshTransient) as t:
        net.refresh(app("youtube"), httpx.Client(transport=httpx.MockTransport(slow)), "1//x", now=NOW)
    assert t.value.code == "timeout"
    with pytest.raises(net.RefreshTransient) as t:
        net.refresh(app("youtube"), answering(429, {}, {"Retry-After": "7"}), "1//x", now=NOW)
    assert t.value.retry_after_s == 7.0
