"""GET /v1/sandbox/published (extension): what the sandbox networks published for this workspace's
sandbox accounts, newest first. Read-only; any key with `accounts:read`, or an owner session."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.common import NetworkName
from backend.schemas.sandbox import SandboxPublishedList
from backend.services import networks
from backend.services import sandbox_published as svc

router = APIRouter(tags=["sandbox"])


@router.get(
    "/sandbox/published",
    operation_id="listSandboxPublications",
    response_model=SandboxPublishedList,
    responses=responses(),
)
def published(
    settings: SettingsDep,
    ctx: AuthContext = Depends(require_scope("accounts:read")),
    platform: NetworkName | None = Query(None),
    account_id: str | None = Query(
        None, alias="accountId", max_length=100, description="only this connected account"
    ),
    limit: int = Query(50, ge=1, le=1000),
) -> dict[str, Any]:
    networks.require_known(platform, "platform")
    return {
        "items": svc.published(
            settings, ctx.workspace_id, platform=platform, account_id=account_id, limit=limit
        )
    }
