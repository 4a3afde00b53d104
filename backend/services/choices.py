"""GET /v1/accounts/{id}/choices (issue 29): what the account's network says its creator may choose now.

The network's registry entry names the function (`Network.choices`, backend/networks/choices.py); TikTok's reads
creator_info: the privacy levels the account offers (those this app may use), the interactions the creator turned
off, the longest video, the creator's nickname. A network without one answers `supported: false` and no fields,
without calling anything.

- Only an account of the caller's workspace, not disconnected (404 `account_not_found` otherwise); an account
  that must be reconnected: 400 `channel_not_connected`.
- A live token due for refresh is refreshed first (services/tokens.refresh_account; a refresh that cannot run now
  changes nothing: the call is tried with the token held).
- The network cannot be reached, or answers a transient error: 502 `network_error` (retry); it refuses the call
  (a permission not granted, a token refused): 400 `network_refused` with its words and code.
- A short cache: an answer is kept CACHE_S per account and token (TikTok allows 20 creator_info reads a minute
  per token; a compose screen asks on every target it ticks), in this process.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any

import httpx

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.networks import registry
from backend.networks.base import NetworkError
from backend.networks.choices import AccountChoices
from backend.services import accounts, adapters, tokens
from backend.store.models import Account

log = logging.getLogger("socialpub.choices")

CACHE_S = 30.0
CACHE_MAX = 1024
_CACHE: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
_GUARD = threading.Lock()


def clear_cache() -> None:
    with _GUARD:
        _CACHE.clear()


def _account(workspace_id: str, account_id: str) -> Account:
    acc = accounts.connected(workspace_id, account_id)
    if acc.status != "active":
        raise ApiError(
            400,
            "channel_not_connected",
            f"the {acc.platform} account {acc.name!r} must be reconnected ({tokens.reconnect_command(acc)})",
            [{"platform": acc.platform, "error": "channel_not_connected", "channelId": acc.id}],
        )
    return acc


def _fresh_token(acc: Account, settings: Settings) -> Account:
    """The account with its token refreshed first when it is due (a live account with a refresh token)."""
    if acc.kind != "live" or not tokens.refreshable(acc.platform, acc.refresh_token, settings):
        return acc
    if not tokens.due(acc, clock.now(), settings):
        return acc
    try:
        tokens.refresh_account(acc.id, settings)
    except Exception as exc:  # noqa: BLE001  (busy, transient, not configured: the call is tried with the token held)
        log.info("refreshing %s before reading its choices failed: %s", acc.id, type(exc).__name__)
        return acc
    return Account.get_by_id(acc.id)


def _body(acc: Account, found: AccountChoices | None, fetched: str | None) -> dict[str, Any]:
    if found is None:
        return {
            "accountId": acc.id,
            "platform": acc.platform,
            "name": acc.name,
            "supported": False,
            "creator": None,
            "fields": [],
            "limits": {},
            "notes": [],
            "consent": None,
            "networkAnswer": {},
            "fetchedAt": None,
        }
    creator = (
        {"name": found.creator_name, "handle": found.creator_handle}
        if found.creator_name or found.creator_handle
        else None
    )
    return {
        "accountId": acc.id,
        "platform": acc.platform,
        "name": acc.name,
        "supported": True,
        "creator": creator,
        "fields": [
            {
                "field": f.field,
                "allowed": list(f.allowed) if f.allowed is not None else None,
                "offered": list(f.offered) if f.offered is not None else None,
                "required": f.required,
                "locked": f.locked,
                "note": f.note,
            }
            for f in found.fields
        ],
        "limits": dict(found.limits),
        "notes": list(found.notes),
        "consent": found.consent,
        "networkAnswer": dict(found.answer),
        "fetchedAt": fetched,
    }


def account_choices(workspace_id: str, settings: Settings, account_id: str) -> dict[str, Any]:
    acc = _account(workspace_id, account_id)
    entry = registry.find(acc.platform)
    fn = entry.choices_fn() if entry is not None else None
    if fn is None:
        return _body(acc, None, None)
    acc = _fresh_token(acc, settings)
    key = (acc.id, hashlib.sha256((acc.access_token or "").encode()).hexdigest())
    now = time.monotonic()
    with _GUARD:
        hit = _CACHE.get(key)
    if hit is not None and now < hit[0]:
        return hit[1]
    label = registry.label(acc.platform)
    try:
        found: AccountChoices = fn(adapters.adapter_for(acc, settings), acc.access_token)
    except NetworkError as exc:
        details = [{"platform": acc.platform, "error": exc.code or "network_error", "channelId": acc.id}]
        if exc.fail_type == "retriable":
            raise ApiError(
                502,
                "network_error",
                f"{label} could not be reached or could not answer ({exc.code or 'network_error'}); try again",
                details,
            ) from None
        raise ApiError(400, "network_refused", f"{label} refused: {exc.reason}", details) from None
    except httpx.HTTPError as exc:
        raise ApiError(
            502,
            "network_error",
            f"could not reach {label} ({type(exc).__name__}); try again",
            [{"platform": acc.platform, "error": "network_error", "channelId": acc.id}],
        ) from None
    body = _body(acc, found, clock.iso(clock.now()))
    with _GUARD:
        if len(_CACHE) >= CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = (now + CACHE_S, body)
    return body
