"""TUI fixtures: the app on an embedded sandbox data dir (the worker in this process), a fixed clock.

async def test_x(tui_app):
    app = tui_app()                       # SocialpubApp on the initialised data dir, clock at FIXED_NOW
    async with app.run_test(size=(120, 40)) as pilot:
        ...
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import cli_env, embedded  # noqa: F401  (fixtures: an initialised sandbox data dir)

FIXED_NOW = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)  # a Friday; Europe/Paris is UTC+1 then
ZONE = "Europe/Paris"


@pytest.fixture
def data_dir(embedded: dict[str, Any]) -> Path:  # noqa: F811
    return Path(embedded["dataDir"])


@pytest.fixture
def tui_app(data_dir: Path) -> Callable[..., Any]:
    """A factory: `tui_app(clock=…, zone=…, worker=True)` -> SocialpubApp on the embedded data dir."""
    from socialpub_tui.app import SocialpubApp
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.client.embedded import client_kwargs
    from socialpub_tui.times import DisplayZone

    def make(
        *, clock: Callable[[], datetime] | None = None, zone: str = ZONE, worker: bool = True, **kwargs: Any
    ) -> SocialpubApp:
        client = AsyncClient(**client_kwargs(data_dir, worker=worker, asynchronous=True))
        return SocialpubApp(client, clock=clock or (lambda: FIXED_NOW), zone=DisplayZone(zone), **kwargs)

    return make
