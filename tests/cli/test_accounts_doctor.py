"""`socialpub accounts doctor [NETWORK] [--json]` and the checks `accounts connect` runs first (issue 29), through
the real CLI on an embedded backend; the network hooks of the test plugin `pigeon` installed in this process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from backend.networks import registry
from tests.cli.conftest import invoke
from tests.support.networks import plugin_installed


@pytest.fixture
def pigeon(tmp_path: Path) -> Iterator[registry.Network]:
    with plugin_installed(tmp_path / "site") as network:
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
    assert "0 errors, 5 warnings" in r.out and "Sandbox TikTok" in r.out


def test_an_error_exits_1_and_json_is_the_apis_document(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("accounts", "doctor", "tiktok")
    assert r.code == 1
    assert "error app_credentials_missing" in r.out and "1 error, 0 warnings" in r.out
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


def test_connect_stops_on_an_app_error_before_any_browser_step(embedded, no_browser) -> None:  # type: ignore[no-untyped-def]
    r = invoke("accounts", "connect", "youtube")
    assert r.code == 1
    assert "error app_credentials_missing" in r.err and "fix: create an app" in r.err
    assert "Nothing was connected" in r.err and no_browser == []


def test_connect_prints_warnings_and_goes_on(pigeon, embedded, no_browser, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The pigeon app holds its product but is not audited: the warning is printed, then connecting goes on
    (to the server's start, which says pigeon has no OAuth app — the doctor did not stop it)."""
    monkeypatch.setenv("SOCIALPUB_PIGEON_PRODUCTS", "carry")
    r = invoke("accounts", "connect", "pigeon", "--no-browser")
    assert "warning pigeon_unaudited" in r.err
    assert "pigeon has no OAuth app" in r.err and r.code == 1
    assert "Nothing was connected" not in r.err
