"""Many posts in the store at once, for the tests and the benchmark of the posts list (10,000 to 100,000).

Rows are written with `insert_many` through the peewee models: the same columns a post accepted through the
API has (targets on the workspace's sandbox accounts, ids that sort in creation order), without publish jobs —
the posts are either already final (completed, partial, failed, cancelled) or scheduled far enough ahead that
no worker picks them up during a test. The store must be bound first (an embedded backend started on the data
dir, or `init_database`).

    made = insert_posts(workspace_id, 10_000, now=FIXED_NOW)   # -> BulkPosts (ids by order, texts)
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from peewee import Node

WORDS = (
    "launch",
    "spring",
    "webinar",
    "recipe",
    "café",
    "release",
    "offer",
    "team",
    "hiring",
    "event",
    "tutorial",
    "podcast",
    "newsletter",
    "sale",
    "update",
    "behind the scenes",
    "customer story",
)


@dataclass
class BulkPosts:
    workspace_id: str
    scheduled: list[str] = field(default_factory=list)  # soonest first (the order=upcoming head)
    past: list[str] = field(default_factory=list)  # most recent first (the order=upcoming tail)
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def upcoming(self) -> list[str]:
        """Every id in `order=upcoming` order."""
        return self.scheduled + self.past


def insert_posts(
    workspace_id: str,
    count: int,
    *,
    now: datetime | None = None,
    scheduled_share: float = 0.1,
    seed: int = 13,
    chunk: int = 2000,
    text: Callable[[int], str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> BulkPosts:
    """`count` posts: `scheduled_share` of them scheduled one hour apart from `now` + 1 day on, the rest
    created one minute apart before `now` (newest first), final. Post n's text is `text(n)` (default: a
    numbered two-line text, `#n …`)."""
    from backend.ids import new_id
    from backend.store.db import tx
    from backend.store.models import Account, Post, PostTarget
    from backend.store.models.posts import folded

    rng = random.Random(seed)
    now = (now or datetime.now(UTC)).astimezone(UTC)
    accounts = list(
        Account.select()
        .where((Account.workspace == workspace_id) & (Account.status == "active"))
        .order_by(Account.connected_at)
    )
    if not accounts:
        raise ValueError("the workspace has no active account to target")
    made = BulkPosts(workspace_id)
    n_scheduled = int(count * scheduled_share)
    # (created_at, scheduled_at, status): created oldest first, so that ids (time-sortable) follow creation
    plan: list[tuple[datetime, datetime | None, str]] = []
    for i in range(count - n_scheduled):
        created = now - timedelta(minutes=count - n_scheduled - i)
        plan.append(
            (
                created,
                None,
                rng.choice(("completed", "completed", "completed", "partial", "failed", "cancelled")),
            )
        )
    for i in range(n_scheduled):
        plan.append((now - timedelta(seconds=n_scheduled - i), now + timedelta(days=1, hours=i), "scheduled"))
    rows: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for n, (created, scheduled_at, status) in enumerate(plan):
        pid = new_id("post", at_ms=int(created.timestamp() * 1000))
        body = text(n) if text else f"#{n} {rng.choice(WORDS)} {rng.choice(WORDS)}\nsecond line of post {n}"
        made.texts[pid] = body
        (made.scheduled if status == "scheduled" else made.past).append(pid)
        picked = rng.sample(accounts, rng.randint(1, min(3, len(accounts))))
        targets = []
        for position, acc in enumerate(picked):
            t_status = {
                "scheduled": "pending",
                "completed": "succeeded",
                "failed": "failed",
                "cancelled": "pending",
            }.get(status) or ("succeeded" if position == 0 else "failed")
            targets.append(
                {
                    "id": new_id("tgt"),
                    "post": pid,
                    "position": position,
                    "platform": acc.platform,
                    "account": acc.id,
                    "account_name": acc.name,
                    "status": t_status,
                    "idempotency_token": new_id("pub"),
                    "updated_at": created,
                    "fail_reason": "bulk: failed" if t_status == "failed" else None,
                    "fail_type": "permanent" if t_status == "failed" else None,
                    "completed_at": created if t_status in ("succeeded", "failed") else None,
                }
            )
        rows.append(
            (
                {
                    "id": pid,
                    "workspace": workspace_id,
                    "status": status,
                    "content": body,
                    "content_folded": folded(body),
                    "media_urls": [],
                    "media": [],
                    "options": {},
                    "scheduled_at": scheduled_at,
                    "idempotency_key": None,
                    "free_publication": False,
                    "version": 1,
                    "created_at": created,
                    "updated_at": created,
                    "cancelled_at": created if status == "cancelled" else None,
                },
                targets,
            )
        )
    made.past.reverse()  # most recent first
    for start in range(0, len(rows), chunk):
        part = rows[start : start + chunk]
        with tx():
            _insert(Post, [p for p, _ in part])
            _insert(PostTarget, [t for _, ts in part for t in ts])
        if progress:
            progress(start + len(part))
    from backend.store.db import database, is_sqlite

    if not is_sqlite():
        database.obj.execute_sql(
            'ANALYZE "post", "post_target"'
        )  # as autovacuum would, soon after such a load
    return made


def _insert(model: Any, rows: list[dict[str, Any]]) -> None:
    """One parameterised INSERT run for every row (executemany): building a multi-row INSERT with peewee costs
    ~0.5 ms a row, which is most of the set-up time at 100,000 posts. Values go through the fields' db_value,
    as a peewee insert would convert them; columns left out take their defaults."""
    from backend.store.db import database

    fields = [model._meta.fields[name] for name in rows[0]]
    for name, f in model._meta.fields.items():
        if name not in rows[0] and f.default is not None:
            fields.append(f)
    db = database.obj
    quote = '"'
    columns = ", ".join(quote + f.column_name + quote for f in fields)
    params = ", ".join([db.param] * len(fields))
    sql = f'INSERT INTO "{model._meta.table_name}" ({columns}) VALUES ({params})'

    def value(f: Any, row: dict[str, Any]) -> Any:
        raw = row[f.name] if f.name in row else (f.default() if callable(f.default) else f.default)
        converted = f.db_value(raw)
        return json.dumps(raw) if isinstance(converted, Node) else converted  # a JSON column: its text

    db.cursor().executemany(sql, [[value(f, row) for f in fields] for row in rows])
