"""Connected accounts: listing, default account per network, sandbox connection, plan limits.

The default account of a network is the oldest connected *active* account (smallest `connected_at`, then
id): a plain network name in a post's `targets` reaches it. Plans bound how many accounts a workspace may
have connected at once (`PLANS[...].max_accounts`, every account not `disconnected` counts); over the
limit: 402 `channel_limit_exceeded`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from peewee import ModelSelect

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.networks import registry
from backend.services import network_instances, plans, tokens
from backend.services.adapters import register_sandbox_account
from backend.store.db import locked, tx
from backend.store.models import Account, Workspace
from backend.store.models.accounts import SANDBOX_BEHAVIOURS

log = logging.getLogger("socialpub.accounts")


def _ordered(query: ModelSelect[Account]) -> ModelSelect[Account]:
    return query.order_by(Account.connected_at, Account.id)


def list_accounts(workspace_id: str, *, include_disconnected: bool = False) -> list[Account]:
    q = Account.select().where(Account.workspace == workspace_id)
    if not include_disconnected:
        q = q.where(Account.status != "disconnected")
    return list(q.order_by(Account.platform, Account.connected_at, Account.id))


def default_ids(accounts: Iterable[Account]) -> set[str]:
    """Ids of the default account of each network among `accounts` (oldest connected active one)."""
    best: dict[str, Account] = {}
    for acc in accounts:
        if acc.status != "active":
            continue
        cur = best.get(acc.platform)
        if cur is None or (acc.connected_at, acc.id) < (cur.connected_at, cur.id):
            best[acc.platform] = acc
    return {a.id for a in best.values()}


def active_accounts(workspace_id: str) -> list[Account]:
    return list(
        _ordered(Account.select().where((Account.workspace == workspace_id) & (Account.status == "active")))
    )


def plan_limit(ws: Workspace) -> int:
    name = plans.plan_in_force(ws.plan_subscribed, ws.plan_status, ws.plan_period_end, clock.now())
    return plans.PLANS[name].max_accounts


def count_connected(workspace_id: str) -> int:
    return (
        Account.select()
        .where((Account.workspace == workspace_id) & (Account.status != "disconnected"))
        .count()
    )


def _sandbox_identity(
    settings: Settings, platform: str, name: str, behaviour: str, *, private: bool = False
) -> dict[str, Any]:
    """The network-side identity the sandbox emulator of `settings` gives a new account (the sandbox its posts
    will be published to); `private`: a private account at a network that has them."""

    ident = register_sandbox_account(settings, platform, name, behaviour, private=private)
    get = ident.get if isinstance(ident, dict) else lambda k, d=None: getattr(ident, k, d)
    return {
        "external_id": str(get("external_account_id") or get("external_id") or ""),
        "access_token": str(get("access_token") or ""),
        "username": str(get("username") or ""),
        "name": str(get("display_name") or name),
        "token_expires_at": get("token_expires_at") or get("expires_at"),
    }


def connect_sandbox(
    settings: Settings,
    workspace_id: str,
    platform: str,
    name: str,
    behaviour: str = "ok",
    *,
    private: bool = False,
) -> Account:
    """Connect one sandbox account (`private`: a private account at a network that has them); 402
    channel_limit_exceeded over the plan's limit."""
    network = registry.find(platform)
    if network is None or network.emulator is None:
        known = ", ".join(n.name for n in registry.networks() if n.emulator)
        raise ApiError(400, "invalid_platform", f"unknown sandbox network {platform!r}: one of {known}")
    if behaviour not in SANDBOX_BEHAVIOURS:
        raise ApiError(
            400,
            "invalid_behaviour",
            f"unknown sandbox behaviour {behaviour!r}: one of {', '.join(SANDBOX_BEHAVIOURS)}",
        )
    name = name.strip()
    if not name:
        raise ApiError(
            400,
            "validation_error",
            "name must not be empty",
            [{"field": "name", "error": "empty", "message": "name must not be empty"}],
        )
    with tx():
        # The workspace row lock serialises concurrent connections, so the count below cannot be raced.
        ws = locked(Workspace.select().where(Workspace.id == workspace_id)).get_or_none()
        if ws is None:
            raise ApiError(404, "workspace_not_found", "workspace not found")
        _check_limit(ws, extra=1)
        ident = _sandbox_identity(settings, platform, name, behaviour, private=private)
        now = clock.now()
        account = Account.create(
            id=new_id("acc"),
            workspace=workspace_id,
            platform=platform,
            name=ident["name"] or name,
            username=ident["username"],
            kind="sandbox",
            status="active",
            behaviour=behaviour,
            external_id=ident["external_id"],
            access_token=ident["access_token"],
            token_expires_at=ident["token_expires_at"],
            connected_at=now,
            created_at=now,
        )
    _ready_sandbox_server(settings, network, account.external_id)
    return account


