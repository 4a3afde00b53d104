"""Dedicated TikTok publications. Frozen copy of the model as of this version."""

from peewee import (
    CharField,
    Database,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    JSONField,
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

        class Meta:
            table_name = "workspace"

    class Account(Base):
        id = CharField(primary_key=True, max_length=40)

        class Meta:
            table_name = "account"

    class TikTokPublish(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
        account = ForeignKeyField(Account, null=True, on_delete="SET NULL", index=True)
        kind = CharField(max_length=8)
        post_mode = CharField(max_length=16)
        publish_id = CharField(max_length=100, null=True, unique=True)
        status = CharField(max_length=24, default="INITIATING")
        title = TextField(default="")
        description = TextField(default="")
        media_urls = JSONField(default=list)
        post_info = JSONField(default=dict)
        fail_reason = CharField(max_length=80, null=True)
        fail_message = TextField(null=True)
        public_post_ids = JSONField(default=list)
        downloaded_bytes = IntegerField(null=True)
        checks = IntegerField(default=0)
        checked_at = DateTimeField(null=True)
        track_deadline = DateTimeField(null=True)
        created_at = DateTimeField()
        updated_at = DateTimeField()
        completed_at = DateTimeField(null=True)

        class Meta:
            table_name = "tiktok_publish"
            indexes = ((("workspace", "created_at"), False), (("status",), False))

    if "tiktok_publish" not in db.get_tables():
        db.create_tables([TikTokPublish])
