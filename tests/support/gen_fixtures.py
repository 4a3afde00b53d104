"""Fixtures of the generation tests (API, worker, CLI): the test provider registered as an entry point and chosen
by the settings, a subscribed workspace, running the worker until it is idle, reading the ledger."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from backend import clock
from tests.support import gen_provider


@pytest.fixture
def gen_provider_dir(settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    """The test provider (tests/support/gen_provider.py) registered under the name `test` and chosen: for this
    process (sys.path, settings) and for the processes it starts (return the directory for PYTHONPATH)."""
    from backend.config import get_settings

    plugins = gen_provider.register(tmp_path / "plugins")
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.setenv("SOCIALPUB_GENERATION_PROVIDER", "test")
    get_settings.cache_clear()
    settings.generation_provider = "test"
    settings.rate_limit_per_minute = 1_000_000
    gen_provider.reset()
    return plugins


@pytest.fixture
def subscribed(owner):  # type: ignore[no-untyped-def]
    """GROWTH, active: 1,000 credits granted."""
    from backend.services import workspace as ws_service

    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))
    return owner


def run_worker(settings: Any, seconds: float = 20.0) -> int:  # type: ignore[no-untyped-def]
    from backend.jobs.worker import Worker

    return Worker(settings, concurrency=2).run_until_idle(max_seconds=seconds, settle_s=1.0)


def ledger(workspace_id: str, generation_id: str | None = None) -> list[tuple[str, int]]:
    """(reason, amount) of the workspace's entries, oldest first (one generation's with `generation_id`)."""
    from backend.services import credits

    return [
        (e.reason, e.amount) for e in reversed(credits.entries(workspace_id, generation_id=generation_id))
    ]


def balance_is_the_ledger(workspace_id: str) -> int:
    from backend.services import credits

    balance = credits.balance(workspace_id)
    assert balance == credits.ledger_sum(workspace_id) and balance >= 0
    return balance
