"""The emulators' credential store (split from oauth.py, issue 31): every credential the OAuth endpoints issue
(codes, access, refresh and page tokens) kept by its SHA-256 only, with the grant (the consent) it belongs to,
and whether one is still usable.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backend.networks.sandbox.core import now, token_hash, write
from backend.networks.sandbox.store import SandboxGrant, SandboxToken


def store_credential(
    platform: str,
    token: str,
    kind: str,
    *,
    grant_id: str | None = None,
    account_id: str | None = None,
    expires_at: datetime | None = None,
    data: dict[str, Any] | None = None,
) -> str:
    with write():
        SandboxToken.create(
            id=token_hash(token),
            platform=platform,
            grant_id=grant_id,
            kind=kind,
            account_id=account_id,
            expires_at=expires_at,
            data=data or {},
            created_at=now(),
        )
    return token


def find_credential(token: str | None, platform: str, *kinds: str) -> SandboxToken | None:
    if not token:
        return None
    row = SandboxToken.get_or_none(SandboxToken.id == token_hash(token))
    if row is None or row.platform != platform or (kinds and row.kind not in kinds):
        return None
    return row


def grant_of(row: SandboxToken) -> SandboxGrant | None:
    return SandboxGrant.get_or_none(SandboxGrant.id == row.grant_id) if row.grant_id else None


def alive(row: SandboxToken, grant: SandboxGrant | None) -> str | None:
    """None when the credential is usable, else why not: revoked | expired | used."""
    if row.state == "revoked" or (grant is not None and grant.state == "revoked"):
        return "revoked"
    if row.state in ("used", "rotated"):
        return row.state
    if row.expires_at is not None and now() >= row.expires_at:
        return "expired"
    return None


def grants(platform: str | None = None) -> list[SandboxGrant]:
    q = SandboxGrant.select().order_by(SandboxGrant.created_at)
    return list(q.where(SandboxGrant.platform == platform) if platform else q)
