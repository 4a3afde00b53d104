"""Multi-network posts (spec 4.4): create, read, list (extension), edit, cancel. Scope `publish:posts`."""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError

from backend.api.deps import AuthContext, SettingsDep, key_context, require_scope
from backend.api.errors import responses
from backend.config import Settings
from backend.networks.base import PLATFORMS
from backend.schemas.posts import PostCreate, PostList, PostOut, PostPatch, PostStatus
from backend.services import posts as svc

router = APIRouter(tags=["posts"])
_PUBLISH_SCOPE = "publish:posts"
Publisher = Depends(require_scope(_PUBLISH_SCOPE))
PlatformName = Literal[PLATFORMS]  # type: ignore[valid-type]


@router.post("/posts", status_code=202, response_model=PostOut,
             responses={**responses(402), 200: {"model": PostOut, "description": "idempotent replay: the "
                                                "post already created with this idempotencyKey"}})
async def create_post(body: PostCreate, settings: SettingsDep, ctx: AuthContext = Publisher) -> Any:
    """Validate every target, then accept: 202 `processing` (or `scheduled`), targets `pending`.
    400 `invalid_targets` lists every per-target problem; 402 `subscription_required` after the
    free publications."""
    return await _create(body, settings, ctx)


async def create_post_shortcut(request: Request, raw: bytes) -> Response | None:
    """POST /v1/posts ahead of FastAPI (backend/api/middleware.py FastPathMiddleware) in the common case: an
    API key, `content-type: application/json` and a body that validates. The body is parsed and validated as
    FastAPI does it for `create_post` (json.loads, then PostCreate in Python mode) before anything with a side
    effect, then the key is checked as `Publisher` checks it (key_context). Anything else is declined (None)
    and goes through `create_post` as declared, which answers it as before: errors, their order and their
    envelopes (tests/api/test_posts_create_paths.py compares both)."""
    headers = request.headers
    presented = headers.get("x-api-key")
    if presented is None or headers.get("content-type") != "application/json":
        return None
    try:
        body = PostCreate.model_validate(json.loads(raw))
    except (ValueError, ValidationError):  # JSONDecodeError, UnicodeDecodeError are ValueErrors
        return None
    ctx = key_context(request, presented, _PUBLISH_SCOPE)
    return await _create(body, request.app.state.settings, ctx)


async def _create(body: PostCreate, settings: Settings, ctx: AuthContext) -> Response:
    payload = body.model_dump(exclude_unset=True)
    if svc.create_runs_inline(payload):  # local work only: cheaper than the thread hop (see there)
        data, created = svc.create_public(settings, ctx.workspace_id, payload)
    else:
        data, created = await run_in_threadpool(svc.create_public, settings, ctx.workspace_id, payload)
    # The bytes JSONResponse would render (same separators, UTF-8, no NaN), with an encoder made once.
    return Response(_JSON.encode(data).encode(), status_code=202 if created else 200, media_type="application/json")


_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


@router.get("/posts", response_model=PostList, responses=responses())
def list_posts(
    ctx: AuthContext = Publisher,
    limit: int = Query(20, ge=1, le=100, description="page size (1-100)"),
    cursor: str | None = Query(None, max_length=200, description="`nextCursor` of the previous page"),
    status: list[PostStatus] | None = Query(None, description="repeat to match several statuses"),
    platform: PlatformName | None = Query(None, description="posts with a target on this network"),
    account_id: str | None = Query(None, alias="accountId", max_length=100,
                                   description="posts with a target on this account"),
    since: str | None = Query(None, alias="from", max_length=64,
                              description="ISO 8601 with offset; inclusive lower bound of `timeField`"),
    until: str | None = Query(None, alias="to", max_length=64,
                              description="ISO 8601 with offset; exclusive upper bound of `timeField`"),
    time_field: Literal["createdAt", "scheduledAt"] = Query("createdAt", alias="timeField",
                                                            description="the time `from`/`to` apply to"),
    idempotency_key: str | None = Query(None, alias="idempotencyKey", max_length=200),
) -> dict[str, Any]:
    """Extension: the workspace's posts, newest first, with cursor pagination and filters."""
    return svc.list_posts(ctx.workspace_id, limit=limit, cursor=cursor, statuses=status, platform=platform,
                          account_id=account_id, since=since, until=until, time_field=time_field,
                          idempotency_key=idempotency_key)


@router.get("/posts/{post_id}", response_model=PostOut, responses=responses(404))
async def get_post(post_id: str, ctx: AuthContext = Publisher) -> Any:
    if svc.reads_inline():  # two indexed reads of a local SQLite file: cheaper than the thread hop
        return JSONResponse(svc.get_public(ctx.workspace_id, post_id))
    return JSONResponse(await run_in_threadpool(svc.get_public, ctx.workspace_id, post_id))


@router.patch("/posts/{post_id}", response_model=PostOut, responses=responses(404, 409))
def patch_post(post_id: str, body: PostPatch, settings: SettingsDep, ctx: AuthContext = Publisher) -> dict[str, Any]:
    """Change `scheduledAt`, `content`, `mediaUrls`, `options` of a scheduled post not yet sent."""
    changes = {k: getattr(body, k) for k in body.model_fields_set}
    return svc.to_public(svc.edit(settings, ctx.workspace_id, post_id, changes))


@router.delete("/posts/{post_id}", status_code=204, response_class=Response, responses=responses(404, 409))
def delete_post(post_id: str, ctx: AuthContext = Publisher) -> Response:
    """Cancel a scheduled post not yet sent (204); 409 `post_not_cancellable` once sent."""
    svc.cancel(ctx.workspace_id, post_id)
    return Response(status_code=204)
