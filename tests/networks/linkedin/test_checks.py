"""LinkedIn's `accounts doctor` hooks and its API lifecycle (issue 29), called directly."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from backend.config import Settings
from backend.networks import registry
from backend.networks.doctor import version_findings
from backend.networks.linkedin.checks import CHECKS, check_account, check_app
from backend.networks.linkedin.lifecycle import LIFECYCLE
from tests.support.networks import own


def _settings(tmp_path: Path, **values: object) -> Settings:
    s = Settings(data_dir=tmp_path)
    for k, v in values.items():
        setattr(own(s, "linkedin"), k, v)
    return s


def test_the_registry_names_the_checks_and_the_lifecycle() -> None:
    network = registry.get("linkedin")
    assert network.network_checks() is CHECKS
    assert network.api_lifecycle() is LIFECYCLE and LIFECYCLE.setting == "SOCIALPUB_LINKEDIN_VERSION"


def test_a_well_configured_member_app_has_nothing_to_say(tmp_path: Path) -> None:
    assert check_app(_settings(tmp_path, redirect_port=53682)) == []


def test_the_redirect_url_to_register_is_named(tmp_path: Path) -> None:
    [f] = check_app(_settings(tmp_path))
    assert f.code == "linkedin_redirect_url" and f.severity == "warning"
    assert "http://127.0.0.1:53682/callback" in f.fix and "SOCIALPUB_LINKEDIN_REDIRECT_PORT" in f.fix
    assert "accounts connect linkedin` then listens there" in f.fix


def test_organisation_posting_says_which_product_it_needs(tmp_path: Path) -> None:
    [f] = check_app(_settings(tmp_path, redirect_port=53682, organizations=True))
    assert f.code == "linkedin_organizations_need_cma"
    assert "Community Management API" in f.message and "unauthorized_scope_error" in f.message
    assert "SOCIALPUB_LINKEDIN_ORGANIZATIONS" in f.fix


def test_a_member_grant_posts_but_cannot_be_reconciled() -> None:
    [f] = check_account(["openid", "profile", "w_member_social"])
    assert f.code == "linkedin_reconciliation_unavailable" and f.severity == "warning"
    assert "never posted twice" in f.message
    assert check_account([]) == []  # the network did not say
    assert check_account(["openid", "profile", "w_member_social", "r_member_social"]) == []


def test_a_grant_that_cannot_post_is_an_error() -> None:
    codes = [(f.code, f.severity) for f in check_account(["openid", "profile"])]
    assert ("linkedin_cannot_post", "error") in codes


def test_an_old_organisation_grant_is_told_to_reconnect() -> None:
    # what connect asked before issue 29: no r_organization_social
    [f] = check_account(
        ["openid", "profile", "w_member_social", "w_organization_social", "r_organization_admin"]
    )
    assert f.code == "linkedin_reconnect_for_reconciliation"
    full = ["openid", "profile", "w_member_social", "w_organization_social", "r_organization_admin"]
    assert check_account([*full, "r_organization_social"]) == []


def test_version_lifecycle_findings() -> None:
    today = date(2026, 11, 28)
    assert LIFECYCLE.default == "202603"
    assert version_findings("LinkedIn", LIFECYCLE, "202603", today) == []
    [sunset] = version_findings("LinkedIn", LIFECYCLE, "202506", today)
    assert sunset.code == "api_version_sunset" and sunset.severity == "error"
    [ended] = version_findings("LinkedIn", LIFECYCLE, "202511", today)
    assert ended.code == "api_version_sunset" and "2026-11-16" in ended.message
    [never] = version_findings("LinkedIn", LIFECYCLE, "202512", today)
    assert never.code == "api_version_unknown"
    [ending] = version_findings("LinkedIn", LIFECYCLE, "202601", date(2026, 12, 20))
    assert ending.severity == "warning" and "in 26 days" in ending.message and "2027-01-15" in ending.message
    assert (
        version_findings("LinkedIn", LIFECYCLE, "202601", date(2027, 1, 16))[0].code == "api_version_sunset"
    )
    assert LIFECYCLE.active_on(today)[0] == "202601"  # the oldest LinkedIn still serves
