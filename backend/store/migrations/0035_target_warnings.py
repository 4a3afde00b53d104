"""Issue 29: `post_target.warnings`, what the user must know about a target that went through not quite as asked
(YouTube locked the video private, TikTok posted it SELF_ONLY): a JSON list of `{code, message}`, NULL when none.
The API answers it as the target's `warnings` (`[]` when NULL)."""

from peewee import Database, JSONField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "warnings" not in _columns(db, "post_target"):
        migrator.migrate(migrator.add_column("post_target", "warnings", JSONField(null=True)))


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "warnings" in _columns(db, "post_target"):
        migrator.migrate(migrator.drop_column("post_target", "warnings"))
