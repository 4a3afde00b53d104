"""Issue 33 item 7: `generation.background_url`, a user's own photo set as the background of an image made by the
local renderer (an "announcement card": `backgroundUrl` of POST /v1/generations, an extension)."""

from peewee import Database, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "background_url" not in _columns(db, "generation"):
        migrator.migrate(migrator.add_column("generation", "background_url", TextField(null=True)))


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "background_url" in _columns(db, "generation"):
        migrator.migrate(migrator.drop_column("generation", "background_url"))
