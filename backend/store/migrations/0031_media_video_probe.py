"""Issue 30 item 4: videos are probed at ingestion (backend/media/probe.py). What the probe read is kept with the
file: `duration_ms`, `frame_rate`, `video_codec`, `audio_codec` (and `width`, `height`, until now an image's only),
so that each network's video rules (duration, size, dimensions, aspect, frame rate, codec) are checked per target
when a post is created. A video ingested before this migration has none: its rules are left to the network."""

from peewee import CharField, Database, FloatField, IntegerField
from playhouse.migrate import SchemaMigrator

_COLUMNS = {
    "duration_ms": IntegerField(null=True),
    "frame_rate": FloatField(null=True),
    "video_codec": CharField(max_length=30, null=True),
    "audio_codec": CharField(max_length=30, null=True),
}


def _columns(db: Database) -> set[str]:
    return {c.name for c in db.get_columns("media")}


def up(migrator: SchemaMigrator, db: Database) -> None:
    present = _columns(db)
    missing = [
        migrator.add_column("media", name, field) for name, field in _COLUMNS.items() if name not in present
    ]
    if missing:
        migrator.migrate(*missing)


def down(migrator: SchemaMigrator, db: Database) -> None:
    present = _columns(db)
    gone = [migrator.drop_column("media", name) for name in _COLUMNS if name in present]
    if gone:
        migrator.migrate(*gone)
