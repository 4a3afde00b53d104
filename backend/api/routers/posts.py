"""Multi-network posts (spec 4.4): create, read, list (extension), edit, cancel. Scope `publish:posts`.

Every route is a plain `def` (FastAPI runs it in the thread pool: the store is never called on the event
loop). The service returns the public form of the post (its one serializer); the route encodes it once,
without validating it again against the response model (which only documents it)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic import ConfigDict
from pydantic_core import to_json

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.errors import ApiError
from backend.schemas import posts as wire
from backend.schemas.common import not_nullable
from backend.schemas.posts import MAX_CONTENT, PostList, PostOut, PostQuery
from backend.services import networks
from backend.services.posts import accept, checks, edit, public
from backend.services.posts import query as post_list

router = APIRouter(tags=["posts"])
Publisher = Depends(require_scope("publish:posts"))

# The request bodies with `options` as the registry's networks take them (each network's model: the document
# shows them, and a value a network refuses is a 400 here), built when this router is first imported.
PostOptions = networks.post_options_model()
_NAMES = networks.names()
_EXAMPLES: list[Any] = [
    {"targets": list(_NAMES[:2]), "content": "Hello from socialpub"},
    {
        "targets": [{"platform": _NAMES[0]}],
        "content": "Later",
        "scheduledAt": "2099-01-01T09:00:00Z",
        "idempotencyKey": "launch-1",
    },
]


class PostCreate(wire.PostCreate):
    __doc__ = wire.PostCreate.__doc__
    model_config = ConfigDict(json_schema_extra={"examples": _EXAMPLES})

    options: PostOptions | None = None  # type: ignore[valid-type]  # built at import from the registry


class PostPatch(wire.PostPatch):
    __doc__ = wire.PostPatch.__doc__
    model_config = ConfigDict(
        json_schema_extra=not_nullable("scheduledAt", "content", "mediaUrls", "options")
    )

    options: PostOptions | None = None  # type: ignore[valid-type]  # built at import from the registry


def _json(data: Any, status: int = 200) -> Response:
    return Response(to_json(data), status_code=status, media_type="application/json")


# The created post's id feeds the operations on it (OpenAPI links: generated clients and stateful fuzzing follow them).
_POST_LINKS = {
    op: {"operationId": op, "parameters": {"post_id": "$response.body#/id"}}
    for op in ("getPost", "updatePost", "deletePost")
}


@router.post(
    "/posts",
    status_code=202,
    response_model=PostOut,
    operation_id="createPost",
    responses={
        **responses(402, 409),
        202: {"description": "accepted", "links": _POST_LINKS},
        200: {
            "model": PostOut,
            "description": "idempotent replay: the post already created with this idempotencyKey",
            "links": _POST_LINKS,
        },
    },
)
def create_post(body: PostCreate, settings: SettingsDep, ctx: AuthContext = Publisher) -> Response:
    """Validate every target, then accept: 202 `processing` (or `scheduled`), targets `pending`.
    400 `invalid_targets` lists every per-target problem; 402 `subscription_required` after the
    free publications; 200 with the existing post for an idempotencyKey already used with the same body, 409
    `idempotency_key_reused` when it was used with another one."""
    payload = body.model_dump(exclude_unset=True)
    if body.idempotency_key is not None and not _well_formed(body):
        # A replay answers the post already created with the key, but only for a request the document
        # accepts: without the key, the service refuses this one as it refuses any (nothing is written).
        del payload["idempotency_key"]
    data, created = accept.create_public(settings, ctx.workspace_id, payload)
    return _json(data, 202 if created else 200)


def _well_formed(body: PostCreate) -> bool:
    """The document's constraints that the service answers with a spec error code rather than pydantic
    (unknown network: invalid_targets; text over 63,206: content_too_long_for_target; a media URL that is
    not http(s): media_unreadable; scheduledAt without an offset: invalid_scheduled_at). False only for a request the service is certain to refuse."""
    for target in body.targets:
        if (target if isinstance(target, str) else target.platform) not in _NAMES:
            return False
    if len(body.content) > MAX_CONTENT:
        return False
    if any(urlsplit(url).scheme.lower() not in ("http", "https") for url in body.media_urls):
        return False  # not a URL this service can read: media_unreadable
    if body.scheduled_at is not None:
        try:
            checks.parse_timestamp(body.scheduled_at, "scheduledAt")
        except ApiError:
            return False
    return True


@router.get("/posts", response_model=PostList, operation_id="listPosts", responses=responses())
def list_posts(query: Annotated[PostQuery, Query()], ctx: AuthContext = Publisher) -> Response:
    """Extension: the workspace's posts, newest first (or `order=upcoming`), with cursor pagination, filters
    and a text search."""
    networks.require_known(query.platform, "platform")
    return _json(post_list.list_posts(ctx.workspace_id, query))


@router.get("/posts/{post_id}", response_model=PostOut, operation_id="getPost", responses=responses(404))
def get_post(post_id: str, ctx: AuthContext = Publisher) -> Response:
    """The post with each target's state: externalPostId, postUrl, failReason / failType, nextAttemptAt."""
    return _json(public.get_public(ctx.workspace_id, post_id))


@router.patch(
    "/posts/{post_id}", response_model=PostOut, operation_id="updatePost", responses=responses(404, 409)
)
def patch_post(
    post_id: str, body: PostPatch, settings: SettingsDep, ctx: AuthContext = Publisher
) -> Response:
    """Change `scheduledAt`, `content`, `mediaUrls`, `options` of a scheduled post not yet sent."""
    changes = {k: getattr(body, k) for k in body.model_fields_set}
    return _json(public.to_public(edit.edit(settings, ctx.workspace_id, post_id, changes)))


@router.delete(
    "/posts/{post_id}",
    status_code=204,
    response_class=Response,
    operation_id="deletePost",
    responses=responses(404, 409),
)
def delete_post(post_id: str, ctx: AuthContext = Publisher) -> Response:
    """Cancel a scheduled post not yet sent (204); 409 `post_not_cancellable` once sent."""
    edit.cancel(ctx.workspace_id, post_id)
    return Response(status_code=204)
