"""A post's public form (spec 2.4): its one serializer, and the reads that answer GET /v1/posts/:id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from peewee import JOIN, Field, ForeignKeyField

from backend import clock
from backend.errors import ApiError
from backend.store.models import Post, PostTarget
from backend.store.shapes import Shape, Slot


def get(workspace_id: str, post_id: str) -> Post:
    post = Post.get_or_none((Post.id == post_id) & (Post.workspace == workspace_id))
    if post is None:
        raise ApiError(404, "post_not_found", f"post {post_id!r} not found in this workspace")
    return post


def targets_of(post_ids: Sequence[str]) -> dict[str, list[PostTarget]]:
    out: dict[str, list[PostTarget]] = {pid: [] for pid in post_ids}
    if not post_ids:
        return out
    for t in PostTarget.select().where(PostTarget.post.in_(list(post_ids))).order_by(PostTarget.position):
        out[t.post_id].append(t)
    return out


# GET /v1/posts/:id is the hottest route: one statement reads only the columns of the answer, the post's
# joined with its targets' (as tuples: no model instance per row).
_POST_FIELDS = (
    Post.id,
    Post.status,
    Post.scheduled_at,
    Post.created_at,
    Post.updated_at,
    Post.content,
    Post.media_urls,
    Post.options,
    Post.idempotency_key,
    Post.labels,
)
_TARGET_FIELDS = (
    PostTarget.platform,
    PostTarget.account,
    PostTarget.account_name,
    PostTarget.status,
    PostTarget.external_post_id,
    PostTarget.post_url,
    PostTarget.fail_reason,
    PostTarget.fail_type,
    PostTarget.completed_at,
    PostTarget.next_attempt_at,
    PostTarget.warnings,
)
_POST_NAMES = tuple(f.name for f in _POST_FIELDS)
_TARGET_NAMES = tuple(f.name for f in _TARGET_FIELDS)


_READ_PUBLIC = Shape(
    lambda: (
        Post.select(*_POST_FIELDS, *_TARGET_FIELDS)
        .join(PostTarget, JOIN.LEFT_OUTER, on=(PostTarget.post == Post.id))
        .where((Post.id == Slot("post")) & (Post.workspace == Slot("workspace")))
        .order_by(PostTarget.position)
        .tuples()
    )
)


def get_public(workspace_id: str, post_id: str) -> dict[str, Any]:
    """GET /v1/posts/:id: the public post, or 404 post_not_found."""
    rows = _READ_PUBLIC.rows(post=post_id, workspace=workspace_id)
    if not rows:
        raise ApiError(404, "post_not_found", f"post {post_id!r} not found in this workspace")
    n = len(_POST_NAMES)
    post = dict(zip(_POST_NAMES, rows[0][:n], strict=True))
    targets = [dict(zip(_TARGET_NAMES, r[n:], strict=True)) for r in rows if r[n] is not None]
    return serialize(post, targets)


def serialize(post: dict[str, Any], targets: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The public form of a post (the one serializer of GET/POST /v1/posts and the lists), given as row values
    by field name; absent target columns (a target just written) are None."""
    return {
        "id": post["id"],
        "status": post["status"],
        "scheduledAt": clock.iso(post["scheduled_at"]),
        "createdAt": clock.iso(post["created_at"]),
        "updatedAt": clock.iso(post["updated_at"]),
        "content": post["content"],
        "mediaUrls": list(post["media_urls"] or []),
        "options": dict(post["options"] or {}),
        "idempotencyKey": post["idempotency_key"],
        "labels": dict(post.get("labels") or {}),
        "targets": [
            {
                "platform": t["platform"],
                "accountId": t["account"],
                "accountName": t["account_name"],
                "status": t["status"],
                "externalPostId": t.get("external_post_id"),
                "postUrl": t.get("post_url"),
                "failReason": t.get("fail_reason"),
                "failType": t.get("fail_type"),
                "completedAt": clock.iso(t.get("completed_at")),
                "nextAttemptAt": clock.iso(t.get("next_attempt_at")),
                "warnings": list(t.get("warnings") or []),
            }
            for t in targets
        ],
    }


def to_public(post: Post, targets: Sequence[PostTarget] | None = None) -> dict[str, Any]:
    """The public form of a post read as a model (its targets read when not given): the same serializer as
    get_public's, fed the same columns."""
    if targets is None:
        targets = targets_of([post.id])[post.id]
    return serialize(_values(post, _POST_FIELDS), [_values(t, _TARGET_FIELDS) for t in targets])


def _values(row: Post | PostTarget, fields: Sequence[Field]) -> dict[str, Any]:
    """A model's values of `fields` by field name (a foreign key's id, never the related row: no query)."""
    return {
        f.name: getattr(row, f.object_id_name if isinstance(f, ForeignKeyField) else f.name) for f in fields
    }
