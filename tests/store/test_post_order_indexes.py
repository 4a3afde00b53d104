"""Migration 0015: the post list reads a page in index order, whatever the number of posts — no sort of the
workspace's posts for `order=newest` nor `order=upcoming` (SQLite's plan is checked; PostgreSQL's depends on
its statistics, so there only the indexes are checked). Timings at 100,000 posts: bench/tui.py."""

from __future__ import annotations

import pytest

from backend.schemas.posts import PostQuery
from backend.store.db import database, is_sqlite

INDEXES = {"post_due_scheduled", "post_due_other", "post_workspace_newest"}


def test_the_indexes_exist(settings):
    assert INDEXES <= {i.name for i in database.obj.get_indexes("post")}


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"cursor": "newest"},
        {"order": "upcoming"},
        {"order": "upcoming", "cursor": "upcoming"},
        {"order": "upcoming", "status": ["failed", "completed"]},
        {"order": "upcoming", "platform": "tiktok"},
        {"order": "upcoming", "q": "sale"},
    ],
)
def test_a_page_is_read_in_index_order(settings, owner, monkeypatch, params):
    from backend.services import accounts
    from backend.services.posts import query
    from tests.support.bulk_posts import insert_posts

    if not is_sqlite():
        pytest.skip("the plan is checked on SQLite")
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    insert_posts(owner.workspace_id, 300)
    cursors = {
        "newest": query.list_posts(owner.workspace_id, PostQuery(limit=5))["nextCursor"],
        "upcoming": query.list_posts(owner.workspace_id, PostQuery(limit=5, order="upcoming"))["nextCursor"],
    }
    if "cursor" in params:
        params = params | {"cursor": cursors[params["cursor"]]}
    plans: list[str] = []
    db = database.obj
    execute = db.execute_sql

    def explain(sql, params=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        if sql.startswith("SELECT") and 'FROM "post" AS' in sql:
            plans.append(
                " / ".join(row[3] for row in execute("EXPLAIN QUERY PLAN " + sql, params).fetchall())
            )
        return execute(sql, params, *args, **kwargs)

    monkeypatch.setattr(db, "execute_sql", explain)
    query.list_posts(owner.workspace_id, PostQuery(limit=20, **params))
    assert plans
    for plan in plans:
        assert "TEMP B-TREE" not in plan, plan
        assert any(name in plan for name in INDEXES), plan
