"""The one way to get a network adapter for an account: `adapter_for(account, settings)`.

A sandbox account gets the network's adapter talking to that network's emulator (an `httpx.MockTransport`
around it); a live account the same adapter talking to the real hosts (the network's own settings:
SOCIALPUB_<NETWORK>_BASE_URL…). Every service that calls a network uses this function; the adapter is the one
its registry entry builds (backend/networks/registry.py). This module is also the product's door to the sandbox:
it turns Settings into the sandbox's plain configuration (`sandbox_config`: the registry's emulators, each
network's own sandbox values) and opens its database.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlparse

import httpx

from backend.config import Settings
from backend.errors import ApiError
from backend.media import fetch
from backend.media.storage import get_storage, media_base_url
from backend.networks import registry
from backend.networks.base import FailType, MediaRef, NetworkAdapter, NetworkError
from backend.networks.factory import AdapterContext, http_client
from backend.networks.media_loader import MAX_UPLOAD_BYTES, MediaLoader
from backend.networks.registry import Network
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig, SandboxIdentity
from backend.networks.sandbox.developer_app import parse_apps
from backend.networks.sandbox.store import TABLES
from backend.outbound.guarded import GuardedTransport, trusted_hosts
from backend.store.db import STEPS
from backend.store.instance import address_rule
from backend.store.models import Account


def sandbox_location(settings: Settings) -> DatabaseLocation:
    """SQLite: `sandbox.db` in the data dir. PostgreSQL: the product's database (the sandbox's own tables)."""
    if settings.is_postgres and settings.database_url:
        u = urlparse(settings.database_url)
        return DatabaseLocation(
            pg_database=unquote(u.path.lstrip("/")) or "postgres",
            pg_user=unquote(u.username) if u.username else None,
            pg_password=unquote(u.password) if u.password else None,
            pg_host=u.hostname or "127.0.0.1",
            pg_port=u.port or 5432,
        )
    return DatabaseLocation.sqlite_in(settings.data_dir)


def sandbox_emulators() -> tuple[tuple[str, str], ...]:
    """The registry's emulators: (network, "module:Class") for each network that has one."""
    return tuple((n.name, n.emulator) for n in registry.networks() if n.emulator)


def sandbox_options(settings: Settings) -> tuple[tuple[str, Any], ...]:
    """Each network's own sandbox values (its settings' `sandbox_options`: a daily cap…), as plain values."""
    out: list[tuple[str, Any]] = []
    for n in registry.networks():
        own = n.settings_of(settings) if n.emulator else None
        if own is not None:
            out += [(f"{n.name}.{key}", value) for key, value in sorted(own.sandbox_options().items())]
    return tuple(out)


# The in-process sandbox reaches this machine's media host (sandbox accounts' media). Served (`socialpub sandbox
# serve`), an emulator stands for the real network and a user's new app: media must be public, and a redirect must
# be registered on the app (none is unless SOCIALPUB_<NETWORK>_REDIRECT_PORT says which).
IN_PROCESS = ("reaches_this_machine",)
SERVED = ("registered_redirects_only",)


def sandbox_config(settings: Settings, *, served: bool = False) -> SandboxConfig:
    """The sandbox of this process: sandbox accounts' networks, in process, which reach our own media host (as the
    public-media rule says of sandbox accounts: each network's option `reaches_this_machine`); `served` (`socialpub sandbox
    serve`, standing in for the real network of live accounts): as strict as the network, which cannot."""

    return SandboxConfig(
        location=sandbox_location(settings),
        emulators=sandbox_emulators(),
        delay_s=settings.sandbox_delay_s,
        network_delay_s=tuple(
            sorted((str(k), float(v)) for k, v in settings.sandbox_network_delay_s.items())
        ),
        processing_s=settings.sandbox_processing_s,
        limits=settings.sandbox_limits,
        options=sandbox_options(settings)
        + (
            tuple(
                (f"{n}.{o}", True)
                for n, _emu in sandbox_emulators()
                for o in (SERVED if served else IN_PROCESS)
            )
        ),
        verified_url_prefixes=(media_base_url(settings),),
        apps=parse_apps(settings.sandbox_apps),
    )


