"""Issue 15 item 13: `POST /v1/generations` takes an optional `idempotencyKey` (an extension). The key is stored
on the generation; UNIQUE (workspace, idempotency_key) decides races (NULLs are distinct: a generation without a
key never conflicts). Deleting a generation clears its key, so the key can make a new one."""

from peewee import CharField, Database
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "idempotency_key" not in _columns(db, "generation"):
        migrator.migrate(
            migrator.add_column("generation", "idempotency_key", CharField(max_length=200, null=True))
        )
    db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        'CREATE UNIQUE INDEX IF NOT EXISTS "generation_workspace_id_idempotency_key" '
        'ON "generation" ("workspace_id", "idempotency_key")'
    )


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP INDEX IF EXISTS "generation_workspace_id_idempotency_key"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
    migrator.migrate(migrator.drop_column("generation", "idempotency_key"))
