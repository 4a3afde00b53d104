"""Accepting a post (spec 4.4 POST /v1/posts): idempotency, the free publications, and the post written with
its targets and its publish job in one transaction; the engine claims the job (`post.publish`, dedupe key
`post:<id>`, due at `scheduledAt` or now)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from backend import clock, queue
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.schemas.statuses import PostStatus, TargetStatus
from backend.services import networks, plans
from backend.services.posts.checks import (
    WorkspaceState,
    check_against_accounts,
    check_public_media,
    check_target_rules,
    hold_media,
    inspect_media,
    load_workspace,
    parse_timestamp,
    raise_problems,
    raw_target,
    resolve_targets,
    schedule_problem,
    stored_options,
)
from backend.services.posts.public import get, get_public, serialize
from backend.store.db import tx
from backend.store.models import Post, PostLabel, PostTarget, Workspace
from backend.store.models.posts import folded
from backend.store.shapes import Shape, Slot, insert_shape

PUBLISH_JOB = "post.publish"


def job_key(post_id: str) -> str:
    return f"post:{post_id}"


# The statements of a post's acceptance, each rendered once (backend/store/shapes.py). The INSERTs are
# insert_shape's: the post (with an idempotency key: skipped when the key is taken), its targets and its labels in
# one statement each, a shape per number of rows.
_BY_KEY = Shape(
    lambda: (
        Post.select(Post.id, Post.idempotency_fingerprint)
        .where((Post.workspace == Slot("workspace")) & (Post.idempotency_key == Slot("key")))
        .limit(1)
        .tuples()
    )
)
_TAKE_FREE = Shape(
    lambda: Workspace.update(free_posts_used=Workspace.free_posts_used + 1).where(
        (Workspace.id == Slot("workspace")) & (Workspace.free_posts_used < plans.FREE_PUBLICATIONS)
    )
)


def _existing_by_key(workspace_id: str, key: str, fingerprint: str) -> str | None:
    """The post created with `key`, for a replay of the same request; 409 `idempotency_key_reused` when that post
    was created with another body (a post from before fingerprints were kept replays, as it did)."""
    row = _BY_KEY.first(workspace=workspace_id, key=key)
    if row is None:
        return None
    post_id, kept = row
    if kept is not None and kept != fingerprint:
        raise ApiError(
            409,
            "idempotency_key_reused",
            f"the idempotencyKey {key!r} was used for another request ({post_id}, created with a different "
            "body): send a new key for a new post, or the very same body to get that post again",
            [{"field": "idempotencyKey", "postId": post_id}],
        )
    return str(post_id)


def request_fingerprint(body: dict[str, Any]) -> str:
    """The sha256 of a creation request, the idempotency key aside: targets (a name or {platform, channelId}, as
    a pair), content, mediaUrls, scheduledAt (the instant, whatever its offset), options and labels, as JSON with
    sorted keys (absent, null and empty are one). Two requests with one fingerprint ask for the same post."""

    def target(raw: Any) -> list[Any]:
        platform, channel = raw_target(raw)
        return [platform, channel]

    scheduled = body.get("scheduled_at")
    if scheduled:
        try:
            scheduled = clock.iso(parse_timestamp(scheduled, "scheduledAt"))
        except ApiError:
            pass  # refused below anyway; the text as sent
    raw_options = body.get("options")
    options = (
        raw_options.model_dump(by_alias=True, exclude_none=True)
        if isinstance(raw_options, BaseModel)
        else dict(raw_options or {})
    )
    canonical = {
        "targets": [target(t) for t in body.get("targets") or []],
        "content": body.get("content"),
        "mediaUrls": list(body.get("media_urls") or []),
        "scheduledAt": scheduled or None,
        "options": options or None,
        "labels": dict(body.get("labels") or {}) or None,
    }
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _free_publication_check(ws: WorkspaceState, now: datetime) -> bool:
    """True when this post needs a free publication (no current subscription); 402 when none is left."""
    if plans.has_current_subscription(ws.plan_subscribed, ws.plan_status, ws.plan_period_end, now):
        return False
    if ws.free_posts_used >= plans.FREE_PUBLICATIONS:
        raise _subscription_required()
    return True


def _subscription_required() -> ApiError:
    return ApiError(
        402,
        "subscription_required",
        f"this workspace has used its {plans.FREE_PUBLICATIONS} free publications: subscribe to a plan "
        "to keep publishing",
    )


def _take_free_publication(workspace_id: str) -> bool:
    """Count one free publication, in the post's transaction; the condition makes concurrent posts safe."""
    updated: int = _TAKE_FREE.run(workspace=workspace_id)
    return updated == 1


@dataclass
class Accepted:
    """The outcome of create: the post's row values (by field name) and its targets' as written, or, for an
    idempotent replay (created False), the id of the post already created with the key."""

    post_id: str
    created: bool
    post: dict[str, Any] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)


