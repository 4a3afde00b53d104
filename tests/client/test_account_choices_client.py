"""The sync and async clients' account_choices (GET /v1/accounts/:id/choices) against the embedded backend."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from socialpub_tui.client import AsyncClient, Client
from socialpub_tui.client.embedded import client_kwargs
from tests.cli.conftest import cli_env, embedded  # noqa: F401  (fixtures: an initialised sandbox data dir)


def _tiktok(listing: Any) -> str:
    return next(a.id for a in listing.items if a.platform == "tiktok" and a.is_default)


def test_both_clients_read_an_accounts_choices(embedded: dict[str, Any]) -> None:  # noqa: F811
    data_dir = Path(embedded["dataDir"])
    with Client(**client_kwargs(data_dir, worker=False)) as client:
        account_id = _tiktok(client.list_accounts())
        found = client.account_choices(account_id)
        linkedin = next(a.id for a in client.list_accounts().items if a.platform == "linkedin")
        assert client.account_choices(linkedin).supported is False
    assert found.supported and found.account_id == account_id
    assert {f.field for f in found.fields} >= {
        "privacyLevel",
        "disableComment",
        "disableDuet",
        "disableStitch",
    }

    async def read() -> Any:
        async with AsyncClient(**client_kwargs(data_dir, worker=False, asynchronous=True)) as aclient:
            return await aclient.account_choices(account_id)

    again = asyncio.run(read())
    assert again.account_id == account_id and [f.field for f in again.fields] == [
        f.field for f in found.fields
    ]
