"""backend/services/doctor.py: `accounts doctor`'s findings — a network's app (credentials, API version
lifecycle, the network's own check_app), each connected account (token state, the network's check_account),
per workspace. The network hooks come from the test plugin `pigeon` (tests/support/plugin_network), installed in
this process as a third-party distribution would be."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.networks import registry
from backend.services import accounts, doctor, oauth_connect
from backend.store.models import Account
from tests.support.networks import lent, own, plugin_installed


@pytest.fixture
def pigeon(tmp_path: Path) -> Iterator[registry.Network]:
    with plugin_installed(tmp_path / "site") as network:
        yield network


@pytest.fixture
def tiktok_versioned(pigeon: registry.Network) -> Iterator[registry.Network]:
    """TikTok with the plugin's API lifecycle (2026-01, its default, ends on 2027-01-31): a built-in network's
    lifecycle without depending on one a network's own branch declares."""
    with lent("tiktok", lifecycle="pigeon.lifecycle:LIFECYCLE") as network:
        yield network


def _account(workspace_id: str, platform: str, **fields: Any) -> Account:
    now = clock.now()
    values: dict[str, Any] = {
        "id": new_id("acc"),
        "workspace": workspace_id,
        "platform": platform,
        "name": f"Live {platform}",
        "username": f"live-{platform}",
        "kind": "live",
        "status": "active",
        "external_id": "ext-1",
        "access_token": "tok",
        "token_expires_at": now + timedelta(days=60),
        "connected_at": now,
        "created_at": now,
    }
    values.update(fields)
    return Account.create(**values)


def _codes(findings: list[dict[str, str]]) -> list[str]:
    return [f["code"] for f in findings]


def _ready(settings: Settings) -> None:
    """The pigeon app as it should be: the carry product, audited."""
    own(settings, "pigeon").products = "carry"
    own(settings, "pigeon").audited = True


# ---- a network's app ---------------------------------------------------------------------------------------
def test_the_networks_own_app_checks_errors_first_and_ok_false(settings, owner, pigeon) -> None:  # type: ignore[no-untyped-def]
    got = doctor.report(owner.workspace_id, settings, "pigeon")
    assert [n["platform"] for n in got["networks"]] == ["pigeon"]
    findings = got["networks"][0]["findings"]
    assert _codes(findings) == ["pigeon_product_missing", "pigeon_unaudited"]
    assert [f["severity"] for f in findings] == ["error", "warning"]
    assert all(f["message"] and f["fix"] for f in findings)
    assert got["ok"] is False
    _ready(settings)
    assert doctor.report(owner.workspace_id, settings, "pigeon") == {
        "ok": True,
        "networks": [{"platform": "pigeon", "redirectUri": None, "findings": []}],
        "accounts": [],
    }


def test_warnings_alone_keep_ok_true(settings, owner, pigeon) -> None:  # type: ignore[no-untyped-def]
    own(settings, "pigeon").products = "carry"
    got = doctor.report(owner.workspace_id, settings, "pigeon")
    assert _codes(got["networks"][0]["findings"]) == ["pigeon_unaudited"] and got["ok"] is True


@pytest.mark.parametrize(
    ("day", "version", "code", "severity", "in_message"),
    [
        (datetime(2026, 6, 1, tzinfo=UTC), None, None, None, None),  # the default, active
        (datetime(2027, 1, 10, tzinfo=UTC), None, "api_version_ending", "warning", "ends in 21 days"),
        (datetime(2027, 1, 31, 12, tzinfo=UTC), None, "api_version_ending", "warning", "ends today"),
        (datetime(2027, 2, 1, tzinfo=UTC), None, "api_version_sunset", "error", "ended on 2027-01-31"),
        (datetime(2026, 6, 1, tzinfo=UTC), "2025-01", "api_version_sunset", "error", "2025-01 ended"),
        (datetime(2026, 6, 1, tzinfo=UTC), "1999-01", "api_version_unknown", "error", "'1999-01'"),
        (datetime(2026, 6, 1, tzinfo=UTC), "2027-01", "api_version_unknown", "error", "not one socialpub"),
        (datetime(2027, 6, 1, tzinfo=UTC), "2027-01", None, None, None),  # released, no end announced
    ],
)
def test_the_configured_api_versions_lifecycle_on_the_service_clocks_day(  # type: ignore[no-untyped-def]
    settings, owner, pigeon, day, version, code, severity, in_message
) -> None:
    _ready(settings)
    own(settings, "pigeon").version = version
    with time_machine.travel(day, tick=False):
        got = doctor.report(owner.workspace_id, settings, "pigeon")
    findings = got["networks"][0]["findings"]
    if code is None:
        assert findings == [] and got["ok"] is True
        return
    [found] = findings
    assert (found["code"], found["severity"]) == (code, severity)
    assert in_message in found["message"], found
    assert "SOCIALPUB_PIGEON_VERSION" in found["fix"] or "upgrade socialpub" in found["fix"]
    assert got["ok"] is (severity == "warning")


