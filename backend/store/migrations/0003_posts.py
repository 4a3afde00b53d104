"""Posts: connected accounts, posts and their targets. Frozen copies of the models as of this version."""

from peewee import (
    BooleanField,
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
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
        platform = CharField(max_length=20)
        name = CharField(max_length=200)
        username = CharField(max_length=200, default="")
        kind = CharField(max_length=10, default="sandbox")
        status = CharField(max_length=16, default="active")
        behaviour = CharField(max_length=20, null=True)
        external_id = CharField(max_length=200, default="")
        access_token = TextField(default="")
        token_expires_at = DateTimeField(null=True)
        connected_at = DateTimeField()
        disconnected_at = DateTimeField(null=True)
        created_at = DateTimeField()

        class Meta:
            indexes = ((("workspace", "platform", "connected_at"), False),)

    class Post(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
        status = CharField(max_length=12)
        content = TextField()
        media_urls = JSONField(default=list)
        media = JSONField(default=list)
        options = JSONField(default=dict)
        scheduled_at = DateTimeField(null=True)
        idempotency_key = CharField(max_length=200, null=True)
        free_publication = BooleanField(default=False)
        version = IntegerField(default=1)
        sent_at = DateTimeField(null=True)
        completed_at = DateTimeField(null=True)
        cancelled_at = DateTimeField(null=True)
        created_at = DateTimeField()
        updated_at = DateTimeField()

        class Meta:
            indexes = (
                (("workspace", "idempotency_key"), True),
                (("workspace", "status"), False),
                (("workspace", "scheduled_at"), False),
            )

    class PostTarget(Base):
        id = CharField(primary_key=True, max_length=40)
        post = ForeignKeyField(Post, on_delete="CASCADE")
        position = IntegerField()
        platform = CharField(max_length=20)
        account = ForeignKeyField(Account, null=True, on_delete="SET NULL", index=True)
        account_name = CharField(max_length=200)
        status = CharField(max_length=16, default="pending")
        external_post_id = CharField(max_length=300, null=True)
        post_url = TextField(null=True)
        fail_reason = TextField(null=True)
        fail_type = CharField(max_length=10, null=True)
        idempotency_token = CharField(max_length=64, unique=True)
        started_at = DateTimeField(null=True)
        completed_at = DateTimeField(null=True)
        updated_at = DateTimeField()

        class Meta:
            indexes = ((("post", "position"), True), (("platform", "status"), False))

    db.create_tables([Account, Post, PostTarget])
