"""Sandbox networks: in-process emulators of the networks' real APIs. Not part of the product: the framework here
imports nothing of it, each network's emulator (its package's emulator.py) imports only this framework, and they
keep what they receive in their own database (store.py).

    sandbox = Sandbox(SandboxConfig(DatabaseLocation.sqlite_in(data_dir), emulators=(("tiktok", "…:Class"),)))
    ident = sandbox.register_account("tiktok", "Brand", "ok")                # connect a sandbox account
    client = httpx.Client(transport=sandbox.transport("tiktok"))             # what the adapter talks to
    sandbox.list_published(platform="tiktok")                                # what the sandbox networks hold

The product reaches the sandbox through backend.services.adapters (which turns its Settings into a
SandboxConfig); the module-level `register_account`, `set_behaviour` and `list_published` act on the sandbox
database opened last (the current one).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from backend.networks.sandbox.core import (
    BEHAVIOURS,
    Emulator,
    SandboxConfig,
    SandboxIdentity,
    emulator_type,
    know_emulators,
    known_platforms,
    register_account,
    set_behaviour,
)
from backend.networks.sandbox.store import (
    DatabaseLocation,
    SandboxAccount,
    SandboxItem,
    open_database,
    sandbox_db,
)


def emulator_class(platform: str) -> type[Emulator]:
    """The emulator class of a network of a sandbox made in this process (ValueError for another name)."""
    return emulator_type(platform)


class Sandbox:
    """The emulated networks of one configuration: their database (opened and migrated on construction, and
    made the current one), one emulator per network, and the transports that serve them to httpx clients."""

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        know_emulators(config.emulators)
        self.db = open_database(config.location)
        self._emulators: dict[str, Emulator] = {}
        self._guard = threading.Lock()

    def activate(self) -> Sandbox:
        """Make this sandbox's database the current one (an attribute read when it already is)."""
        if sandbox_db.obj is not self.db:
            self.db = open_database(self.config.location)
        return self

    def emulator(self, platform: str) -> Emulator:
        emu = self._emulators.get(platform)
        if emu is None:
            with self._guard:
                emu = self._emulators.get(platform) or emulator_class(platform)(self.config)
                self._emulators[platform] = emu
        return emu

    def handler(self, platform: str, *, latency: bool = True) -> Any:
        """httpx.Request -> httpx.Response: the network's emulator behind its latency (the configured delay of
        every call, slept before the answer comes back, outside any lock; latency=False: the server that serves it
        waits that delay itself, `delay_for`).

        The emulator takes the request at once and the latency is the wait for its answer, as at a real network,
        which holds a request from when it was sent, however long its answer takes: a client process frozen
        mid-call (SIGSTOP, a GC pause) does not freeze the network's side of the call with it, even though this
        emulator runs inside that process."""
        emu = self.emulator(platform)
        delay = self.config.delay_for(platform) if latency else 0.0

        def handle(request: httpx.Request) -> httpx.Response:
            self.activate()  # the current database is this sandbox's
            response = emu(request)
            if delay > 0:
                time.sleep(delay)
            return response

        return handle

    def delay_for(self, platform: str) -> float:
        """The configured latency of each of the network's calls."""
        return float(self.config.delay_for(platform))

    def hosts(self, platform: str) -> dict[str, str]:
        """The network's `.invalid` hosts by role, which its adapter talks to (nothing can leak to a real network)."""
        return dict(emulator_class(platform).HOSTS)

    def transport(self, platform: str) -> httpx.MockTransport:
        """A public httpx transport serving the network's emulator in process."""
        return httpx.MockTransport(self.handler(platform))

    def listing_delay_s(self, platform: str, behaviour: str = "ok") -> float:
        """How long after accepting a publication the network's listing may still miss it, for an account of
        this behaviour: TikTok lists a direct post once processed; the others list at once."""
        return self.emulator(platform).listing_delay_s(behaviour)

    def register_account(
        self, platform: str, name: str, behaviour: str = "ok", *, private: bool = False
    ) -> SandboxIdentity:
        self.activate()
        return register_account(platform, name, behaviour, private=private)

    def set_behaviour(self, sandbox_account_id: str, behaviour: str) -> None:
        self.activate()
        set_behaviour(sandbox_account_id, behaviour)

    def list_published(
        self, platform: str | None = None, account: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        self.activate()
        return _list(platform, account, limit)


def _list(platform: str | None, account: str | None, limit: int) -> list[dict[str, Any]]:
    if sandbox_db.obj is None:
        raise RuntimeError("no sandbox database is open: construct a Sandbox first")
    platforms = [platform] if platform else known_platforms()
    listing = SandboxConfig(location=DatabaseLocation())  # describing an item needs only the clock
    emus = {p: emulator_class(p)(listing) for p in platforms}
    q = SandboxItem.select().where(SandboxItem.platform.in_(platforms))
    accounts = {a.id: a for a in SandboxAccount.select().where(SandboxAccount.platform.in_(platforms))}
    if account:
        ids = [a.id for a in accounts.values() if account in (a.id, a.external_id, a.username)]
        q = q.where(SandboxItem.account_id.in_(ids))
    out: list[dict[str, Any]] = []
    for item in q.order_by(SandboxItem.created_at.desc(), SandboxItem.id.desc()).iterator():
        row = emus[item.platform].describe(item)  # type: ignore[attr-defined]  # describe() is what each network's emulator class adds to the Emulator base
        if row is None:
            continue
        acc = accounts.get(item.account_id)
        row.update(
            platform=item.platform,
            account_id=item.account_id,
            account_external_id=acc.external_id if acc else None,
            account_username=acc.username if acc else None,
            created_at=item.created_at,
        )
        out.append(row)
        if len(out) >= limit:
            break
    return out


def list_published(
    platform: str | None = None, account: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """What the current sandbox's networks published (and TikTok drafts delivered), newest first.
    account: a sandbox account id, external account id or username."""
    return _list(platform, account, limit)


__all__ = [
    "BEHAVIOURS",
    "DatabaseLocation",
    "Sandbox",
    "SandboxConfig",
    "SandboxIdentity",
    "emulator_class",
    "know_emulators",
    "list_published",
    "register_account",
    "set_behaviour",
]
