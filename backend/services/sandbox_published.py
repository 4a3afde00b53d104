"""What the sandbox networks published for a workspace's sandbox accounts (GET /v1/sandbox/published).

The API reaches the sandbox only through this service (layer rule: api -> services -> networks)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from backend import clock
from backend.config import Settings
from backend.services.adapters import sandbox_published
from backend.store.models import Account


def published(
    settings: Settings,
    workspace_id: str,
    *,
    platform: str | None = None,
    account_id: str | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """Newest first, at most `limit`, as the wire's SandboxPublication fields (snake_case)."""
    q = Account.select().where((Account.workspace == workspace_id) & (Account.kind == "sandbox"))
    if platform:
        q = q.where(Account.platform == platform)
    if account_id:
        q = q.where(Account.id == account_id)
    rows: list[dict[str, Any]] = []
    for acc in q:
        # Matched by the network-side account id, never by username: sandbox usernames are a slug of the
        # name plus 4 random hex digits, so two workspaces' accounts can share one.
        if not acc.external_id:
            continue
        for row in sandbox_published(settings, acc.platform, acc.external_id, limit):
            created = row.get("created_at")
            rows.append(
                {
                    "platform": acc.platform,
                    "account_id": acc.id,
                    "account_name": acc.name,
                    "external_id": row.get("external_id"),
                    "url": row.get("url"),
                    "status": row.get("status") or "published",
                    "kind": row.get("kind"),
                    "text": row.get("text"),
                    "title": row.get("title"),
                    "media": list(row.get("media") or []),
                    "created_at": clock.iso(created) if isinstance(created, datetime) else str(created or ""),
                }
            )
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return rows[:limit]
