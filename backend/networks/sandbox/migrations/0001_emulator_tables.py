"""The emulators' accounts and items. Frozen copies of the models as of this version."""

from peewee import (
    BooleanField,
    CharField,
    Database,
    DateTimeField,
    FloatField,
    IntegerField,
    JSONField,
    Model,
    TextField,
)
from playhouse.migrate import SchemaMigrator


def _models(db: Database) -> list[type[Model]]:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class EmulatorAccount(Base):
        id = CharField(primary_key=True, max_length=40)
        platform = CharField(max_length=20)
        external_id = CharField(max_length=80)
        token_hash = CharField(max_length=64, unique=True)
        name = CharField(max_length=200)
        username = CharField(max_length=120)
        display_name = CharField(max_length=200)
        behaviour = CharField(max_length=20, default="ok")
        is_private = BooleanField(default=False)
        privacy_level_options = JSONField(default=list)
        calls = IntegerField(default=0)
        created_at = DateTimeField()

        class Meta:
            table_name = "emulator_account"
            indexes = ((("platform", "external_id"), True),)

    class EmulatorItem(Base):
        id = CharField(primary_key=True, max_length=120)
        platform = CharField(max_length=20)
        account_id = CharField(max_length=40)
        kind = CharField(max_length=20)
        mode = CharField(max_length=40, default="")
        text = TextField(default="")
        title = TextField(default="")
        media = JSONField(default=list)
        data = JSONField(default=dict)
        outcome = CharField(max_length=60, default="ok")
        post_id = CharField(max_length=120, null=True)
        url = TextField(null=True)
        state = CharField(max_length=30, default="")
        started_at = DateTimeField()
        processing_s = FloatField(default=0.0)
        created_at = DateTimeField()

        class Meta:
            table_name = "emulator_item"
            indexes = ((("platform", "account_id", "kind", "created_at"), False),)

    EmulatorItem.add_index(EmulatorItem.post_id, where=EmulatorItem.post_id.is_null(False))
    return [EmulatorAccount, EmulatorItem]


def up(migrator: SchemaMigrator, db: Database) -> None:
    db.create_tables(_models(db))  # IF NOT EXISTS: product migration 0012 may have made them already


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.drop_tables(_models(db))
