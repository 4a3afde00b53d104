"""The post list (extension GET /v1/posts): a PostQuery's filters, cursor pagination in index order, newest
first or upcoming."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from peewee import SQL, ColumnBase, ModelSelect, NodeList, fn

from backend.errors import ApiError
from backend.schemas.posts import LABEL_KEY_PATTERN, LABEL_VALUE_MAX, MAX_LABELS, PostQuery
from backend.schemas.statuses import PostStatus
from backend.services import cursors
from backend.services.posts.checks import parse_timestamp
from backend.services.posts.public import targets_of, to_public
from backend.store.models import Post, PostLabel, PostTarget
from backend.store.models.posts import folded

# order=upcoming: the scheduled posts first, soonest due first, then every other post, most recent first, both
# by the post's due time: `scheduledAt`, or `createdAt` for a post published at once (what `timeField=dueAt`
# filters on). Ties are broken by id, so the order is total and a cursor (section, due time, id) is a stable
# position in it. Two partial indexes (migration 0015) serve each section in index order. The status values
# are written into the SQL as literals so that the query planner can match the partial indexes' conditions.
_DUE = fn.COALESCE(Post.scheduled_at, Post.created_at)
_SCHEDULED = SQL("'scheduled'")


# A page's position in the list: (section `s` or `r`, the due time as the store compares it, the post id).
_Position = tuple[str, datetime | str | None, str]


def _due_of(post: Post) -> datetime:
    due: datetime = post.scheduled_at or post.created_at
    return due


def _position(post: Post) -> tuple[str, datetime, str]:
    return ("s" if post.status == PostStatus.SCHEDULED else "r"), _due_of(post), post.id


def _decode_cursor(cursor: str) -> _Position:
    """(section `s` or `r`, the due time as the store compares it, the post id); 400 invalid_cursor otherwise."""
    section, due, post_id = cursors.decode_position(cursor, "GET /v1/posts")
    return section, Post.scheduled_at.db_value(due), post_id


def _text_matches(q: str) -> NodeList:
    """Case-insensitive substring of the text (`q` taken literally: `%` and `_` are not wildcards): the folded
    query in the folded text (backend.store.models.posts.folded), the same comparison on SQLite and PostgreSQL."""
    pattern = "%" + re.sub(r"([!%_])", r"!\1", folded(q)) + "%"
    return NodeList((Post.content_folded, SQL("LIKE"), pattern, SQL("ESCAPE '!'")))


def list_posts(workspace_id: str, query: PostQuery) -> dict[str, Any]:
    """`order=newest` (default): newest first (ids are time-sortable: id order is creation order).
    `order=upcoming`: scheduled posts soonest first, then the others most recent first (see _DUE).
    Cursor pagination; `q`: a case-insensitive substring of the text; `label`: `KEY=VALUE` each, all must
    match."""
    limit, cursor, q, time_field = query.limit, query.cursor, query.q, query.time_field
    statuses, labels, idempotency_key = query.status, query.label, query.idempotency_key
    platform, account_id, since, until = query.platform, query.account_id, query.since, query.until
    upcoming = query.order == "upcoming"
    position = _decode_cursor(cursor) if cursor is not None else None
    q_ = Post.select().where(Post.workspace == workspace_id)
    if position is not None and not upcoming:
        q_ = q_.where(Post.id < position[2])
    if statuses:
        q_ = q_.where(Post.status.in_(list(statuses)))
    if idempotency_key is not None:
        q_ = q_.where(Post.idempotency_key == idempotency_key)
    if labels and len(labels) > MAX_LABELS:
        raise ApiError(
            400,
            "validation_error",
            f"at most {MAX_LABELS} label filters",
            [{"field": "label", "error": "too_many", "message": f"at most {MAX_LABELS}"}],
        )
    for key, value in (parse_label(text) for text in labels or ()):
        q_ = q_.where(
            Post.id.in_(
                PostLabel.select(PostLabel.post).where(
                    (PostLabel.workspace == workspace_id)
                    & (PostLabel.key == key)
                    & (PostLabel.value == value)
                )
            )
        )
    if platform is not None or account_id is not None:
        # EXISTS, probed row by row as the page is read in index order (an IN list would read every target
        # of the network first: ~75 ms a page at 100,000 posts)
        sub = PostTarget.select(SQL("1")).where(PostTarget.post == Post.id)
        if platform is not None:
            sub = sub.where(PostTarget.platform == platform)
        if account_id is not None:
            sub = sub.where(PostTarget.account == account_id)
        q_ = q_.where(fn.EXISTS(sub))
    column = {"scheduledAt": Post.scheduled_at, "dueAt": _DUE}.get(time_field, Post.created_at)
    if since is not None:
        q_ = q_.where(column >= _bound(column, parse_timestamp(since, "from")))
    if until is not None:
        q_ = q_.where(column < _bound(column, parse_timestamp(until, "to")))
    if q:
        q_ = q_.where(_text_matches(q))
    if not upcoming:
        rows = list(q_.order_by(Post.id.desc()).limit(limit + 1))
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = cursors.encode_position(*_position(rows[-1])) if more and rows else None
    else:
        rows, next_cursor = _upcoming_page(q_, limit, position, statuses)
    by_post = targets_of([p.id for p in rows])
    return {"items": [to_public(p, by_post[p.id]) for p in rows], "nextCursor": next_cursor}


def parse_label(text: str) -> tuple[str, str]:
    """A `label` filter, `KEY=VALUE` (the value may itself hold `=`); 400 validation_error otherwise."""
    key, sep, value = text.partition("=")
    if not sep or not re.fullmatch(LABEL_KEY_PATTERN, key) or len(value) > LABEL_VALUE_MAX:
        raise ApiError(
            400,
            "validation_error",
            "label is KEY=VALUE: a label key (lowercase letters, digits and ._/-) and its value",
            [{"field": "label", "error": "invalid", "message": f"not KEY=VALUE: {text[:120]!r}"}],
        )
    return key, value


def _bound(column: ColumnBase, instant: datetime) -> datetime | str | None:
    """A time bound as the store compares it with `column` (a field converts its own; the due-time expression
    is compared with the value the fields store)."""
    return instant if column is not _DUE else Post.scheduled_at.db_value(instant)


def _upcoming_page(
    query: ModelSelect[Post], limit: int, position: _Position | None, statuses: Sequence[str] | None
) -> tuple[list[Post], str | None]:
    section, due, after = position or ("s", None, None)
    rows: list[Post] = []
    if section == "s" and (not statuses or PostStatus.SCHEDULED in statuses):
        first = query.where(Post.status == _SCHEDULED)
        if due is not None:  # (due, id) > the cursor's, written so that `due >= …` bounds the index range
            first = first.where((_DUE >= due) & ((_DUE > due) | (Post.id > after)))
        rows = list(first.order_by(_DUE.asc(), Post.id.asc()).limit(limit + 1))
    scheduled = len(rows)
    if len(rows) <= limit and (not statuses or set(statuses) != {PostStatus.SCHEDULED}):
        rest = query.where(Post.status != _SCHEDULED)
        if section == "r":
            rest = rest.where((_DUE <= due) & ((_DUE < due) | (Post.id < after)))
        rows += list(rest.order_by(_DUE.desc(), Post.id.desc()).limit(limit + 1 - len(rows)))
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    last = rows[-1]
    return rows, cursors.encode_position("s" if len(rows) <= scheduled else "r", _due_of(last), last.id)
