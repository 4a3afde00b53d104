"""API keys: create, list, revoke, purge, and authenticate a presented key."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from backend import clock
from backend.errors import ApiError
from backend.ids import new_id
from backend.services import security
from backend.services.scopes import ALL_SCOPES
from backend.store.db import locked, tx
from backend.store.models import ApiKey

ALLOWED_LIFETIMES = (30, 90, 365, None)
LAST_USED_GRANULARITY = timedelta(seconds=5)


def create(workspace_id: str, name: str, expires_in_days: int | None = 90,
           scopes: list[str] | None = None) -> tuple[ApiKey, str]:
    if expires_in_days not in ALLOWED_LIFETIMES:
        raise ApiError(400, "validation_error", "expiresInDays must be 30, 90, 365 or null",
                       [{"field": "expiresInDays", "error": "invalid_lifetime",
                         "message": "allowed: 30, 90 (default), 365, null (no expiry)"}])
    chosen = list(ALL_SCOPES) if scopes is None else list(dict.fromkeys(scopes))
    unknown = [s for s in chosen if s not in ALL_SCOPES]
    if unknown:
        raise ApiError(400, "validation_error", f"unknown scope(s): {', '.join(unknown)}",
                       [{"field": "scopes", "error": "unknown_scope", "message": s} for s in unknown])
    if not chosen:
        raise ApiError(400, "validation_error", "a key needs at least one scope",
                       [{"field": "scopes", "error": "empty", "message": "give at least one scope"}])
    full, prefix, digest = security.new_api_key()
    now = clock.now()
    with tx():
        key = ApiKey.create(
            id=new_id("key"), workspace=workspace_id, name=name.strip() or "unnamed", key_prefix=prefix,
            key_hash=digest, scopes=chosen,
            expires_at=None if expires_in_days is None else now + timedelta(days=expires_in_days),
            created_at=now,
        )
    return key, full


def list_keys(workspace_id: str) -> list[ApiKey]:
    return list(ApiKey.select().where(ApiKey.workspace == workspace_id).order_by(ApiKey.id.desc()))


def _locked(workspace_id: str, key_id: str) -> ApiKey:
    """The workspace's key, row-locked for the enclosing transaction; 404 for another workspace's id."""
    key = locked(ApiKey.select().where((ApiKey.id == key_id) & (ApiKey.workspace == workspace_id))).first()
    if key is None:
        raise ApiError(404, "api_key_not_found", "no API key with this id in the workspace")
    return key


def revoke(workspace_id: str, key_id: str) -> ApiKey:
    with tx():
        key = _locked(workspace_id, key_id)
        if key.revoked_at is None:
            key.revoked_at = clock.now()
            key.save()
    return key


def purge(workspace_id: str, key_id: str) -> None:
    """Erase a key that can no longer serve (revoked or expired). Never revokes as a side effect."""
    with tx():
        key = _locked(workspace_id, key_id)
        if state(key) == "active":
            raise ApiError(409, "api_key_still_active",
                           "this key can still be used: revoke it first (DELETE /v1/api-keys/{id}), then purge")
        key.delete_instance()


def state(key: ApiKey, now: datetime | None = None) -> str:
    now = now or clock.now()
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= now:
        return "expired"
    return "active"


def authenticate(presented: str) -> ApiKey:
    """The key row for a presented secret, or 401 invalid_api_key / api_key_revoked / api_key_expired.

    On every API request: one indexed look-up by hash, reading only the columns checked here."""
    if not security.looks_like_key(presented):
        raise ApiError(401, "invalid_api_key", "the API key is unknown or badly copied")
    digest = security.hash_key(presented)
    key = (ApiKey.select(ApiKey.id, ApiKey.workspace, ApiKey.scopes, ApiKey.expires_at, ApiKey.last_used_at,
                         ApiKey.revoked_at)
           .where(ApiKey.key_hash == digest).get_or_none())
    if key is None:
        raise ApiError(401, "invalid_api_key", "the API key is unknown or badly copied")
    now = clock.now()
    st = state(key, now)
    if st == "revoked":
        raise ApiError(401, "api_key_revoked", "this API key was revoked: create a new one")
    if st == "expired":
        raise ApiError(401, "api_key_expired",
                       f"this API key expired on {clock.iso(key.expires_at)}: create a new one")
    if key.last_used_at is None or now - key.last_used_at >= LAST_USED_GRANULARITY:
        ApiKey.update(last_used_at=now).where(ApiKey.id == key.id).execute()
        key.last_used_at = now
    return key


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