def accept(settings: Settings, workspace_id: str, body: dict[str, Any]) -> Accepted:
    """Validate and accept a post: the post row, its targets, its publish job and the hold on its media
    written in one transaction. The idempotency key is decided by the UNIQUE (workspace, key) index."""
    key = body.get("idempotency_key")
    fingerprint = request_fingerprint(body) if key is not None else None
    if key is not None and fingerprint is not None:
        found = _existing_by_key(
            workspace_id, key, fingerprint
        )  # fast path: the UNIQUE index decides races below
        if found is not None:
            return Accepted(found, False)
    now = clock.now()
    loaded = load_workspace(workspace_id)
    if loaded is None:
        raise ApiError(404, "workspace_not_found", "workspace not found")
    ws, accounts = loaded
    needs_free = _free_publication_check(ws, now)

    scheduled_at = parse_timestamp(body["scheduled_at"], "scheduledAt") if body.get("scheduled_at") else None
    content: str = body["content"]
    options = networks.parse_options(body.get("options"))
    targets = resolve_targets(accounts, body["targets"])
    urls: list[str] = list(body.get("media_urls") or [])
    media, media_problems = inspect_media(settings, workspace_id, urls)
    check_target_rules(targets, content, media, options, media_problems)
    check_public_media(
        targets,
        media,
        {t.index for t in targets if t.account is not None and t.account.kind == "live"},
        settings,
    )
    check_against_accounts(settings, targets, options, content, media)
    in_past = schedule_problem(targets, scheduled_at, clock.now())
    raise_problems(targets, in_past)

    labels: dict[str, str] = dict(body.get("labels") or {})
    post_id = new_id("post")
    media_dicts = [m.to_dict() for m in media]
    options_dict = stored_options(options, media, {t.platform for t in targets})
    with tx():
        now = clock.now()
        post = {
            "id": post_id,
            "workspace": workspace_id,
            "status": PostStatus.SCHEDULED if scheduled_at else PostStatus.PROCESSING,
            "content": content,
            "content_folded": folded(content),
            "media_urls": urls,
            "media": media_dicts,
            "options": options_dict,
            "scheduled_at": scheduled_at,
            "idempotency_key": key,
            "idempotency_fingerprint": fingerprint,
            "free_publication": needs_free,
            "version": 1,
            "labels": labels or None,
            "created_at": now,
            "updated_at": now,
        }
        if key is None:  # nothing but a broken invariant can conflict: any error aborts the transaction
            insert_shape(Post).insert([post])
        elif not insert_shape(Post, if_absent=True).insert([post]):
            # the UNIQUE (workspace, idempotency_key) index refused it: a replay (post ids never collide)
            found = _existing_by_key(workspace_id, key, fingerprint or "")
            if found is None:
                raise ApiError(
                    409,
                    "idempotency_conflict",
                    "a post with this idempotency key is being created by another request: retry",
                )
            return Accepted(found, False)
        if needs_free and not _take_free_publication(workspace_id):
            raise _subscription_required()
        rows = [
            {
                "id": new_id("tgt"),
                "post": post_id,
                "position": pos,
                "platform": t.platform,
                "account": t.account.id if t.account else None,
                "account_name": t.account.name if t.account else "",
                "status": TargetStatus.PENDING,
                "idempotency_token": new_id("pub"),
                "updated_at": now,
            }
            for pos, t in enumerate(targets)
        ]
        insert_shape(PostTarget, len(rows)).insert(rows)
        if labels:
            label_rows = [
                {"post": post_id, "workspace": workspace_id, "key": k, "value": v} for k, v in labels.items()
            ]
            insert_shape(PostLabel, len(label_rows)).insert(label_rows)
        queue.enqueue(
            PUBLISH_JOB,
            {"post_id": post_id},
            run_at=scheduled_at or now,
            workspace_id=workspace_id,
            dedupe_key=job_key(post_id),
        )
        hold_media(workspace_id, post_id, urls)
    return Accepted(post_id, True, post, rows)


def create(settings: Settings, workspace_id: str, body: dict[str, Any]) -> tuple[Post, bool]:
    """Validate and accept a post. Returns (post, created); created is False for an idempotent replay."""
    done = accept(settings, workspace_id, body)
    if not done.created:
        return get(workspace_id, done.post_id), False
    return Post(**done.post), True


def create_public(settings: Settings, workspace_id: str, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """POST /v1/posts: (the public post, created). A new post is answered from the values just written (no
    re-read: 202 with targets `pending`); a replay reads the post already created with the key."""
    done = accept(settings, workspace_id, body)
    if not done.created:
        return get_public(workspace_id, done.post_id), False
    return serialize(done.post, done.targets), True
