"""Operator commands: init (exact output contract), admin session/plan/credits."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from backend.networks import registry
from socialpub_tui.cli.main import cli

SANDBOX_ACCOUNTS = sum(
    1 for n in registry.networks() if n.builtin and n.emulator
)  # init --sandbox: one per built-in network
# …and socialpub's app on the emulated server of each built-in network made of many (Mastodon), its secret encrypted
SANDBOX_SERVERS = sum(
    1
    for n in registry.networks()
    if n.builtin and n.emulator and n.app and n.oauth_app().instances  # type: ignore[union-attr]  # n.app: it has an OAuth app
)
SECRETS = SANDBOX_ACCOUNTS + SANDBOX_SERVERS


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
    r = run(
        "init", "--json", "--workspace-name", "Acme", "--email", "me@acme.test", "--password", "s3cret-pass"
    )
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
        assert set(r.json()["items"][0]["scopes"]) == {
            "media:write",
            "publish:posts",
            "publish:tiktok",
            "accounts:read",
            "workspace:read",
            "generations:write",
            "videos:read",
            "webhooks:read",
            "webhooks:write",
        }


def test_admin_commands(env):
    run("init", "--json", "--password", "s3cret-pass")
    token = run("admin", "session").output.strip()
    assert token.count(".") == 2
    as_json = json.loads(run("admin", "session", "--json").output)
    assert as_json["sessionToken"].count(".") == 2 and as_json["expiresAt"].endswith("Z")
    r = run(
        "admin", "plan", "STARTER", "--status", "active", "--period-end", "2099-01-01T00:00:00Z", "--json"
    )
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


def test_admin_rotate_key(env, monkeypatch):
    """A new key encrypts every token; the old one is dropped once done; an interrupted run leaves both keys
    and running it again finishes the job."""
    import os

    from backend.config import Settings
    from backend.services import encryption
    from backend.store import secretbox
    from backend.store.models import Account

    run("init", "--json", "--password", "s3cret-pass", "--sandbox")
    path = secretbox.key_path(Settings())
    first = path.read_text().split()
    tokens = {a.id: a.access_token for a in Account.select()}
    assert len(first) == 1 and len(tokens) == SANDBOX_ACCOUNTS and all(tokens.values())

    r = run("admin", "rotate-key", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["reencrypted"] == SECRETS and out["tables"] == {
        "account": SANDBOX_ACCOUNTS,
        "webhook_endpoint": 0,
        "oauth_session": 0,
        "network_instance": SANDBOX_SERVERS,
        "tiktok_publish": 0,
    }
    assert out["oldKeysDropped"] == 1 and out["keySource"] == str(path)
    second = path.read_text().split()
    assert len(second) == 1 and second != first and os.stat(path).st_mode & 0o077 == 0
    assert {a.id: a.access_token for a in Account.select()} == tokens

    class Interrupted(Exception):
        pass

    real_pass, calls = encryption._pass, []

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        if calls:
            raise Interrupted
        calls.append(1)
        return real_pass(*args, **kwargs)

    monkeypatch.setattr(encryption, "_pass", interrupted)
    with pytest.raises(Interrupted):
        run("admin", "rotate-key")
    assert path.read_text().split()[1:] == second  # the new key first, the old one kept
    assert {a.id: a.access_token for a in Account.select()} == tokens  # both keys read
    monkeypatch.setattr(encryption, "_pass", real_pass)
    r = run("admin", "rotate-key")
    assert (
        r.exit_code == 0
        and f"re-encrypted {SECRETS} value(s)" in r.output
        and "2 old key(s) dropped" in r.output
    )
    assert len(path.read_text().split()) == 1
    assert {a.id: a.access_token for a in Account.select()} == tokens


def test_admin_rotate_key_needs_a_key(env):
    r = CliRunner().invoke(cli, ["admin", "rotate-key", "--json"])
    assert r.exit_code == 1 and "no secrets key at" in r.output
    assert not (env / "d" / "secrets.key").exists() and not (env / "d" / "socialpub.db").exists()


def test_admin_rotate_key_with_the_environment_key(env, monkeypatch):
    from cryptography.fernet import Fernet

    from backend.store.models import Account

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    monkeypatch.setenv("SOCIALPUB_SECRETS_KEY", old)
    run("init", "--json", "--password", "s3cret-pass", "--sandbox")
    assert not (env / "d" / "secrets.key").exists()
    tokens = {a.id: a.access_token for a in Account.select()}
    monkeypatch.setenv("SOCIALPUB_SECRETS_KEY", f"{new},{old}")
    out = json.loads(run("admin", "rotate-key", "--json").output)
    assert (
        out["reencrypted"] == SECRETS
        and out["keySource"] == "SOCIALPUB_SECRETS_KEY"
        and out["oldKeysDropped"] == 0
    )
    monkeypatch.setenv("SOCIALPUB_SECRETS_KEY", new)  # the old key removed: everything still reads
    r = run("admin", "rotate-key", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["reencrypted"] == SECRETS
    assert {a.id: a.access_token for a in Account.select()} == tokens
    monkeypatch.setenv("SOCIALPUB_SECRETS_KEY", "garbage")
    r = CliRunner().invoke(cli, ["admin", "rotate-key", "--json"])
    assert r.exit_code == 1 and "SOCIALPUB_SECRETS_KEY" in r.output and "garbage" not in r.output


def test_socialpub_worker_checks_its_pool_against_the_database_and_embedded_commands_do_not(env, monkeypatch):
    """`socialpub worker` (and `serve`) say at start-up when PostgreSQL cannot serve the pool; the worker of an
    embedded command does not (its stderr is the command's: JSON errors under --json)."""
    from backend.jobs.worker import Worker

    checked: list[str] = []
    monkeypatch.setattr(Worker, "check_connections", lambda self: checked.append(self.id) or True)
    assert run("init", "--sandbox", "--password", "s3cret-pass").exit_code == 0
    assert (
        run("posts", "create", "hello", "--to", "facebook", "--wait", "--json").exit_code == 0
    )  # its worker ran
    assert not checked
    monkeypatch.setattr(Worker, "run_forever", lambda self: None)
    r = run("worker")
    assert r.exit_code == 0, r.output
    assert len(checked) == 1 and checked[0].startswith("worker:")


def test_serve_without_base_url_points_its_urls_where_it_listens(monkeypatch):
    from backend.config import Settings
    from backend.operator.runtime import listening_settings

    monkeypatch.delenv("SOCIALPUB_BASE_URL", raising=False)
    settings, warning = listening_settings(Settings(), "127.0.0.1", 18765)
    assert (settings.base_url, warning) == ("http://127.0.0.1:18765", None)
    assert settings.public_media_url == "http://127.0.0.1:18765/media/"
    assert listening_settings(Settings(), "::1", 9000)[0].base_url == "http://[::1]:9000"
    everywhere, warning = listening_settings(Settings(), "0.0.0.0", 8080)
    assert everywhere.base_url == "http://127.0.0.1:8080" and "SOCIALPUB_BASE_URL" in (warning or "")
    monkeypatch.setenv("SOCIALPUB_BASE_URL", "https://pub.example.com")
    chosen, warning = listening_settings(Settings(), "0.0.0.0", 8080)
    assert (chosen.base_url, warning) == ("https://pub.example.com", None)  # the operator's own address wins


def test_tick_says_what_it_ran_and_what_is_queued_in_words(env):
    assert run("init", "--sandbox", "--json").exit_code == 0
    human = run("tick", "--max-seconds", "5", "--settle", "0")
    assert human.exit_code == 0 and human.output.startswith("ran "), human.output
    assert "{" not in human.output and "queue: " in human.output  # "queue: 2 queued", not a Python dict
    as_json = json.loads(run("tick", "--max-seconds", "5", "--settle", "0", "--json").output)
    assert set(as_json) == {"jobsRun", "queue"} and isinstance(as_json["queue"], dict)


def test_admin_plan_keeps_the_period_end_it_is_not_given_and_never_prints_none(env):
    """The README's tour runs `socialpub admin plan GROWTH` on `make run`'s workspace, which has GROWTH until a
    year from now: that end stays (the TUI's header keeps its "until …"), and the line says it, never `None`."""
    run("init", "--json", "--password", "s3cret-pass")
    r = run("admin", "plan", "GROWTH", "--period-end", "2099-01-01T00:00:00Z")
    assert r.exit_code == 0 and "until 2099-01-01 00:00 UTC" in r.output, r.output
    r = run("admin", "plan", "GROWTH")
    assert r.exit_code == 0, r.output
    assert "None" not in r.output and "until 2099-01-01 00:00 UTC" in r.output, r.output
    assert json.loads(run("admin", "plan", "STARTER", "--json").output)["periodEnd"].startswith(
        "2099-01-01T00:00:00"
    )
    r = run("admin", "plan", "GROWTH", "--no-period-end")
    assert r.exit_code == 0 and "no end date" in r.output and "None" not in r.output, r.output
    assert json.loads(run("admin", "plan", "GROWTH", "--json").output)["periodEnd"] is None
    assert (
        run("admin", "plan", "GROWTH", "--no-period-end", "--period-end", "2099-01-01T00:00:00Z").exit_code
        == 2
    )


def test_admin_plan_does_not_keep_a_period_end_that_has_passed(env):
    run("init", "--json", "--password", "s3cret-pass")
    assert run("admin", "plan", "STARTER", "--period-end", "2001-01-01T00:00:00Z").exit_code == 0
    plan = json.loads(run("admin", "plan", "STARTER", "--json").output)
    assert plan["periodEnd"] is None and plan["name"] == "STARTER"
