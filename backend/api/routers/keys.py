"""API keys (spec 4.1): session authentication only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from backend.api.deps import SessionAuth
from backend.api.errors import responses
from backend.schemas.keys import KeyCreate, KeyCreated, KeyDeleted, KeyList
from backend.services import keys as svc

router = APIRouter(tags=["api-keys"])


@router.post(
    "/api-keys", operation_id="createKey", status_code=201, response_model=KeyCreated, responses=responses()
)
def create_key(body: KeyCreate, ctx: SessionAuth) -> dict[str, Any]:
    key, full = svc.create(
        ctx.workspace_id,
        body.name,
        body.expires_in_days,
        list(body.scopes) if body.scopes is not None else None,
    )
    return svc.to_public(key, full)


@router.get("/api-keys", operation_id="listKeys", response_model=KeyList, responses=responses())
def list_keys(ctx: SessionAuth) -> dict[str, Any]:
    return {"items": [svc.to_public(k) for k in svc.list_keys(ctx.workspace_id)]}


@router.delete(
    "/api-keys/{key_id}", operation_id="deleteKey", response_model=KeyDeleted, responses=responses(404, 409)
)
def delete_key(key_id: str, ctx: SessionAuth, purge: bool = Query(False)) -> Any:
    if purge:
        svc.purge(ctx.workspace_id, key_id)
        return JSONResponse({"ok": True, "purged": True, "id": key_id})
    svc.revoke(ctx.workspace_id, key_id)
    return {"ok": True, "purged": False, "id": key_id}
