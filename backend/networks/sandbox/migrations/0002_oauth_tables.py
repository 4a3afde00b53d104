"""The emulators' OAuth side: grants, issued credentials (by hash), switches. Frozen copies of the models."""

from peewee import CharField, Database, DateTimeField, JSONField, Model
from playhouse.migrate import SchemaMigrator


def _models(db: Database) -> list[type[Model]]:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class EmulatorGrant(Base):
        id = CharField(primary_key=True, max_length=40)
        platform = CharField(max_length=20)
        subject = CharField(max_length=80)
        account_ids = JSONField(default=list)
        client_id = CharField(max_length=200, default="")
        scopes = JSONField(default=list)
        state = CharField(max_length=20, default="active")
        refresh_expires_at = DateTimeField(null=True)
        created_at = DateTimeField()

        class Meta:
            table_name = "emulator_grant"

    class EmulatorToken(Base):
        id = CharField(primary_key=True, max_length=64)
        platform = CharField(max_length=20)
        grant_id = CharField(max_length=40, null=True)
        kind = CharField(max_length=20)
        account_id = CharField(max_length=40, null=True)
        expires_at = DateTimeField(null=True)
        state = CharField(max_length=20, default="active")
        data = JSONField(default=dict)
        created_at = DateTimeField()

        class Meta:
            table_name = "emulator_token"
            indexes = ((("grant_id",), False),)

    class EmulatorSetting(Base):
        key = CharField(primary_key=True, max_length=200)
        value = JSONField(default=dict)

        class Meta:
            table_name = "emulator_setting"

    return [EmulatorGrant, EmulatorToken, EmulatorSetting]


def up(migrator: SchemaMigrator, db: Database) -> None:
    db.create_tables(_models(db))


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.drop_tables(_models(db))