def _ready_sandbox_server(settings: Settings, network: registry.Network, external_id: str) -> None:
    """A sandbox account of a network made of many servers (Mastodon): its emulated server readied as a live
    connect readies a real one (network_instances.prepare: socialpub's app there, its limits cached), so the
    checks at a post's creation and the compose counter use that server's limits from the first post. The account
    stands whatever happens: a failure is logged, and the network's own limits apply until the server is read."""
    app = network.oauth_app()
    instances = app.instances if app is not None else None
    host = instances.host_of(external_id) if instances is not None else None
    if instances is None or host is None:
        return
    try:
        network_instances.prepare(settings, network.name, instances, host, "sandbox")
    except Exception:  # noqa: BLE001 (the emulator's failure costs the cache, never the account)
        log.warning(
            "sandbox %s: its server %s could not be read; its limits are the network's",
            network.name,
            host,
            exc_info=True,
        )


def _check_limit(ws: Workspace, extra: int) -> None:
    limit = plan_limit(ws)
    used = count_connected(ws.id)
    if used + extra > limit:
        name = plans.plan_in_force(ws.plan_subscribed, ws.plan_status, ws.plan_period_end, clock.now())
        raise ApiError(
            402,
            "channel_limit_exceeded",
            f"the {name} plan allows {limit} connected accounts and {used} are connected: "
            "disconnect one or upgrade the plan",
            [{"plan": name, "limit": limit, "used": used}],
        )


def connect_sandbox_defaults(
    settings: Settings, workspace_id: str, *, public: bool = False
) -> list[dict[str, Any]]:
    """`socialpub init --sandbox`: one sandbox account per registered network (that has an emulator) not already
    connected, in the registry's order (built-ins first), as far as the plan allows: a network left out for the
    plan's limit is logged, and can be added once another is disconnected or the plan upgraded. A network whose
    registry entry says `sandbox_private` gets a private account (TikTok: what a new app may direct-post to),
    unless `public` (every account public, the emulators' default: for a check that needs public accounts)."""
    have = {a.platform for a in active_accounts(workspace_id)}
    for network in registry.networks():
        if network.emulator is None or network.name in have:
            continue
        private = network.sandbox_private and not public
        try:
            connect_sandbox(
                settings, workspace_id, network.name, network.sandbox_account_name, "ok", private=private
            )
        except ApiError as exc:
            if exc.code != "channel_limit_exceeded":
                raise
            log.warning("no sandbox account for %s: %s", network.name, exc.message)
    accounts = list_accounts(workspace_id)
    defaults = default_ids(accounts)
    return [to_public(a, a.id in defaults, settings) for a in accounts if a.id in defaults]


def connected(workspace_id: str, account_id: str) -> Account:
    """The workspace's account that is not disconnected; 404 `account_not_found` otherwise (another workspace's
    account included: it does not exist here)."""
    acc = (
        Account.select()
        .where(
            (Account.id == account_id)
            & (Account.workspace == workspace_id)
            & (Account.status != "disconnected")
        )
        .get_or_none()
    )
    if acc is None:
        raise ApiError(404, "account_not_found", "account not found in this workspace")
    return acc


def disconnect(workspace_id: str, account_id: str) -> Account:
    """Disconnect an account: it no longer counts against the plan; its tokens are dropped (access and refresh:
    the grant cannot be used from here any more; revoking it at the network is the user's, in its settings);
    posts keep its name on their targets."""
    with tx():
        acc = locked(
            Account.select().where((Account.id == account_id) & (Account.workspace == workspace_id))
        ).get_or_none()
        if acc is None:
            raise ApiError(404, "account_not_found", "account not found in this workspace")
        if acc.status != "disconnected":
            acc.status = "disconnected"
            acc.disconnected_at = clock.now()
            acc.access_token = ""
            acc.refresh_token = None  # a year-long credential (TikTok, Google): nothing of the grant is kept
            acc.save()
    return acc


def to_public(acc: Account, is_default: bool, settings: Settings) -> dict[str, Any]:
    """The account's public form; `tokenWarning` as `settings` see it."""
    return {
        "id": acc.id,
        "platform": acc.platform,
        "name": acc.name,
        "username": acc.username,
        "kind": acc.kind,
        "status": acc.status,
        "isDefault": is_default,
        "behaviour": acc.behaviour,
        "connectedAt": clock.iso(acc.connected_at),
        "tokenExpiresAt": clock.iso(acc.token_expires_at),
        "tokenWarning": tokens.token_warning(acc, settings),
        "grantedScopes": acc.granted_scopes.split() if acc.granted_scopes else None,
        "textLimit": network_instances.account_text_limit(acc.platform, acc.external_id),
    }


def listing(workspace_id: str, settings: Settings) -> dict[str, Any]:
    accounts = list_accounts(workspace_id)
    defaults = default_ids(accounts)
    ws = Workspace.get_by_id(workspace_id)
    return {
        "items": [to_public(a, a.id in defaults, settings) for a in accounts],
        "limit": plan_limit(ws),
        "used": sum(1 for a in accounts if a.status != "disconnected"),
    }