def default_loader(settings: Settings) -> MediaLoader:
    """Media on our own media host are read from storage; anything else goes through the SSRF-guarded fetcher."""

    def load(media: MediaRef) -> bytes:
        base = media_base_url(settings)  # the public URL prefix of our files (media host, or S3/CDN)
        if media.url.startswith(base):
            storage = get_storage(settings)
            key = media.url[len(base) :].split("?")[0]
            size = storage.size(key)
            if size is None:
                raise NetworkError(
                    "permanent",
                    f"the media {media.url} is no longer on the media host (expired or "
                    "deleted): upload it again",
                    code="media_missing",
                )
            return b"".join(storage.open_range(key, 0, size - 1))
        # deferred: backend.media costs ~107 ms of start-up, paid only by the commands that use it

        try:  # anything not on our host goes through the SSRF-guarded fetcher (no redirects, global IPs only)
            return fetch.fetch_bytes(media.url, settings, MAX_UPLOAD_BYTES)
        except ApiError as exc:
            fail_type: FailType = "permanent" if isinstance(exc, fetch.FetchTooLarge) else "retriable"
            raise NetworkError(
                fail_type,
                f"could not download the media {media.url}: {exc.message}",
                code="media_fetch_failed",
            ) from exc

    return load


def page_loader(settings: Settings) -> Callable[[str, int], bytes]:
    """A web page (or its picture) through the SSRF-guarded fetcher: a link card's (Bluesky)."""

    def load(url: str, max_bytes: int) -> bytes:
        # deferred: backend.media.fetch costs ~36 ms of start-up, paid only by the commands that use it
        from backend.media import fetch

        try:
            return fetch.fetch_bytes(url, settings, max_bytes)
        except ApiError as exc:
            raise NetworkError(
                "permanent", f"could not fetch {url}: {exc.message}", code="page_fetch_failed"
            ) from exc

    return load


_SANDBOXES: dict[SandboxConfig, Sandbox] = {}
_ADAPTERS: dict[tuple[Any, ...], tuple[Settings, NetworkAdapter]] = {}
_GUARD = threading.Lock()


def sandbox(settings: Settings) -> Sandbox:
    """The sandbox of these settings, its database opened (and migrated) and made the current one. Always the
    caller's settings, never the environment's: an app or backend built on a data dir of its own (a profile's,
    `--data-dir`) registers and publishes in that data dir's sandbox."""
    config = sandbox_config(settings)
    sb = _SANDBOXES.get(config)
    if sb is None:
        with _GUARD:
            sb = _SANDBOXES.get(config)
            if sb is None:
                if len(_SANDBOXES) >= 32:  # bounded: a process may open many data dirs
                    _SANDBOXES.clear()
                sb = _SANDBOXES[config] = Sandbox(config)
    return sb.activate()


def _own_key(own: Any) -> str:
    """A network's settings as a cache key (what a test changes on them builds another adapter)."""
    return json.dumps(own.model_dump(mode="json"), sort_keys=True) if own is not None else ""


def make_adapter(
    platform: str,
    settings: Settings,
    *,
    live: bool = False,
    media_loader: MediaLoader | None = None,
    transport: httpx.BaseTransport | None = None,
) -> NetworkAdapter:
    """The adapter of a network (its registry entry's factory). live=False: talks to the sandbox's emulator;
    live=True: to the real hosts of the network's settings. A given transport is used as is (tests: respx /
    MockTransport). Adapters built without a transport or a media loader of their own are cached per settings,
    platform and kind."""
    network = registry.get(platform)
    own = network.settings_of(settings)
    sb: Sandbox | None = None
    if live:
        hosts = own.live_hosts() if own is not None else {"api": ""}
        key: tuple[Any, ...] = (platform, id(settings), True, _own_key(own), settings.network_timeout_s)
    else:
        sb = sandbox(settings)
        hosts = sb.hosts(platform)
        key = (platform, id(settings), False, sb.config, _own_key(own), settings.network_timeout_s)
    key += (settings.media_by_url_networks,)
    cacheable = transport is None and media_loader is None
    if cacheable:
        cached = _ADAPTERS.get(key)
        if cached is not None and cached[0] is settings:
            return cached[1]
    if transport is None:
        transport = sb.transport(platform) if sb is not None else _live_transport(network, own, settings)
    ctx = AdapterContext(
        client=_client(transport, settings),
        hosts=hosts,
        settings=own,
        media_loader=media_loader or default_loader(settings),
        media_by_url=platform in settings.media_by_url_networks,
        page_loader=page_loader(settings),
    )
    adapter = network.make_adapter(ctx)
    if cacheable:
        with _GUARD:
            if len(_ADAPTERS) >= 256:
                _ADAPTERS.clear()
            _ADAPTERS[key] = (settings, adapter)
    return adapter


