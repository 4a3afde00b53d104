"""Publishing engine: tracking columns on targets, lateness and resolved media on posts."""

from peewee import Database, DateTimeField, IntegerField, JSONField, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    ops = []
    post_cols = _columns(db, "post")
    if "lateness_ms" not in post_cols:
        ops.append(migrator.add_column("post", "lateness_ms", IntegerField(null=True)))
    if "media" not in post_cols:
        ops.append(migrator.add_column("post", "media", JSONField(null=True)))
    target_cols = _columns(db, "post_target")
    for name, field in (
        ("tracking_ref", TextField(null=True)),
        ("call_started_at", DateTimeField(null=True)),
        ("attempts", IntegerField(default=0)),
        ("track_deadline", DateTimeField(null=True)),
        ("network_status", TextField(null=True)),
    ):
        if name not in target_cols:
            ops.append(migrator.add_column("post_target", name, field))
    if ops:
        migrator.migrate(*ops)
