"""Activity (GET /v1/activity, an extension): a workspace's publishing outcomes per local day and its latest
failures, counted in the database — a client never pages through every post to draw them.

A post counts on the local day it *finished* (`completed_at`: the moment its last target reached a final
state and the post became `completed`, `partial` or `failed`); its targets count on that same day, by their
final status. Posts still scheduled or being sent, and cancelled posts, are not outcomes and are not counted.

Days are local to an IANA zone: each runs from local midnight to the next local midnight, so a day of a DST
change lasts 23 or 25 hours. The day boundaries are computed here (the zone rules are Python's), and the
database sorts rows into days with one CASE over those boundaries: the same statement on SQLite and PostgreSQL,
exact for any zone (half-hour offsets included). Both counts and the failures read the posts of the workspace
by `(workspace_id, completed_at)` (index of migration 0014), then their targets by `(post_id, position)`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from peewee import SQL, Case, Value, fn

from backend import clock
from backend.errors import ApiError
from backend.schemas.statuses import POST_OUTCOMES, TARGET_FINAL, TARGET_SUCCESS, PostStatus, TargetStatus
from backend.store.models import Post, PostTarget

MAX_DAYS = 90
MAX_FAILURES = 100


@functools.cache
def zone_names() -> tuple[str, ...]:
    """Every zone `tz` takes: the IANA database's names as this machine has them (zoneinfo.available_timezones),
    sorted. The document states them as the parameter's enum: exactly what the API takes."""
    return tuple(sorted(available_timezones()))


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`; 400 `invalid_timezone` for a name the zone database does not know."""
    try:
        if name not in zone_names():
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ApiError(
            400,
            "invalid_timezone",
            f"{name!r} is not a time zone: use an IANA name such as Europe/Paris or UTC",
            [{"field": "tz", "error": "unknown_zone", "message": "an IANA zone name"}],
        ) from None


def local_midnight(day: date, tz: ZoneInfo) -> datetime:
    """The UTC instant a local day starts. Where midnight falls in a DST gap, the day starts at the change."""
    return datetime(day.year, day.month, day.day, tzinfo=tz).astimezone(UTC)


def day_bounds(now: datetime, days: int, tz: ZoneInfo) -> list[tuple[date, datetime, datetime]]:
    """(local date, start, end) of the last `days` local days, today last."""
    today = now.astimezone(tz).date()
    dates = [today - timedelta(days=n) for n in range(days - 1, -1, -1)]
    edges = [local_midnight(d, tz) for d in [*dates, today + timedelta(days=1)]]
    return [(d, edges[i], edges[i + 1]) for i, d in enumerate(dates)]


def _bucket(column: Any, bounds: list[tuple[date, datetime, datetime]]) -> Any:
    """The index of the day `column` falls in (the rows are already limited to the whole period)."""
    if len(bounds) == 1:
        return Value(0)  # one day: no boundary to compare with (and CASE needs at least one WHEN)
    return Case(None, [(column < end, i) for i, (_, _, end) in enumerate(bounds[:-1])], len(bounds) - 1)


def activity(
    workspace_id: str, *, days: int = 30, tz_name: str = "UTC", failures: int = 20
) -> dict[str, Any]:
    """The wire's ActivityOut (snake_case keys)."""
    tz = zone(tz_name)
    days = max(1, min(days, MAX_DAYS))
    failures = max(0, min(failures, MAX_FAILURES))
    bounds = day_bounds(clock.now(), days, tz)
    start, end = bounds[0][1], bounds[-1][2]
    finished = (
        (Post.workspace == workspace_id)
        & (Post.completed_at >= start)
        & (Post.completed_at < end)
        & Post.status.in_(POST_OUTCOMES)
    )

    post_counts = [dict.fromkeys(POST_OUTCOMES, 0) for _ in bounds]
    bucket = _bucket(Post.completed_at, bounds)
    post_rows: Iterable[tuple[int, str, int]] = (
        Post.select(bucket.alias("day"), Post.status, fn.COUNT(SQL("*")).alias("n"))
        .where(finished)
        .group_by(SQL("1"), SQL("2"))
        .tuples()
        .execute()
    )
    for i, status, n in post_rows:
        post_counts[int(i)][PostStatus(status)] += int(n)

    target_counts = [dict.fromkeys(TARGET_FINAL, 0) for _ in bounds]
    target_rows: Iterable[tuple[int, str, int]] = (
        PostTarget.select(bucket.alias("day"), PostTarget.status, fn.COUNT(SQL("*")).alias("n"))
        .join(Post, on=(PostTarget.post == Post.id))
        .where(finished & PostTarget.status.in_(TARGET_FINAL))
        .group_by(SQL("1"), SQL("2"))
        .tuples()
        .execute()
    )
    for i, status, n in target_rows:
        target_counts[int(i)][TargetStatus(status)] += int(n)

    failed: list[dict[str, Any]] = []
    if failures:
        q = (
            PostTarget.select(
                PostTarget.post,
                PostTarget.platform,
                PostTarget.account,
                PostTarget.account_name,
                PostTarget.fail_reason,
                PostTarget.fail_type,
                PostTarget.completed_at,
            )
            .join(Post, on=(PostTarget.post == Post.id))
            .where(
                finished
                & Post.status.in_((PostStatus.PARTIAL, PostStatus.FAILED))
                & (PostTarget.status == TargetStatus.FAILED)
            )
            .order_by(PostTarget.completed_at.desc(), PostTarget.id.desc())
            .limit(failures)
        )
        failed = [
            {
                "post_id": t.post_id,
                "platform": t.platform,
                "account_id": t.account_id,
                "account_name": t.account_name,
                "fail_reason": t.fail_reason,
                "fail_type": t.fail_type,
                "completed_at": clock.iso(t.completed_at),
            }
            for t in q
        ]

    total_posts = {s: sum(c[s] for c in post_counts) for s in POST_OUTCOMES}
    total_targets = {s: sum(c[s] for c in target_counts) for s in TARGET_FINAL}
    done = sum(total_targets.values())
    return {
        "days": days,
        "timezone": tz_name,
        "start": clock.iso(start),
        "end": clock.iso(end),
        "per_day": [
            {
                "date": d.isoformat(),
                "start": clock.iso(s),
                "end": clock.iso(e),
                "posts": post_counts[i],
                "targets": target_counts[i],
            }
            for i, (d, s, e) in enumerate(bounds)
        ],
        "totals": {
            "posts": total_posts,
            "targets": total_targets,
            "success_rate": (sum(total_targets[s] for s in TARGET_SUCCESS) / done) if done else None,
        },
        "failures": failed,
    }
