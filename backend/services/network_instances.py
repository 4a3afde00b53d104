"""The servers of a network made of many (Mastodon instances), as the store keeps them (`network_instance`): the
OAuth app socialpub registered on each, and the limits each reported. The one entry point for both: connect
registers an app once per server and reuses it (`app_of`, `save_app`); the rules read a server's limits from the
cache while they are younger than the network's refresh age and read them again from the server otherwise
(`fresh_limits`, `save_limits`). Shared by the workspaces: an app registration holds no user's data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from backend import clock
from backend.config import Settings
from backend.networks import registry
from backend.networks.oauth_types import InstanceCredentials, Instances, Prepared
from backend.services import adapters
from backend.store.models import NetworkInstance


@dataclass(frozen=True)
class InstanceApp:
    network: str
    host: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ()
    redirect_uris: tuple[str, ...] = ()


def _row(network: str, host: str) -> NetworkInstance | None:
    found: NetworkInstance | None = NetworkInstance.get_or_none(
        (NetworkInstance.network == network) & (NetworkInstance.host == host)
    )
    return found


def app_of(network: str, host: str) -> InstanceApp | None:
    """The app registered on that server, None when none is."""
    row = _row(network, host)
    if row is None or not row.client_id or not row.client_secret:
        return None
    return InstanceApp(
        network,
        host,
        row.client_id,
        row.client_secret,
        tuple(row.scopes.split()),
        tuple(row.redirect_uris.split()),
    )


def _upsert(network: str, host: str, values: dict[str, Any]) -> None:
    now = clock.now()
    fields = {getattr(NetworkInstance, k): v for k, v in values.items()}
    fields[NetworkInstance.updated_at] = now
    (
        NetworkInstance.insert(network=network, host=host, created_at=now, updated_at=now, **values)
        .on_conflict(conflict_target=[NetworkInstance.network, NetworkInstance.host], update=fields)
        .execute()
    )


def save_app(
    network: str,
    host: str,
    client_id: str,
    client_secret: str,
    scopes: tuple[str, ...],
    redirect_uris: tuple[str, ...],
) -> InstanceApp:
    """Keep (or replace: registered again) the app of that server; its secret is encrypted at rest."""
    _upsert(
        network,
        host,
        {
            "client_id": client_id,
            "client_secret": client_secret,
            "scopes": " ".join(scopes),
            "redirect_uris": " ".join(redirect_uris),
        },
    )
    return InstanceApp(network, host, client_id, client_secret, scopes, redirect_uris)


def prepare(
    settings: Settings, network: str, instances: Instances, host: str, kind: str = "live"
) -> Prepared:
    """Ready a server for connecting an account there, the one way for live and sandbox accounts: socialpub's app
    registered on it when none stored covers the scopes (kept), its limits read and cached. `kind`: "live" (the
    server itself, through the address rule) or "sandbox" (its emulator). Raises oauth.OAuthError."""
    stored = app_of(network, host)
    creds = (
        InstanceCredentials(stored.client_id, stored.client_secret, stored.scopes, stored.redirect_uris)
        if stored is not None
        else None
    )
    with adapters.network_client(settings, network, kind) as client:
        ready = instances.prepare(settings, client, host, creds)
    if ready.registered:
        c = ready.credentials
        save_app(network, host, c.client_id, c.client_secret, c.scopes, c.redirect_uris)
    if ready.limits is not None:
        save_limits(network, host, ready.limits)
    return ready


def save_limits(network: str, host: str, limits: dict[str, Any]) -> None:
    """The limits the server just reported (the network's cached form), read now."""
    _upsert(network, host, {"limits": limits, "limits_read_at": clock.now()})


def fresh_limits(network: str, host: str, max_age_s: float) -> dict[str, Any] | None:
    """The cached limits when read less than `max_age_s` ago; None: read them from the server again."""
    row = _row(network, host)
    if row is None or row.limits is None or row.limits_read_at is None:
        return None
    if clock.now() - row.limits_read_at >= timedelta(seconds=max_age_s):
        return None
    limits: dict[str, Any] = row.limits
    return limits


def account_server(network: str, external_id: str) -> tuple[Instances, dict[str, Any]] | None:
    """For an account of a network made of many servers (Mastodon): the network's Instances and its server's limits
    as cached (no call to the server); None for another network, or limits never read."""
    entry = registry.find(network)
    app = entry.oauth_app() if entry is not None and entry.app else None
    instances = app.instances if app is not None else None
    host = instances.host_of(external_id) if instances is not None else None
    limits = cached_limits(network, host) if instances is not None and host else None
    return (instances, limits) if instances is not None and limits is not None else None


def account_text_limit(network: str, external_id: str) -> int | None:
    """The most text a post to this account may hold when its server sets its own (None: the network's)."""
    found = account_server(network, external_id)
    if found is None or found[0].text_limit is None:
        return None
    return found[0].text_limit(found[1])


def cached_limits(network: str, host: str) -> dict[str, Any] | None:
    """The limits the server reported when last read, whatever their age (None: never read). For the checks at a
    post's creation, which call no server: the publication reads the server's own again before sending."""
    row = _row(network, host)
    if row is None or row.limits is None:
        return None
    limits: dict[str, Any] = row.limits
    return limits