def network_client(settings: Settings, platform: str, kind: str = "live") -> httpx.Client:
    """The one HTTP client of the OAuth side (code exchange, discovery, refresh, the health check): the adapters'
    (their timeout, no redirects, no proxies from the environment); a sandbox account's calls go to its emulator
    in process. Tests replace this function to reach the in-process emulators without traffic."""
    if kind == "sandbox":
        return _client(sandbox(settings).transport(platform), settings)
    network = registry.get(platform)
    return _client(_live_transport(network, network.settings_of(settings), settings), settings)


def _live_transport(network: Network, own: Any, settings: Settings) -> httpx.BaseTransport | None:
    """The live calls' transport: httpx's own, or — for a network whose hosts come from users (a Mastodon
    instance, a Bluesky PDS) — the SSRF-guarded one (backend/outbound/guarded.py): each connection's host must
    pass the data dir's address rule, read when the connection opens; the network's configured hosts are
    trusted as configured."""
    if not network.user_hosts:
        return None
    configured = own.live_hosts().values() if own is not None else ()
    return GuardedTransport(lambda: address_rule(settings), trusted_hosts(configured))


def _client(transport: httpx.BaseTransport | None, settings: Settings) -> httpx.Client:
    """The adapters' and the OAuth side's HTTP client; its requests counted when SOCIALPUB_COUNT_STEPS is on."""
    client = http_client(transport, settings.network_timeout_s)
    if settings.count_steps:
        client.event_hooks = {"request": [STEPS.network_request], "response": []}
    return client


def adapter_for(account: Account, settings: Settings) -> NetworkAdapter:
    """The adapter for this account: its network's, talking to the emulator (sandbox) or the real host (live)."""
    return make_adapter(account.platform, settings, live=account.kind == "live")


def listing_delay_s(account: Account, settings: Settings) -> float:
    """How long after the account's network accepted a publication its listing (find_existing) may still miss
    it. Live: SOCIALPUB_LISTING_DELAY_S's value for the network, else its registry entry's listing_delay_s.
    Sandbox: the emulator's own (its processing time where its listing waits for it, for the account's
    behaviour)."""
    if account.kind == "live":
        configured = settings.listing_delay_s.get(account.platform)
        return (
            max(0.0, float(configured))
            if configured is not None
            else registry.get(account.platform).listing_delay_s
        )
    return sandbox(settings).listing_delay_s(account.platform, account.behaviour or "ok")


def register_sandbox_account(
    settings: Settings, platform: str, name: str, behaviour: str = "ok", *, private: bool = False
) -> SandboxIdentity:
    """Create an account at a sandbox network (what connecting it by OAuth would give)."""
    return sandbox(settings).register_account(platform, name, behaviour, private=private)


def sandbox_published(
    settings: Settings, platform: str, external_account_id: str, limit: int = 100
) -> list[dict[str, Any]]:
    """What the sandbox network `platform` holds for the account known there as `external_account_id`, newest
    first (matched by the network-side id only, never by username)."""
    rows = sandbox(settings).list_published(platform=platform, account=external_account_id, limit=limit)
    return [r for r in rows if r.get("account_external_id") == external_account_id]


def sandbox_tables() -> tuple[str, ...]:
    """The sandbox's own tables (on PostgreSQL they sit beside the product's): what wiping the product keeps."""

    return TABLES
