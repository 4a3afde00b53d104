"""Scopes of spec 5.4 and the reads they imply."""

from __future__ import annotations

ALL_SCOPES: tuple[str, ...] = (
    "media:write",
    "publish:posts",
    "publish:tiktok",
    "accounts:read",
    "workspace:read",
    "generations:write",
    "videos:read",
    # extension (docs/webhooks.md): endpoints, their delivery log, redelivery
    "webhooks:read",
    "webhooks:write",
)

# A route guarded by scope S also admits any key holding one of IMPLIED_BY[S].
IMPLIED_BY: dict[str, tuple[str, ...]] = {
    "workspace:read": ("media:write", "publish:posts"),
    "videos:read": ("generations:write",),
    "webhooks:read": ("webhooks:write",),
}


def satisfies(held: list[str] | tuple[str, ...], required: str) -> bool:
    return required in held or any(s in held for s in IMPLIED_BY.get(required, ()))
