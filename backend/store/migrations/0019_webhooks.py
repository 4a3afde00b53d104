"""Issue 16: webhook endpoints, deliveries and their attempts (docs/webhooks.md); `job.lane` widened to 60
characters for the delivery lanes (`serial:webhook:<endpoint id>`; SQLite does not enforce the length)."""

from peewee import (
    BooleanField,
    CharField,
    Database,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    JSONField,
    Model,
    SqliteDatabase,
    TextField,
)
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Workspace(Base):  # the referenced table, as far as the foreign key needs it
        id = CharField(primary_key=True, max_length=40)

    class WebhookEndpoint(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
        url = TextField()
        description = TextField(null=True)
        event_types = JSONField(default=list)
        secret = CharField(max_length=100)
        previous_secret = CharField(max_length=100, null=True)
        previous_secret_until = DateTimeField(null=True)
        secret_rotated_at = DateTimeField(null=True)
        enabled = BooleanField(default=True)
        disabled_reason = TextField(null=True)
        failing_since = DateTimeField(null=True)
        last_delivery_at = DateTimeField(null=True)
        last_status_code = IntegerField(null=True)
        created_at = DateTimeField()
        updated_at = DateTimeField()

        class Meta:
            table_name = "webhook_endpoint"
            indexes = ((("workspace", "id"), False),)

    class WebhookDelivery(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace_id = CharField(max_length=40)
        endpoint = ForeignKeyField(WebhookEndpoint, on_delete="CASCADE", index=False)
        event_id = CharField(max_length=40, index=True)
        event_type = CharField(max_length=60)
        status = CharField(max_length=12, default="pending")
        attempts = IntegerField(default=0)
        next_attempt_at = DateTimeField(null=True)
        last_status_code = IntegerField(null=True)
        last_error = TextField(null=True)
        created_at = DateTimeField()
        completed_at = DateTimeField(null=True)

        class Meta:
            table_name = "webhook_delivery"
            indexes = ((("endpoint", "id"), False), (("endpoint", "status", "id"), False))

    class WebhookAttempt(Base):
        id = CharField(primary_key=True, max_length=40)
        delivery = ForeignKeyField(WebhookDelivery, on_delete="CASCADE", index=True)
        at = DateTimeField()
        status_code = IntegerField(null=True)
        duration_ms = IntegerField()
        error = TextField(null=True)

        class Meta:
            table_name = "webhook_attempt"

    db.create_tables([WebhookEndpoint, WebhookDelivery, WebhookAttempt], safe=True)
    if not isinstance(db, SqliteDatabase):
        db.execute_sql('ALTER TABLE "job" ALTER COLUMN "lane" TYPE VARCHAR(60)')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs


def down(migrator: SchemaMigrator, db: Database) -> None:
    for table in ("webhook_attempt", "webhook_delivery", "webhook_endpoint"):
        db.execute_sql(f'DROP TABLE IF EXISTS "{table}"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
