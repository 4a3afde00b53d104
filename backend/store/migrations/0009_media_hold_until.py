"""A file's holds summarised without reading them all (one file may be held by thousands of posts): whether one
is without limit and the latest `until` are index seeks on (media_id, until)."""

from peewee import Database
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        'CREATE INDEX IF NOT EXISTS "media_hold_media_until" ON "media_hold" ("media_id", "until")'
    )


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP INDEX IF EXISTS "media_hold_media_until"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
