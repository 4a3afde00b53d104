"""The one way to get a network adapter for an account: `adapter_for(account, settings)`.

A sandbox account gets the network's adapter talking to that network's emulator; a live account the same
adapter talking to the real host. Every service that calls a network uses this function.
"""

from __future__ import annotations

from typing import Any

from backend.config import Settings
from backend.store.models import Account


def adapter_for(account: Account, settings: Settings) -> Any:
    from backend.networks.sandbox import make_adapter

    return make_adapter(account.platform, settings, live=account.kind == "live")
