"""Media (spec 4.3): POST /v1/media; extensions: GET /v1/media (library), GET/DELETE /v1/media/{key_or_id}."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.common import MEDIA_CURSOR
from backend.schemas.media import MediaCreate, MediaDeleted, MediaItem, MediaList, MediaOut
from backend.services import media as svc

router = APIRouter(tags=["media"])

MediaAuth = Annotated[AuthContext, Depends(require_scope("media:write"))]


@router.post(
    "/media",
    operation_id="uploadMedia",
    status_code=201,
    response_model=MediaOut,
    response_model_exclude_none=True,
    responses={
        **responses(502),
        201: {
            "description": "ingested",
            "links": {
                op: {"operationId": op, "parameters": {"key_or_id": "$response.body#/key"}}
                for op in ("getMedia", "deleteMedia")
            },
        },
    },
)
def create_media(body: MediaCreate, ctx: MediaAuth, settings: SettingsDep) -> dict[str, Any]:
    """Ingest an image (converted to JPEG q90, at most 1080 px) or a video (stored as is), from a URL or base64."""
    media = svc.ingest(settings, ctx.workspace_id, url=body.url, data_b64=body.base64)
    return svc.to_public(media, settings)


@router.get("/media", operation_id="listMedia", response_model=MediaList, responses=responses())
def list_media(
    ctx: MediaAuth,
    settings: SettingsDep,
    cursor: Annotated[
        str | None,
        Query(
            max_length=200,
            json_schema_extra={"pattern": MEDIA_CURSOR},  # stated here; another shape: 400 invalid_cursor
            description="`nextCursor` of the previous page, as it came",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    type: Annotated[Literal["image", "video"] | None, Query()] = None,
    sha256: Annotated[
        str | None,
        Query(pattern="^[0-9a-f]{64}$", description="only the files whose stored bytes have this SHA-256"),
    ] = None,
    source_sha256: Annotated[
        str | None,
        Query(
            alias="sourceSha256",
            pattern="^[0-9a-f]{64}$",
            description="only the files ingested from bytes with this SHA-256 "
            "(an upload's or a URL's, before re-encoding)",
        ),
    ] = None,
) -> dict[str, Any]:
    """The workspace's media library, newest first, each item with its expiry (extension)."""
    rows, next_cursor = svc.list_media(
        ctx.workspace_id, cursor=cursor, limit=limit, kind=type, sha256=sha256, source_sha256=source_sha256
    )
    return {"items": [svc.to_item(m, settings) for m in rows], "nextCursor": next_cursor}


@router.get("/media/{key_or_id}", operation_id="getMedia", response_model=MediaItem, responses=responses(404))
def get_media(key_or_id: str, ctx: MediaAuth, settings: SettingsDep) -> dict[str, Any]:
    """One item of the media library, by key (file name) or id."""
    return svc.to_item(svc.get_media(ctx.workspace_id, key_or_id), settings)


@router.delete(
    "/media/{key_or_id}",
    operation_id="deleteMedia",
    response_model=MediaDeleted,
    responses=responses(404, 409, 502),
)
def delete_media(key_or_id: str, ctx: MediaAuth, settings: SettingsDep) -> dict[str, Any]:
    """Delete a file now (its URL answers 404). Refused with 409 media_in_use while a post or generation holds it."""
    media = svc.get_media(ctx.workspace_id, key_or_id)
    svc.delete_media(settings, ctx.workspace_id, media.id)
    return {"ok": True, "key": media.key}
