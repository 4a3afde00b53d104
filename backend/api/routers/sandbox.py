"""GET /v1/sandbox/published (extension): what the sandbox networks published for this workspace's
sandbox accounts, newest first. Read-only; any key with `accounts:read`, or an owner session."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query

from backend import clock
from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.sandbox import SandboxPublishedList

router = APIRouter(tags=["sandbox"])


@router.get("/sandbox/published", operation_id="listSandboxPublications", response_model=SandboxPublishedList, responses=responses())
def published(settings: SettingsDep, ctx: AuthContext = Depends(require_scope("accounts:read")),
              platform: Literal["facebook", "instagram", "linkedin", "tiktok", "youtube"] | None = Query(None),
              account_id: str | None = Query(None, alias="accountId", max_length=100,
                                             description="only this connected account"),
              limit: int = Query(50, ge=1, le=1000)) -> dict[str, Any]:
    from backend.networks.sandbox import list_published
    from backend.store.models import Account, SandboxAccount

    q = Account.select().where((Account.workspace == ctx.workspace_id) & (Account.kind == "sandbox"))
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
        own = {a.id for a in SandboxAccount.select(SandboxAccount.id).where(
            (SandboxAccount.platform == acc.platform) & (SandboxAccount.external_id == acc.external_id))}
        for row in list_published(platform=acc.platform, account=acc.external_id, limit=limit, settings=settings):
            if row.get("account_id") not in own:
                continue
            created = row.get("created_at")
            rows.append({
                "platform": acc.platform, "account_id": acc.id, "account_name": acc.name,
                "external_id": row.get("external_id"), "url": row.get("url"), "status": row.get("status") or "published",
                "kind": row.get("kind"), "text": row.get("text"), "title": row.get("title"),
                "media": list(row.get("media") or []),
                "created_at": clock.iso(created) if isinstance(created, datetime) else str(created or ""),
            })
    rows.sort(key=lambda r: r["created_at"], reverse=True)
    return {"items": rows[:limit]}
