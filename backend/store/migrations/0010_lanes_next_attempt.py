"""Issue 12: jobs carry a `lane` (the network a target job talks to, so one slow network cannot take every
worker slot); targets show when their next attempt is due (`next_attempt_at`, null when none is planned)."""

from peewee import CharField, Database, DateTimeField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    ops = []
    if "lane" not in _columns(db, "job"):
        ops.append(migrator.add_column("job", "lane", CharField(max_length=20, null=True)))
    if "next_attempt_at" not in _columns(db, "post_target"):
        ops.append(migrator.add_column("post_target", "next_attempt_at", DateTimeField(null=True)))
    if ops:
        migrator.migrate(*ops)


def down(migrator: SchemaMigrator, db: Database) -> None:
    migrator.migrate(
        migrator.drop_column("job", "lane"), migrator.drop_column("post_target", "next_attempt_at")
    )
