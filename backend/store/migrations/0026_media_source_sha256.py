"""`media.source_sha256`: the sha256 of the bytes as they were sent (an upload's, a URL's), where `sha256` is the
stored file's (images are re-encoded). `GET /v1/media?sourceSha256=` finds an upload of the same content from any
client (recipes: several machines applying one folder to one server reuse each other's uploads and never see
them as changed media). Files ingested before this migration have none."""

from peewee import CharField, Database
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "source_sha256" not in _columns(db, "media"):
        migrator.migrate(migrator.add_column("media", "source_sha256", CharField(max_length=64, null=True)))
    db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        'CREATE INDEX IF NOT EXISTS "media_workspace_source_sha256" ON "media" ("workspace_id", '
        '"source_sha256")'
    )


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP INDEX IF EXISTS "media_workspace_source_sha256"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
    if "source_sha256" in _columns(db, "media"):
        migrator.migrate(migrator.drop_column("media", "source_sha256"))
