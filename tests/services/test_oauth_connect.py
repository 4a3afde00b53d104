"""backend/services/oauth_connect.py: reconnecting an account (the way out of needs_reauth)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.networks.sandbox import oauth
from backend.services import oauth_connect, tokens
from backend.store.models import Account
from tests.networks.test_sandbox_oauth import connect
from tests.services.test_tokens import emu, emu_client, fast, live, refreshing  # noqa: F401  (fixtures)


def test_reconnecting_with_an_access_token_only_drops_the_dead_refresh_token(owner, fast, emu):  # type: ignore[no-untyped-def]  # noqa: F811
    acc, got = live(owner, emu, "tiktok")
    assert oauth.revoke_token(got["refresh_token"], "tiktok")  # the user removed the app: the grant is dead
    tokens.mark_needs_reauth(acc.id, "invalid_grant")
    fresh = connect(emu_client(emu, "tiktok"), "tiktok")  # a new grant, its access token used alone
    oauth_connect.connect_token(owner.workspace_id, fast, "tiktok", fresh["access_token"], expires_in=86400)
    again = Account.get_by_id(acc.id)
    assert again.status == "active"
    assert again.refresh_token is None and again.refresh_expires_at is None  # the dead one is gone
    with time_machine.travel(clock.now() + timedelta(hours=23, minutes=50), tick=False):
        with pytest.raises(tokens.NotRefreshable):  # nothing to refresh with: warned about, never "dead"
            tokens.refresh_account(acc.id, fast)
        assert Account.get_by_id(acc.id).status == "active"
        assert tokens.token_warning(Account.get_by_id(acc.id), fast).startswith("token expires in")


def test_check_reports_expiring_when_the_refresh_token_dies_soon(owner, fast, emu):  # type: ignore[no-untyped-def]  # noqa: F811
    """accounts check says what accounts list warns about: here the refresh token ends in 2 days."""
    refreshing("linkedin")
    acc, _ = live(owner, emu, "linkedin")
    Account.update(refresh_expires_at=clock.now() + timedelta(days=2)).where(Account.id == acc.id).execute()
    warning = tokens.token_warning(Account.get_by_id(acc.id), fast)
    assert warning and warning.startswith("authorisation expires in 2 days")
    got = oauth_connect.check(owner.workspace_id, fast, acc.id)
    assert got["status"] == "expiring" and got["message"] == warning
    Account.update(refresh_expires_at=clock.now() + timedelta(days=200)).where(Account.id == acc.id).execute()
    assert oauth_connect.check(owner.workspace_id, fast, acc.id)["status"] == "ok"
