"""Editing and cancelling a scheduled post (spec 4.4 PATCH / DELETE /v1/posts/:id). Edits and cancels lock
the post row and check its state in the same transaction as the change, so the engine's claim (which locks the
same row to move `scheduled -> processing`) and an edit never interleave."""

from __future__ import annotations

from typing import Any

from backend import clock, queue
from backend.config import Settings
from backend.errors import ApiError
from backend.networks.base import MediaRef
from backend.schemas.statuses import PostStatus
from backend.services import networks
from backend.services.posts.accept import job_key
from backend.services.posts.checks import (
    AccountRef,
    Target,
    check_against_accounts,
    check_public_media,
    check_target_rules,
    hold_media,
    inspect_media,
    parse_timestamp,
    raise_problems,
    release_media,
    schedule_problem,
    stored_options,
)
from backend.services.posts.public import get, targets_of
from backend.store.db import locked, tx
from backend.store.models import Account, Post, Workspace
from backend.store.models.posts import folded

EDITABLE = (PostStatus.SCHEDULED,)


_WHY_NOT_EDITABLE: dict[str, str] = {
    PostStatus.CANCELLED: "it was cancelled",
    PostStatus.PROCESSING: "it is being sent",
}


def _not_editable(post: Post) -> ApiError:
    why = _WHY_NOT_EDITABLE.get(post.status, "it was already sent")
    return ApiError(
        409,
        "post_not_editable",
        f"post {post.id} is {post.status}: only a scheduled post not yet sent can be edited ({why})",
        [{"status": post.status}],
    )


def edit(settings: Settings, workspace_id: str, post_id: str, changes: dict[str, Any]) -> Post:
    """PATCH: scheduledAt, content, mediaUrls, options; re-checked per network as on creation."""
    if "labels" in changes:
        raise ApiError(
            400,
            "labels_not_editable",
            "a post's labels are fixed at creation",
            [{"field": "labels", "error": "not_editable", "message": "labels are fixed at creation"}],
        )
    if "targets" in changes:
        raise ApiError(
            400,
            "targets_not_editable",
            "the targeted accounts of a post cannot change: cancel it (DELETE /v1/posts/{id}) and "
            "create a new post",
            [
                {
                    "field": "targets",
                    "error": "not_editable",
                    "message": "cancel the post and create a new one",
                }
            ],
        )
    for name in ("content", "media_urls", "options", "scheduled_at"):
        if name in changes and changes[name] is None:
            wire = {"media_urls": "mediaUrls", "scheduled_at": "scheduledAt"}.get(name, name)
            raise ApiError(
                400,
                "validation_error",
                f"{wire} cannot be null: leave it out to keep it",
                [{"field": wire, "error": "null", "message": "leave the field out to keep it"}],
            )
    new_at = parse_timestamp(changes["scheduled_at"], "scheduledAt") if "scheduled_at" in changes else None
    for _attempt in range(5):
        post = get(workspace_id, post_id)
        if post.status not in EDITABLE:
            raise _not_editable(post)
        rows = targets_of([post.id])[post.id]
        targets = []
        for i, row in enumerate(rows):
            t = Target(i, row.platform, None)
            targets.append(t)
        content = changes.get("content", post.content)
        options = networks.parse_options(changes["options"] if "options" in changes else post.options)
        if "media_urls" in changes:
            urls = list(changes["media_urls"])
            media, media_problems = inspect_media(settings, workspace_id, urls)
        else:
            urls = list(post.media_urls or [])
            media, media_problems = [MediaRef.from_dict(m) for m in post.media or []], []
        if any(k in changes for k in ("content", "media_urls", "options")):
            check_target_rules(targets, content, media, options, media_problems)
        if "media_urls" in changes:
            ids = [row.account_id for row in rows if row.account_id]
            live_ids = {
                a.id for a in Account.select(Account.id).where(Account.id.in_(ids) & (Account.kind == "live"))
            }
            check_public_media(
                targets, media, {i for i, row in enumerate(rows) if row.account_id in live_ids}, settings
            )
        if any(k in changes for k in ("content", "media_urls", "options")):
            # the networks' own checks against the account (TikTok: the privacy; Mastodon: the instance's limits)
            for t, row in zip(targets, rows, strict=True):
                if row.account_id:
                    t.account = AccountRef(row.account_id, row.platform, "active", row.account_name)
            check_against_accounts(settings, targets, options, content, media)
        for t, row in zip(targets, rows, strict=True):
            if row.account_id:
                for p in t.problems:
                    p["channelId"] = row.account_id
        in_past = schedule_problem(targets, new_at, clock.now())
        raise_problems(targets, in_past)
        with tx():
            fresh = locked(Post.select().where(Post.id == post.id)).get()
            if fresh.status not in EDITABLE:
                raise _not_editable(fresh)
            if fresh.version != post.version:
                continue  # changed since it was checked: check again against the new state
            now = clock.now()
            values: dict[Any, Any] = {Post.version: fresh.version + 1, Post.updated_at: now}
            if "content" in changes:
                values[Post.content] = content
                values[Post.content_folded] = folded(content)
            if "media_urls" in changes:
                values[Post.media_urls] = urls
                values[Post.media] = [m.to_dict() for m in media]
            if "options" in changes or "media_urls" in changes:
                values[Post.options] = stored_options(options, media, {r.platform for r in rows})
            if new_at is not None:
                values[Post.scheduled_at] = new_at
                queue.move(job_key(post.id), new_at)
            Post.update(values).where(Post.id == post.id).execute()
            if "media_urls" in changes:
                release_media(post.id)  # the hold is replaced by one on the new list
                hold_media(workspace_id, post.id, urls)
        return Post.get_by_id(post.id)
    raise ApiError(409, "post_edit_conflict", "the post kept changing while this edit was checked: retry")


def cancel(workspace_id: str, post_id: str) -> None:
    """DELETE: a scheduled post not yet sent becomes `cancelled`; its publish job is removed."""
    with tx():
        post = locked(
            Post.select().where((Post.id == post_id) & (Post.workspace == workspace_id))
        ).get_or_none()
        if post is None:
            raise ApiError(404, "post_not_found", f"post {post_id!r} not found in this workspace")
        if post.status not in EDITABLE:
            raise ApiError(
                409,
                "post_not_cancellable",
                f"post {post.id} is {post.status}: only a scheduled post not yet sent can be cancelled",
                [{"status": post.status}],
            )
        now = clock.now()
        Post.update(
            status=PostStatus.CANCELLED, cancelled_at=now, updated_at=now, version=Post.version + 1
        ).where(Post.id == post.id).execute()
        queue.cancel(job_key(post.id))
        if post.free_publication:  # nothing was published: the free publication is given back
            Workspace.update(free_posts_used=Workspace.free_posts_used - 1).where(
                (Workspace.id == workspace_id) & (Workspace.free_posts_used > 0)
            ).execute()
        release_media(post.id)
