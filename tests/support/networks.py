"""Helpers for tests that touch a network's own settings (its package's settings model) or the registry."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from backend.config import Settings
from backend.networks import registry
from backend.networks.base import TargetDraft
from backend.networks.rules import validate_target


def own(settings: Settings, network: str) -> Any:
    """The network's own settings of this Settings object (what a test sets there, its users see)."""
    found = registry.get(network).settings_of(settings)
    assert found is not None, network
    return found


def names() -> tuple[str, ...]:
    return registry.names()


def oauth_names() -> tuple[str, ...]:
    """The networks whose accounts connect with OAuth through a configured app (not with a login: Bluesky's app
    password; nor on one of many servers, each with the app registered there: Mastodon's, tests/networks/mastodon)."""
    return tuple(
        n.name
        for n in registry.networks()
        if n.app and not n.login and n.oauth_app().instances is None  # type: ignore[union-attr]
    )


def catalogue() -> Any:
    """The client's view of this installation's networks (what GET /v1/networks gives)."""
    from backend.services.networks import catalogue as items
    from socialpub_tui.client.networks import parse

    return parse({"items": items()})


PLUGIN = Path(__file__).resolve().parent / "plugin_network"


@contextmanager
def plugin_installed(site: Path) -> Iterator[registry.Network]:
    """The test plugin `pigeon` installed in this process, as pip would install `socialpub-pigeon` (a
    `.dist-info` with its entry point, in `site` on sys.path), the registry read again; removed afterwards."""
    info = site / "socialpub_pigeon-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: socialpub-pigeon\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[socialpub.networks]\npigeon = pigeon:NETWORK\n")
    added = [str(site), str(PLUGIN)]
    sys.path[:0] = added
    importlib.invalidate_caches()
    try:
        _reload()
        yield registry.get("pigeon")
    finally:
        for p in added:
            sys.path.remove(p)
        importlib.invalidate_caches()
        _reload()


def _reload() -> None:
    """The registry read again, and what the service built from it once (GET /v1/networks, `options`)."""
    from backend.services import networks as service

    registry.reload()
    service._catalogue.cache_clear()
    service.post_options_model.cache_clear()


@contextmanager
def lent(network: str, **changes: Any) -> Iterator[registry.Network]:
    """The registered `network` with `changes` (e.g. lifecycle="pigeon.lifecycle:LIFECYCLE": the plugin's lifecycle
    lent to a built-in, for the checks a built-in does not declare yet), seen by `registry.get` and
    `registry.networks()` inside the block; the registry read again after it (not a monkeypatch: one undone after
    the plugin's removal would bring the plugin back)."""
    changed = replace(registry.get(network), **changes)
    registry._remember(tuple(changed if n.name == network else n for n in registry.networks()))
    try:
        yield changed
    finally:
        _reload()


def server_codes(
    network: str, content: str, media: list[Any], options: dict[str, Any] | None = None
) -> list[str]:
    """What the server refuses a target for, as a front end can know it: the network's rules, and for a network whose
    limits are each server's own (Mastodon's instances) its check against an account whose server's limits are not
    known yet (the advertised defaults)."""
    codes = list(validate_target(network, content, media, options or {}))
    entry = registry.get(network)
    app = entry.oauth_app() if entry.app else None
    if app is not None and app.instances is not None:
        parsed = (
            entry.options_model().model_validate((options or {}).get(network) or {})
            if entry.options
            else None
        )
        draft = TargetDraft(account="1@server.example", content=content, media=tuple(media), options=parsed)
        codes += [code for code, _why, _extra in entry.target_checker()(None, "", draft) if code not in codes]
    return codes
