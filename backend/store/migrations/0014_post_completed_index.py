"""Issue 13: GET /v1/activity reads a workspace's posts by the time they finished: index
`post (workspace_id, completed_at)`, so counting 30 days of outcomes is a range scan, not a pass over every
post of the workspace."""

from peewee import Database
from playhouse.migrate import SchemaMigrator

INDEX = "post_workspace_id_completed_at"


def up(migrator: SchemaMigrator, db: Database) -> None:
    if INDEX not in {i.name for i in db.get_indexes("post")}:
        db.execute_sql(f'CREATE INDEX "{INDEX}" ON "post" ("workspace_id", "completed_at")')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql(f'DROP INDEX IF EXISTS "{INDEX}"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
