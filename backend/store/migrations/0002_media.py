"""Media: ingested/generated files and retention holds. Frozen copies of the models as of this version."""

from peewee import (
    BigIntegerField,
    CharField,
    Database,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
)
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Workspace(Base):
        id = CharField(primary_key=True, max_length=40)

    class Media(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
        key = CharField(max_length=200, unique=True)
        type = CharField(max_length=10)
        mime_type = CharField(max_length=60)
        bytes = BigIntegerField()
        width = IntegerField(null=True)
        height = IntegerField(null=True)
        sha256 = CharField(max_length=64)
        origin = CharField(max_length=12)
        source_url = TextField(null=True)
        created_at = DateTimeField()
        expires_at = DateTimeField(null=True, index=True)

    class MediaHold(Base):
        media = ForeignKeyField(Media, on_delete="CASCADE")
        ref = CharField(max_length=120, index=True)
        until = DateTimeField(null=True)
        created_at = DateTimeField()

        class Meta:
            indexes = ((("media", "ref"), True),)

    db.create_tables([Media, MediaHold])
