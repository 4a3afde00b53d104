"""API keys (spec 2.1, 4.1)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schemas.common import CamelModel, CamelOut, Timestamp

ScopeName = Literal[
    "media:write",
    "publish:posts",
    "publish:tiktok",
    "accounts:read",
    "workspace:read",
    "generations:write",
    "videos:read",
    "webhooks:read",
    "webhooks:write",
]

DEFAULT_KEY_NAME = "API key"  # a key created without a name, or with a blank one


class KeyCreate(CamelModel):
    name: str = Field(
        default=DEFAULT_KEY_NAME, max_length=200, description=f"{DEFAULT_KEY_NAME!r} when left out or blank"
    )
    expires_in_days: Literal[30, 90, 365] | None = 90
    scopes: list[ScopeName] | None = Field(
        default=None,
        min_length=1,
        description="default: every scope (the seven of spec 5.4 and the webhooks extension's two)",
    )


class KeyOut(CamelOut):
    id: str
    name: str
    key_prefix: str
    scopes: list[str]
    expires_at: Timestamp | None
    last_used_at: Timestamp | None
    revoked_at: Timestamp | None
    created_at: Timestamp
    state: Literal["active", "revoked", "expired"]


class KeyCreated(KeyOut):
    key: str = Field(description="the full secret: shown in this response only, never again")


class KeyList(CamelOut):
    items: list[KeyOut]


class KeyDeleted(CamelOut):
    ok: bool = True
    purged: bool = False
    id: str
