"""CLI fixtures: an initialised embedded data dir with sandbox accounts, and a runner keeping stdout/stderr apart."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner, Result

from socialpub_tui.cli.main import cli


@dataclass
class Run:
    result: Result

    @property
    def code(self) -> int:
        return self.result.exit_code

    @property
    def out(self) -> str:
        return self.result.stdout

    @property
    def err(self) -> str:
        return self.result.stderr

    def json(self) -> Any:
        return json.loads(self.result.stdout)

    def err_json(self) -> Any:
        return json.loads(self.result.stderr.strip().splitlines()[-1])


def invoke(*args: str, input: str | None = None) -> Run:
    return Run(CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False))


@pytest.fixture
def cli_env(settings, tmp_path, monkeypatch, pg_url):  # type: ignore[no-untyped-def]
    """Environment for an embedded backend in tmp_path/d (not yet initialised), config in tmp_path/cfg."""
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "cfg" / "config.yaml"))
    monkeypatch.setenv("SOCIALPUB_SANDBOX_DELAY_S", "0")
    monkeypatch.setenv("SOCIALPUB_SANDBOX_PROCESSING_S", "0")
    monkeypatch.setenv("SOCIALPUB_WORKER_POLL_S", "0.05")
    monkeypatch.setenv("SOCIALPUB_RETRY_BASE_S", "0.01")
    for name in ("SOCIALPUB_PROFILE", "SOCIALPUB_API_URL", "SOCIALPUB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    if pg_url:
        monkeypatch.setenv("SOCIALPUB_DATABASE_URL", pg_url)
    else:
        monkeypatch.delenv("SOCIALPUB_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    return tmp_path


@pytest.fixture
def embedded(cli_env):  # type: ignore[no-untyped-def]
    """`socialpub init --sandbox --json` done: returns its JSON output."""
    r = invoke("init", "--sandbox", "--json", "--password", "s3cret-pass")
    assert r.code == 0, r.err
    return r.json()