def test_the_version_is_read_from_the_setting_the_lifecycle_names(settings, monkeypatch, pigeon) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOCIALPUB_PIGEON_VERSION", "2025-01")
    fresh = Settings(data_dir=settings.data_dir, database_url=settings.database_url)
    assert doctor.configured_version(pigeon, fresh) == "2025-01"
    monkeypatch.delenv("SOCIALPUB_PIGEON_VERSION")
    assert doctor.configured_version(pigeon, Settings(data_dir=settings.data_dir)) == "2026-01"
    assert doctor.configured_version(registry.get("tiktok"), settings) is None  # not versioned


def test_missing_oauth_credentials(settings, owner) -> None:  # type: ignore[no-untyped-def]
    """An error when asked about the network by name or when the workspace has a live account of it (its token
    cannot be refreshed); a warning otherwise (an installation that does not use TikTok is not broken)."""

    def creds(findings):  # type: ignore[no-untyped-def]  # the generic check's (the network's own checks aside)
        return [f for f in findings if f["code"] == "app_credentials_missing"]

    [named] = creds(doctor.report(owner.workspace_id, settings, "tiktok")["networks"][0]["findings"])
    assert (named["code"], named["severity"]) == ("app_credentials_missing", "error")
    assert "SOCIALPUB_TIKTOK_CLIENT_ID and SOCIALPUB_TIKTOK_CLIENT_SECRET" in named["message"]
    assert "--access-token" in named["fix"]
    everything = doctor.report(owner.workspace_id, settings)
    assert [n["platform"] for n in everything["networks"]] == list(registry.names())
    tiktok = next(n for n in everything["networks"] if n["platform"] == "tiktok")
    assert [(f["code"], f["severity"]) for f in creds(tiktok["findings"])] == [
        ("app_credentials_missing", "warning")
    ]
    _account(owner.workspace_id, "tiktok")
    tiktok = next(
        n for n in doctor.report(owner.workspace_id, settings)["networks"] if n["platform"] == "tiktok"
    )
    assert creds(tiktok["findings"])[0]["severity"] == "error"
    own(settings, "tiktok").client_id, own(settings, "tiktok").client_secret = "app-1", "s3cret"
    assert creds(doctor.report(owner.workspace_id, settings, "tiktok")["networks"][0]["findings"]) == []
    own(settings, "tiktok").client_secret = None
    [half] = creds(doctor.report(owner.workspace_id, settings, "tiktok")["networks"][0]["findings"])
    assert "SOCIALPUB_TIKTOK_CLIENT_SECRET not set" in half["message"], half


def test_a_network_without_oauth_has_no_credentials_to_miss(settings, owner, pigeon) -> None:  # type: ignore[no-untyped-def]
    _ready(settings)
    assert pigeon.oauth_app() is None
    assert doctor.report(owner.workspace_id, settings, "pigeon")["networks"][0]["findings"] == []


def test_an_unknown_platform_is_a_validation_error(settings, owner) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ApiError) as err:
        doctor.report(owner.workspace_id, settings, "raven")
    assert (err.value.status, err.value.code) == (400, "validation_error")
    assert err.value.details[0]["field"] == "platform"


# ---- connected accounts ------------------------------------------------------------------------------------
def test_the_accounts_granted_scopes_through_the_networks_check(settings, owner, pigeon) -> None:  # type: ignore[no-untyped-def]
    _ready(settings)
    partial = _account(owner.workspace_id, "pigeon", granted_scopes="coo.write")
    full = _account(owner.workspace_id, "pigeon", granted_scopes="coo.write coo.read", name="Full")
    unknown = _account(owner.workspace_id, "pigeon", granted_scopes=None, name="Unknown")
    got = doctor.report(owner.workspace_id, settings, "pigeon")
    by_id = {a["id"]: a for a in got["accounts"]}
    assert _codes(by_id[partial.id]["findings"]) == ["scope_missing_list"]
    assert by_id[partial.id]["platform"] == "pigeon" and by_id[partial.id]["name"] == "Live pigeon"
    assert by_id[full.id]["findings"] == [] and by_id[unknown.id]["findings"] == []
    assert got["ok"] is False


