"""Operator commands: init (exact output contract), admin session/plan/credits."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from socialpub_tui.cli.main import cli


@pytest.fixture
def env(settings, tmp_path, monkeypatch, pg_url):  # type: ignore[no-untyped-def]
    """A fresh, uninitialised data dir (the `settings` fixture has cleaned the store)."""
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_DATA_DIR", str(tmp_path / "d"))
    if pg_url:
        monkeypatch.setenv("SOCIALPUB_DATABASE_URL", pg_url)
    else:
        monkeypatch.delenv("SOCIALPUB_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    return tmp_path


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_init_json_then_refuse_then_force(env):
    r = run("init", "--json", "--workspace-name", "Acme", "--email", "me@acme.test", "--password", "s3cret-pass")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert {"workspaceId", "apiKey", "sessionToken"} <= set(out)
    assert "v1-" in out["apiKey"]
    r = run("init", "--json")
    assert r.exit_code == 1
    assert "--force" in r.output
    r = run("init", "--json", "--force", "--password", "another-pass")
    assert r.exit_code == 0 and json.loads(r.output)["workspaceId"] != out["workspaceId"]


def test_init_key_and_session_work(env):
    out = json.loads(run("init", "--json", "--password", "s3cret-pass").output)
    from fastapi.testclient import TestClient

    from backend.api.app import create_app
    from backend.config import Settings

    with TestClient(create_app(Settings())) as c:
        assert c.get("/v1/workspace", headers={"x-api-key": out["apiKey"]}).status_code == 200
        r = c.get("/v1/api-keys", headers={"Authorization": f"Bearer {out['sessionToken']}"})
        assert r.status_code == 200 and len(r.json()["items"]) == 1
        assert set(r.json()["items"][0]["scopes"]) == {"media:write", "publish:posts", "publish:tiktok",
                                                        "accounts:read", "workspace:read", "generations:write",
                                                        "videos:read", "webhooks:read", "webhooks:write"}


def test_admin_commands(env):
    run("init", "--json", "--password", "s3cret-pass")
    token = run("admin", "session").output.strip()
    assert token.count(".") == 2
    as_json = json.loads(run("admin", "session", "--json").output)
    assert as_json["sessionToken"].count(".") == 2 and as_json["expiresAt"].endswith("Z")
    r = run("admin", "plan", "STARTER", "--status", "active", "--period-end", "2099-01-01T00:00:00Z", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["name"] == "STARTER"
    r = run("admin", "credits", "--set", "42", "--json")
    assert json.loads(r.output) == {"balance": 42}
    r = run("admin", "credits", "--add", "8", "--json")
    assert json.loads(r.output) == {"balance": 50}
    assert run("admin", "credits").exit_code == 2
    assert run("admin", "plan", "STARTER", "--period-end", "2099-01-01").exit_code == 1  # no offset


def test_commands_before_init_fail_clearly(env):
    r = CliRunner().invoke(cli, ["admin", "session"])
    assert r.exit_code == 1
