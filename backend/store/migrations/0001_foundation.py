"""Foundation: workspace, owner, api keys, rate counters, jobs. Frozen copies of the models as of this version."""

from peewee import (
    BigIntegerField,
    CharField,
    CompositeKey,
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
        name = CharField(max_length=200)
        description = TextField(default="")
        currency = CharField(max_length=3, default="USD")
        logo_url = TextField(default="")
        brand = JSONField(default=dict)
        plan_subscribed = CharField(max_length=20, null=True)
        plan_status = CharField(max_length=20, null=True)
        plan_period_end = DateTimeField(null=True)
        credits_balance = IntegerField(default=0)
        credits_granted_at = DateTimeField(null=True)
        free_posts_used = IntegerField(default=0)
        created_at = DateTimeField()

    class Owner(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
        email = CharField(max_length=320, unique=True)
        password_hash = CharField(max_length=300)
        created_at = DateTimeField()

    class ApiKey(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
        name = CharField(max_length=200)
        key_prefix = CharField(max_length=40)
        key_hash = CharField(max_length=64, unique=True)
        scopes = JSONField(default=list)
        expires_at = DateTimeField(null=True)
        last_used_at = DateTimeField(null=True)
        revoked_at = DateTimeField(null=True)
        created_at = DateTimeField()

    class RateCounter(Base):
        bucket = CharField(max_length=80)
        window = BigIntegerField()
        count = IntegerField(default=0)

        class Meta:
            primary_key = CompositeKey("bucket", "window")

    class Job(Base):
        id = CharField(primary_key=True, max_length=40)
        kind = CharField(max_length=60)
        payload = JSONField(default=dict)
        status = CharField(max_length=12, default="queued")
        run_at = DateTimeField()
        attempts = IntegerField(default=0)
        max_attempts = IntegerField(default=5)
        lease_until = DateTimeField(null=True)
        locked_by = CharField(max_length=80, null=True)
        last_error = TextField(null=True)
        dedupe_key = CharField(max_length=120, null=True, unique=True)
        workspace_id = CharField(max_length=40, null=True, index=True)
        created_at = DateTimeField()
        updated_at = DateTimeField()

        class Meta:
            indexes = ((("status", "run_at"), False),)

    db.create_tables([Workspace, Owner, ApiKey, RateCounter, Job])
