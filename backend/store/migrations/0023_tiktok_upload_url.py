"""Issue 17 item 4, the dedicated TikTok video by bytes: `tiktok_publish.upload_url`, TikTok's FILE_UPLOAD URL kept
(encrypted, `enc:v1:`) while the `tiktok.upload` job sends the chunks (docs/tiktok.md)."""

from peewee import Database, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "upload_url" not in _columns(db, "tiktok_publish"):
        migrator.migrate(migrator.add_column("tiktok_publish", "upload_url", TextField(null=True)))


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "upload_url" in _columns(db, "tiktok_publish"):
        migrator.migrate(migrator.drop_column("tiktok_publish", "upload_url"))
