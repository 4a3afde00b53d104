"""API keys: create, list, revoke, purge, and authenticate a presented key."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from backend import clock
from backend.errors import ApiError
from backend.ids import new_id
from backend.schemas.keys import DEFAULT_KEY_NAME
from backend.services import security
from backend.services.scopes import ALL_SCOPES
from backend.store.db import locked, tx
from backend.store.models import ApiKey

ALLOWED_LIFETIMES = (30, 90, 365, None)
LAST_USED_GRANULARITY = timedelta(seconds=5)
# How long a process trusts a key it has verified in the store (see authenticate), and how many it keeps.
VERIFIED_TTL = timedelta(seconds=1)
VERIFIED_MAX = 10_000


def create(
    workspace_id: str, name: str, expires_in_days: int | None = 90, scopes: list[str] | None = None
) -> tuple[ApiKey, str]:
    if expires_in_days not in ALLOWED_LIFETIMES:
        raise ApiError(
            400,
            "validation_error",
            "expiresInDays must be 30, 90, 365 or null",
            [
                {
                    "field": "expiresInDays",
                    "error": "invalid_lifetime",
                    "message": "allowed: 30, 90 (default), 365, null (no expiry)",
                }
            ],
        )
    chosen = list(ALL_SCOPES) if scopes is None else list(dict.fromkeys(scopes))
    unknown = [s for s in chosen if s not in ALL_SCOPES]
    if unknown:
        raise ApiError(
            400,
            "validation_error",
            f"unknown scope(s): {', '.join(unknown)}",
            [{"field": "scopes", "error": "unknown_scope", "message": s} for s in unknown],
        )
    if not chosen:
        raise ApiError(
            400,
            "validation_error",
            "a key needs at least one scope",
            [{"field": "scopes", "error": "empty", "message": "give at least one scope"}],
        )
    full, prefix, digest = security.new_api_key()
    now = clock.now()
    with tx():
        key = ApiKey.create(
            id=new_id("key"),
            workspace=workspace_id,
            name=name.strip() or DEFAULT_KEY_NAME,
            key_prefix=prefix,
            key_hash=digest,
            scopes=chosen,
            expires_at=None if expires_in_days is None else now + timedelta(days=expires_in_days),
            created_at=now,
        )
    return key, full


def list_keys(workspace_id: str) -> list[ApiKey]:
    return list(ApiKey.select().where(ApiKey.workspace == workspace_id).order_by(ApiKey.id.desc()))


def _locked(workspace_id: str, key_id: str) -> ApiKey:
    """The workspace's key, row-locked for the enclosing transaction; 404 for another workspace's id."""
    key: ApiKey | None = locked(
        ApiKey.select().where((ApiKey.id == key_id) & (ApiKey.workspace == workspace_id))
    ).first()
    if key is None:
        raise ApiError(404, "api_key_not_found", "no API key with this id in the workspace")
    return key


def revoke(workspace_id: str, key_id: str) -> ApiKey:
    with tx():
        key = _locked(workspace_id, key_id)
        if key.revoked_at is None:
            key.revoked_at = clock.now()
            key.save()
    _VERIFIED.forget(key.key_hash)
    return key


def purge(workspace_id: str, key_id: str) -> None:
    """Erase a key that can no longer serve (revoked or expired). Never revokes as a side effect."""
    with tx():
        key = _locked(workspace_id, key_id)
        if state(key) == "active":
            raise ApiError(
                409,
                "api_key_still_active",
                "this key can still be used: revoke it first (DELETE /v1/api-keys/{id}), then purge",
            )
        key.delete_instance()
    _VERIFIED.forget(key.key_hash)


def state(key: ApiKey, now: datetime | None = None) -> str:
    now = now or clock.now()
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= now:
        return "expired"
    return "active"


@dataclass(frozen=True)
class VerifiedKey:
    """What a request needs of an active key it presented (never the secret nor its hash)."""

    id: str
    workspace_id: str
    scopes: tuple[str, ...]
    expires_at: datetime | None
    last_used_at: datetime | None


class _Verified:
    """The keys this process has verified in the store, by the SHA-256 of the secret, each trusted for
    VERIFIED_TTL (on the one clock: a verification more than that old, or in the future of the clock, no longer
    counts). Only keys found active are kept (an unknown, revoked or expired key is read from the store
    on every request); at most VERIFIED_MAX (the oldest verification is dropped first)."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[datetime, VerifiedKey]] = {}  # digest -> (verified at, key)
        self._lock = threading.Lock()
        self._generation = 0  # grows with every revocation: a verification that raced with one is not kept

    def get(self, digest: str, now: datetime) -> VerifiedKey | None:
        entry = self._entries.get(digest)
        if entry is None or not timedelta(0) <= now - entry[0] < VERIFIED_TTL:
            return None
        return entry[1]

    def generation(self) -> int:
        return self._generation

    def keep(self, digest: str, key: VerifiedKey, verified_at: datetime, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # a key was revoked while this one was read: the row read may predate it
            self._entries.pop(digest, None)
            while len(self._entries) >= VERIFIED_MAX:
                del self._entries[next(iter(self._entries))]
            self._entries[digest] = (verified_at, key)

    def forget(self, digest: str) -> None:
        with self._lock:
            self._generation += 1
            self._entries.pop(digest, None)


_VERIFIED = _Verified()


def authenticate(presented: str) -> VerifiedKey:
    """The active key for a presented secret, or 401 invalid_api_key / api_key_revoked / api_key_expired.

    The secret is looked up by its SHA-256 (one indexed read of the columns checked here). A key found active is
    then trusted by this process for VERIFIED_TTL without reading the store again: a burst of requests with one
    key costs one read a second. Expiry is checked on every request. A revocation (or purge) takes effect at once
    in the process that made it, and within VERIFIED_TTL in any other process sharing the store (another
    `socialpub serve`, an embedded backend). `last_used_at` is written when a read finds it older than
    LAST_USED_GRANULARITY."""
    if not security.looks_like_key(presented):
        raise ApiError(401, "invalid_api_key", "the API key is unknown or badly copied")
    digest = security.hash_key(presented)
    now = clock.now()
    key = _VERIFIED.get(digest, now)
    if key is None:
        key = _verify(digest, now)
    elif key.expires_at is not None and key.expires_at <= now:
        raise _expired(key.expires_at)
    return key


def _verify(digest: str, now: datetime) -> VerifiedKey:
    generation = _VERIFIED.generation()
    row = (
        ApiKey.select(
            ApiKey.id,
            ApiKey.workspace,
            ApiKey.scopes,
            ApiKey.expires_at,
            ApiKey.last_used_at,
            ApiKey.revoked_at,
        )
        .where(ApiKey.key_hash == digest)
        .get_or_none()
    )
    if row is None:
        raise ApiError(401, "invalid_api_key", "the API key is unknown or badly copied")
    st = state(row, now)
    if st == "revoked":
        raise ApiError(401, "api_key_revoked", "this API key was revoked: create a new one")
    if st == "expired":
        raise _expired(row.expires_at)
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY:
        ApiKey.update(last_used_at=now).where(ApiKey.id == row.id).execute()
        row.last_used_at = now
    key = VerifiedKey(row.id, row.workspace_id, tuple(row.scopes), row.expires_at, row.last_used_at)
    _VERIFIED.keep(digest, key, now, generation)
    return key


def _expired(expires_at: datetime | None) -> ApiError:
    return ApiError(
        401, "api_key_expired", f"this API key expired on {clock.iso(expires_at)}: create a new one"
    )


def to_public(key: ApiKey, full: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": key.id,
        "name": key.name,
        "keyPrefix": key.key_prefix,
        "scopes": list(key.scopes),
        "expiresAt": clock.iso(key.expires_at),
        "lastUsedAt": clock.iso(key.last_used_at),
        "revokedAt": clock.iso(key.revoked_at),
        "createdAt": clock.iso(key.created_at),
        "state": state(key),
    }
    if full is not None:
        out["key"] = full
    return out
