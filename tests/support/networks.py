"""Helpers for tests that touch a network's own settings (its package's settings model) or the registry."""

from __future__ import annotations

from typing import Any

from backend.config import Settings
from backend.networks import registry


def own(settings: Settings, network: str) -> Any:
    """The network's own settings of this Settings object (what a test sets there, its users see)."""
    found = registry.get(network).settings_of(settings)
    assert found is not None, network
    return found


def names() -> tuple[str, ...]:
    return registry.names()


def oauth_names() -> tuple[str, ...]:
    """The networks whose accounts connect with OAuth (not with a login: Bluesky's app password)."""
    return tuple(n.name for n in registry.networks() if n.app and not n.login)


def catalogue() -> Any:
    """The client's view of this installation's networks (what GET /v1/networks gives)."""
    from backend.services.networks import catalogue as items
    from socialpub_tui.client.networks import parse

    return parse({"items": items()})