def test_token_states(settings, owner) -> None:  # type: ignore[no-untyped-def]
    """What `tokenWarning` says, as findings: expired and needs_reauth are errors, expiring a warning."""
    now = clock.now()
    expired = _account(owner.workspace_id, "tiktok", token_expires_at=now - timedelta(hours=3))
    expiring = _account(owner.workspace_id, "tiktok", token_expires_at=now + timedelta(days=2), name="Soon")
    dead = _account(owner.workspace_id, "tiktok", status="needs_reauth", name="Dead")
    fine = _account(owner.workspace_id, "tiktok", name="Fine")
    gone = _account(owner.workspace_id, "tiktok", status="disconnected", name="Gone")
    got = {a["id"]: a["findings"] for a in doctor.report(owner.workspace_id, settings, "tiktok")["accounts"]}
    assert gone.id not in got
    assert [(f["code"], f["severity"]) for f in got[expired.id]] == [("token_expired", "error")]
    assert "expired 3 hours ago" in got[expired.id][0]["message"]
    assert [(f["code"], f["severity"]) for f in got[expiring.id]] == [("token_expiring", "warning")]
    assert "expires in 2 days" in got[expiring.id][0]["message"]
    assert [(f["code"], f["severity"]) for f in got[dead.id]] == [("needs_reauth", "error")]
    assert all(f["fix"] == "reconnect with socialpub accounts connect tiktok" for f in got[expired.id])
    assert got[fine.id] == []
    # the same words as the accounts list's tokenWarning
    public = accounts.to_public(Account.get_by_id(expiring.id), False, settings)
    assert public["tokenWarning"] == f"{got[expiring.id][0]['message']}: {got[expiring.id][0]['fix']}"


def test_a_sandbox_accounts_token_and_scopes_are_not_checked(settings, owner, pigeon) -> None:  # type: ignore[no-untyped-def]
    """A sandbox account has no grant of its own (nothing expires, nothing was granted); its network's app checks
    still run."""
    accounts.connect_sandbox(settings, owner.workspace_id, "pigeon", "The loft")
    got = doctor.report(owner.workspace_id, settings, "pigeon")
    assert [a["findings"] for a in got["accounts"]] == [[]]
    assert _codes(got["networks"][0]["findings"]) == ["pigeon_product_missing", "pigeon_unaudited"]


def test_one_workspace_never_sees_anothers_accounts(settings, owner, other_owner) -> None:  # type: ignore[no-untyped-def]
    mine = _account(owner.workspace_id, "tiktok", status="needs_reauth")
    theirs = _account(other_owner.workspace_id, "tiktok", status="needs_reauth")
    assert [a["id"] for a in doctor.report(owner.workspace_id, settings)["accounts"]] == [mine.id]
    assert [a["id"] for a in doctor.report(other_owner.workspace_id, settings)["accounts"]] == [theirs.id]
    assert doctor.report(other_owner.workspace_id, settings, "linkedin")["accounts"] == []


# ---- connect runs the app checks first -----------------------------------------------------------------------
def test_oauth_start_is_refused_before_any_browser_step_by_an_app_error(
    settings, owner, tiktok_versioned
) -> None:  # type: ignore[no-untyped-def]
    """TikTok's app configured, but its API version (here: pigeon's lifecycle lent to it) has ended: the
    connection does not start (no OAuth session is made), each error is in the details with its fix."""
    from backend.store.models import OAuthSession

    own(settings, "tiktok").client_id, own(settings, "tiktok").client_secret = "app-1", "s3cret"
    redirect = "http://127.0.0.1:8765/callback"
    with time_machine.travel(datetime(2027, 3, 1, tzinfo=UTC), tick=False):
        with pytest.raises(ApiError) as err:
            oauth_connect.start(owner.workspace_id, settings, "tiktok", redirect, None)
        assert (err.value.status, err.value.code) == (400, "app_not_ready")
        assert "ended on 2027-01-31" in err.value.message and "SOCIALPUB_PIGEON_VERSION" in err.value.message
        assert [d["code"] for d in err.value.details] == ["api_version_sunset"]
        assert OAuthSession.select().count() == 0
    with time_machine.travel(datetime(2027, 1, 10, tzinfo=UTC), tick=False):  # ending: a warning, it goes on
        started = oauth_connect.start(owner.workspace_id, settings, "tiktok", redirect, None)
    assert started["authorizeUrl"] and OAuthSession.select().count() == 1


def test_a_login_network_needs_no_oauth_credentials(settings, owner) -> None:  # type: ignore[no-untyped-def]
    logins = [n.name for n in registry.networks() if n.login]
    assert logins, "a built-in network connects with a login (Bluesky)"
    for name in logins:
        findings = doctor.report(owner.workspace_id, settings, name)["networks"][0]["findings"]
        assert "app_credentials_missing" not in [f["code"] for f in findings]
