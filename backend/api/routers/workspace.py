"""Workspace (spec 2.2, 4.2); PATCH is a documented extension (session auth)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from backend.api.deps import AuthContext, SessionAuth, require_scope
from backend.api.errors import responses
from backend.schemas.workspace import WorkspaceOut, WorkspacePatch
from backend.services import workspace as svc

router = APIRouter(tags=["workspace"])


@router.get("/workspace", operation_id="getWorkspace", response_model=WorkspaceOut, responses=responses())
def get_workspace(ctx: AuthContext = Depends(require_scope("workspace:read"))) -> dict[str, Any]:
    ws = svc.refresh_allowance(svc.get(ctx.workspace_id))
    return svc.to_public(ws)


@router.patch(
    "/workspace", operation_id="updateWorkspace", response_model=WorkspaceOut, responses=responses()
)
def patch_workspace(body: WorkspacePatch, ctx: SessionAuth) -> dict[str, Any]:
    changes = body.model_dump(exclude_unset=True)
    if "brand" in changes and body.brand is not None:
        changes["brand"] = {k: v for k, v in body.brand.model_dump(by_alias=True, exclude_unset=True).items()}
    ws = svc.edit(ctx.workspace_id, changes)
    return svc.to_public(ws)
