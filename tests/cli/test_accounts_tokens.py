"""`socialpub accounts list` shows a live account's token state: a TOKEN column (its expiry, or `⚠ …` when the
server warns) and the whole warning under the table — an expiring token that cannot be refreshed, an account
that must be reconnected."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from backend import clock
from backend.ids import new_id
from backend.store.models import Account, Workspace
from tests.cli.conftest import invoke


def live(
    platform: str,
    name: str,
    *,
    expires_in: timedelta | None,
    status: str = "active",
    refresh: str | None = None,
) -> str:
    now = clock.now()
    ws = Workspace.select().first()
    return Account.create(
        id=new_id("acc"),
        workspace=ws.id,
        platform=platform,
        name=name,
        kind="live",
        status=status,
        access_token="tok",
        refresh_token=refresh,
        token_expires_at=now + expires_in if expires_in else None,
        connected_at=now,
        created_at=now,
    ).id


def test_accounts_list_warns_about_tokens(embedded: Any, monkeypatch: Any) -> None:
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_YOUTUBE_CLIENT_ID", "app-123")  # YouTube's app configured: refreshed
    monkeypatch.setenv("SOCIALPUB_YOUTUBE_CLIENT_SECRET", "s3cret")
    get_settings.cache_clear()
    fb = live("facebook", "Brand page", expires_in=timedelta(days=3, hours=1))
    tt = live("tiktok", "Creator", expires_in=timedelta(hours=2), status="needs_reauth", refresh="rft.x")
    ok = live("youtube", "Channel", expires_in=timedelta(minutes=30), refresh="1//x")  # refreshed: no warning
    r = invoke("accounts", "list", "--utc")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert "TOKEN" in lines[0]
    row = {line.split()[0]: line for line in lines if line.startswith("acc_")}
    assert "⚠ expires in 3 days" in row[fb] and "⚠ reconnect" in row[tt]
    assert "⚠" not in row[ok] and " UTC" in row[ok]
    assert (
        f"⚠ {fb} (facebook, Brand page): token expires in 3 days: reconnect with socialpub accounts connect "
        "facebook"
    ) in r.out
    assert (
        f"⚠ {tt} (tiktok, Creator): the network no longer accepts its authorisation: reconnect with socialpub "
        "accounts connect tiktok" in r.out
    )
    listed = {a["id"]: a for a in invoke("accounts", "list", "--json").json()["items"]}
    assert listed[fb]["tokenWarning"].startswith("token expires in 3 days")
    assert listed[ok]["tokenWarning"] is None and listed[ok]["tokenExpiresAt"]
