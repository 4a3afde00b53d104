"""Issue 30, item 3: `post_target.progress_ref`, what a network holds of an attempt still under way (an Instagram
container, a YouTube upload session), saved by the adapter as soon as the network created it: an interrupted
attempt's successor continues from it instead of opening a new one that costs quota."""

from peewee import Database, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "progress_ref" not in _columns(db, "post_target"):
        migrator.migrate(migrator.add_column("post_target", "progress_ref", TextField(null=True)))


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "progress_ref" in _columns(db, "post_target"):
        migrator.migrate(migrator.drop_column("post_target", "progress_ref"))
