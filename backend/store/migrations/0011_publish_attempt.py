"""Issue 12: `publish_attempt`, one row per attempt to publish a target, recorded before the network call and
closed with its outcome (finished_at null: the outcome was never recorded; the next attempt reconciles)."""

from peewee import CharField, Database, DateTimeField, ForeignKeyField, Model, TextField
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class PostTarget(Base):  # the referenced tables, as far as the foreign keys need them
        id = CharField(primary_key=True, max_length=40)

        class Meta:
            table_name = "post_target"

    class Account(Base):
        id = CharField(primary_key=True, max_length=40)

        class Meta:
            table_name = "account"

    class PublishAttempt(Base):
        id = CharField(primary_key=True, max_length=40)
        target = ForeignKeyField(PostTarget, on_delete="CASCADE", index=True)
        account = ForeignKeyField(Account, null=True, on_delete="SET NULL", index=False)
        started_at = DateTimeField()
        finished_at = DateTimeField(null=True)
        outcome = TextField(null=True)

        class Meta:
            table_name = "publish_attempt"

    db.create_tables([PublishAttempt], safe=True)


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP TABLE IF EXISTS "publish_attempt"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
