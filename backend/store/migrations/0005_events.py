"""Event outbox (frozen copy)."""

from peewee import CharField, Database, DateTimeField, JSONField, Model
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    class Event(Model):
        id = CharField(primary_key=True, max_length=40)
        workspace_id = CharField(max_length=40, index=True)
        type = CharField(max_length=60)
        data = JSONField(default=dict)
        subject_id = CharField(max_length=40, null=True, index=True)
        created_at = DateTimeField()
        delivered_at = DateTimeField(null=True)

        class Meta:
            database = db
            legacy_table_names = False

    db.create_tables([Event])
