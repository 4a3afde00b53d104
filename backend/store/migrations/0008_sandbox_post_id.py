"""Sandbox items found by their network-side id (post_id: a Facebook photo/video id, a LinkedIn upload id) without
scanning the table: a partial index, only over the rows that have one."""

from peewee import Database
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        'CREATE INDEX IF NOT EXISTS "sandbox_item_post_id" ON "sandbox_item" ("post_id") '
        'WHERE "post_id" IS NOT NULL'
    )


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP INDEX IF EXISTS "sandbox_item_post_id"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
