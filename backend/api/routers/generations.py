"""Generations (spec 4.5): create (and the `dryRun` cost preview, an extension), read, list, delete.

Scopes (spec 5.4): `generations:write` creates and deletes (and reads); `videos:read` reads. Every route is a plain
`def` (run in the thread pool: the store is never called on the event loop); the service returns the public form
(its one serializer) and the route encodes it once."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic_core import to_json

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.common import GENERATION_CURSOR
from backend.schemas.generations import (
    GenerationCreate,
    GenerationDeleted,
    GenerationList,
    GenerationOut,
    GenerationQuote,
)
from backend.schemas.statuses import GenerationStatusValue
from backend.services import generations as svc

router = APIRouter(tags=["generations"])
Writer = Depends(require_scope("generations:write"))
Reader = Depends(require_scope("videos:read"))


def _json(data: Any, status: int = 200) -> Response:
    return Response(to_json(data), status_code=status, media_type="application/json")


_LINKS = {
    op: {"operationId": op, "parameters": {"generation_id": "$response.body#/id"}}
    for op in ("getGeneration", "deleteGeneration")
}


@router.post(
    "/generations",
    status_code=202,
    response_model=GenerationOut,
    operation_id="createGeneration",
    responses={
        **responses(402),
        202: {"description": "accepted: `pending`, credits charged", "links": _LINKS},
        200: {
            "model": GenerationQuote | GenerationOut,
            "description": "`dryRun=true`: validated and priced, nothing created or charged "
            "(GenerationQuote); or an idempotent replay: the generation already "
            "made with this `idempotencyKey` (GenerationOut), nothing charged",
        },
    },
)
def create_generation(
    body: GenerationCreate,
    settings: SettingsDep,
    ctx: AuthContext = Writer,
    dry_run: bool = Query(
        False,
        alias="dryRun",
        description="extension: validate and price the request without "
        "creating or charging anything (200 with the cost and the "
        "balance after; 402 subscription_required still applies)",
    ),
) -> Response:
    """Create an image, or a 5, 10 or 15 second video with soundtrack, from a prompt: 202 `pending`, the credits
    charged (image 2; video 15 / 30 / 45). 400 `validation_error` lists every problem with its own code;
    402 `subscription_required` without a current subscription; 402 `insufficient_credits` when the balance is
    short (nothing charged). 200 with the existing generation for an `idempotencyKey` already used in this
    workspace (extension; nothing charged again). Poll GET /v1/generations/{id} (every 10 s) or take the
    `generation.completed` / `generation.failed` events."""
    data = svc.accept(settings, ctx.workspace_id, body.model_dump(), dry_run=dry_run)
    return _json(data, 200 if dry_run or isinstance(data, svc.Replayed) else 202)


@router.get(
    "/generations", response_model=GenerationList, operation_id="listGenerations", responses=responses()
)
def list_generations(
    settings: SettingsDep,
    ctx: AuthContext = Reader,
    limit: int = Query(20, ge=1, le=100, description="page size (1-100)"),
    cursor: str | None = Query(
        None,
        max_length=200,
        json_schema_extra={"pattern": GENERATION_CURSOR},  # stated here; another shape: 400 invalid_cursor
        description="`nextCursor` of the previous page, as it came",
    ),
    status: list[GenerationStatusValue] | None = Query(None, description="repeat to match several statuses"),
    type: Literal["image", "video"] | None = Query(None, description="only images or only videos"),
) -> Response:
    """Recent creations, newest first (deleted ones left out), and the workspace's `credits` as in
    GET /v1/workspace."""
    return _json(
        svc.list_public(settings, ctx.workspace_id, limit=limit, cursor=cursor, status=status, type_=type)
    )


@router.get(
    "/generations/{generation_id}",
    response_model=GenerationOut,
    operation_id="getGeneration",
    responses=responses(404),
)
def get_generation(generation_id: str, settings: SettingsDep, ctx: AuthContext = Reader) -> Response:
    """State and result: `mediaUrl` and `mimeType` once completed, `error` once failed. 404 `generation_not_found`
    for an id unknown in this workspace or deleted."""
    return _json(svc.get_public(settings, ctx.workspace_id, generation_id))


@router.delete(
    "/generations/{generation_id}",
    response_model=GenerationDeleted,
    operation_id="deleteGeneration",
    responses=responses(404, 409),
)
def delete_generation(generation_id: str, settings: SettingsDep, ctx: AuthContext = Writer) -> Response:
    """Remove the creation from the list (then 404). Its file is deleted at once unless posts still use it (a post
    not yet sent keeps it until sent + 30 days). A `pending` creation (not started) is refunded in full; a
    `processing` one cannot be deleted yet (409 `generation_in_progress`)."""
    return _json(svc.delete(settings, ctx.workspace_id, generation_id))
