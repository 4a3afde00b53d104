"""The client's drivers leave `perform` to their subclass (issue 31): a driver without it cannot be built."""

from __future__ import annotations

import pytest

from socialpub_tui.client._core import AsyncDriver, SyncDriver
from socialpub_tui.client.aio import AsyncClient
from socialpub_tui.client.sync import Client


def test_perform_is_abstract_on_both_drivers() -> None:
    assert SyncDriver.__abstractmethods__ == frozenset({"perform"})
    assert AsyncDriver.__abstractmethods__ == frozenset({"perform"})


def test_a_driver_without_perform_cannot_be_built() -> None:
    class Half(SyncDriver):
        pass

    with pytest.raises(TypeError, match="perform"):
        Half(  # type: ignore[abstract]  # the point of the test: Half leaves perform abstract
            api_key="k", session_token=None, retry=None, poll_interval=1.0, embedded=False, token_refresh=None
        )


def test_the_clients_perform() -> None:
    assert not Client.__abstractmethods__
    assert not AsyncClient.__abstractmethods__
