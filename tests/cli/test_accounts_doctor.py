"""`socialpub accounts doctor [NETWORK] [--json]` and the checks `accounts connect` runs first (issue 29), through
the real CLI on an embedded backend; the network hooks of the test plugin `pigeon` installed in this process."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import click
import pytest
import time_machine

from backend.networks import registry
from tests.cli.conftest import invoke
from tests.support.networks import lent, plugin_installed


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


@pytest.fixture
def no_browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)
    return opened


def test_warnings_alone_exit_0(embedded) -> None:  # type: ignore[no-untyped-def]
    """A sandbox installation: every network's app unconfigured is a warning (it is not used), exit 0."""
    r = invoke("accounts", "doctor")
    assert r.code == 0, r.err
    assert "warning app_credentials_missing" in r.out and "fix: create an app in TikTok's" in r.out
    # credentials missing for each network, and each network's own app warnings (a new app's limits)
    assert re.search(r"0 errors, \d+ warnings", r.out) and "Sandbox TikTok" in r.out


def test_an_error_exits_1_and_json_is_the_apis_document(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("accounts", "doctor", "tiktok")
    assert r.code == 1
    assert "error app_credentials_missing" in r.out and re.search(r"1 error, \d+ warnings", r.out)
    j = invoke("accounts", "doctor", "tiktok", "--json")
    assert j.code == 1
    body = j.json()
    assert body["ok"] is False and [n["platform"] for n in body["networks"]] == ["tiktok"]
    assert body["networks"][0]["findings"][0] == {
        "code": "app_credentials_missing",
        "severity": "error",
        "message": body["networks"][0]["findings"][0]["message"],
        "fix": body["networks"][0]["findings"][0]["fix"],
    }
    assert [a["platform"] for a in body["accounts"]] == ["tiktok"]
    refused = invoke("accounts", "doctor", "raven")
    assert refused.code == 2 and "raven" in refused.err


def test_a_networks_own_findings_errors_first_each_with_its_fix(pigeon, embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("accounts", "doctor", "pigeon")
    assert r.code == 1
    text = click.unstyle(r.out)
    assert text.index("error pigeon_product_missing") < text.index("warning pigeon_unaudited")
    assert "fix: add the carry product" in text and "fix: ask the loft for an audit" in text
    assert json.loads(invoke("accounts", "doctor", "pigeon", "--json").out)["ok"] is False


def test_connect_stops_on_an_app_error_before_any_browser_step(
    tiktok_versioned, cli_env, monkeypatch, no_browser
) -> None:  # type: ignore[no-untyped-def]
    """TikTok's app configured, but its API version (pigeon's lifecycle lent to it) has ended: `accounts connect`
    stops before any browser step, with each error and its fix (400 app_not_ready from the server's start)."""
    monkeypatch.setenv("SOCIALPUB_TIKTOK_CLIENT_ID", "app-1")
    monkeypatch.setenv("SOCIALPUB_TIKTOK_CLIENT_SECRET", "s3cret")
    assert invoke("init", "--sandbox", "--json", "--password", "s3cret-pass").code == 0
    with time_machine.travel(datetime(2027, 3, 1, tzinfo=UTC), tick=False):
        r = invoke("accounts", "connect", "tiktok")
        assert r.code == 1 and no_browser == []
        assert "ended on 2027-01-31" in r.err and "unset SOCIALPUB_PIGEON_VERSION" in r.err
        assert "api_version_sunset" in r.err
        j = invoke("accounts", "connect", "tiktok", "--json")
        assert j.code == 1 and j.out == "" and no_browser == []
        body = j.err_json()
        assert body["error"] == "app_not_ready" and [d["code"] for d in body["details"]] == [
            "api_version_sunset"
        ]
        assert body["details"][0]["fix"].startswith("unset SOCIALPUB_PIGEON_VERSION")


def test_connect_without_credentials_says_what_to_set(embedded, no_browser) -> None:  # type: ignore[no-untyped-def]
    r = invoke("accounts", "connect", "youtube")
    assert r.code == 1 and no_browser == []
    assert "SOCIALPUB_YOUTUBE_CLIENT_ID" in r.err


def test_connect_prints_warnings_and_goes_on(pigeon, embedded, no_browser, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The pigeon app holds its product but is not audited: the warning is printed, then connecting goes on
    (to the server's start, which says pigeon has no OAuth app — the doctor did not stop it)."""
    monkeypatch.setenv("SOCIALPUB_PIGEON_PRODUCTS", "carry")
    r = invoke("accounts", "connect", "pigeon", "--no-browser")
    assert "warning pigeon_unaudited" in r.err
    assert "pigeon has no OAuth app" in r.err and r.code == 1


def test_accounts_list_warns_30_days_before_a_live_networks_api_version_ends(
    tiktok_versioned, cli_env
) -> None:  # type: ignore[no-untyped-def]
    """Issue 29 item 4: `accounts list` says what to do while the configured version still works (TikTok lent
    pigeon's lifecycle: 2026-01, its default, ends on 2027-01-31); only for a network with a live account."""
    from backend.store.models import Account, Workspace
    from tests.cli.test_accounts_tokens import live

    assert invoke("init", "--sandbox", "--json", "--password", "s3cret-pass").code == 0
    with time_machine.travel(datetime(2027, 1, 10, tzinfo=UTC), tick=False):
        r = invoke("accounts", "list")
        assert r.code == 0 and "API version" not in r.out  # sandbox accounts only
        assert Workspace.select().count() == 1
        live("tiktok", "Creator", expires_in=None)
        r = invoke("accounts", "list")
        assert r.code == 0, r.err
        assert "⚠ TikTok API version 2026-01 ends in 21 days (2027-01-31): upgrade socialpub" in r.out
        assert "API version" not in invoke("accounts", "list", "--json").out
        assert (
            Account.select().count() == sum(1 for n in registry.networks() if n.builtin and n.emulator) + 1
        )  # init --sandbox: one per built-in network; the live one


def test_accounts_check_warns_about_the_api_version_as_list_does(
    tiktok_versioned, cli_env, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Issue 29 item 4: `accounts check` says the configured version's end (30 days before: a warning; ended or
    unknown: an error, exit 1) with what to set, in the words `accounts list` uses. The account's network is a
    closed loopback port: its health is an error either way, the version line is what is looked at."""
    from backend.config import get_settings
    from tests.cli.test_accounts_tokens import live

    monkeypatch.setenv("SOCIALPUB_TIKTOK_BASE_URL", "http://127.0.0.1:9")  # nothing listens (loopback only)
    get_settings.cache_clear()
    assert invoke("init", "--json", "--password", "s3cret-pass").code == 0
    with time_machine.travel(datetime(2027, 1, 10, tzinfo=UTC), tick=False):
        acc = live("tiktok", "Creator", expires_in=None)
        listed = invoke("accounts", "list").out
        line = "⚠ TikTok API version 2026-01 ends in 21 days (2027-01-31): upgrade socialpub"
        assert line in listed
        r = invoke("accounts", "check", acc)
        assert line in r.out, r.out
        assert "API version" not in invoke("accounts", "check", acc, "--json").out
    with time_machine.travel(datetime(2027, 2, 2, tzinfo=UTC), tick=False):
        r = invoke("accounts", "check")
        assert "✗ TikTok API version 2026-01 ended on 2027-01-31" in r.out, r.out
        assert r.code == 1
