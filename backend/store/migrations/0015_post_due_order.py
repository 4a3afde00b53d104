"""Issue 13: GET /v1/posts?order=upcoming — scheduled posts soonest first, then the others most recent first,
both by the post's due time COALESCE(scheduled_at, created_at), ties by id. One partial index per section, so
each page is read in index order (no sort of the workspace's posts) at any number of posts. The same SQL on
SQLite and PostgreSQL (both have expression and partial indexes).

The default order (newest first, by id) gets its own index too: with only (workspace_id, …) indexes to pick
from, a page of a workspace's posts was read by sorting all of them (~370 ms at 100,000 posts on SQLite)."""

from peewee import Database
from playhouse.migrate import SchemaMigrator

_DUE = '("workspace_id", COALESCE("scheduled_at", "created_at"), "id")'
_INDEXES = {
    "post_due_scheduled": f"{_DUE} WHERE \"status\" = 'scheduled'",
    "post_due_other": f"{_DUE} WHERE \"status\" <> 'scheduled'",
    "post_workspace_newest": '("workspace_id", "id")',
}


def up(migrator: SchemaMigrator, db: Database) -> None:
    for name, definition in _INDEXES.items():
        db.execute_sql(f'CREATE INDEX IF NOT EXISTS "{name}" ON "post" {definition}')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs


def down(migrator: SchemaMigrator, db: Database) -> None:
    for name in _INDEXES:
        db.execute_sql(f'DROP INDEX IF EXISTS "{name}"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
