"""The sandbox networks' state leaves the product's database: the emulators keep it in their own (backend/
networks/sandbox/store.py: `sandbox.db` beside the product's SQLite file; on PostgreSQL the sandbox's own
`emulator_*` tables). The rows of the old `sandbox_account` / `sandbox_item` tables are copied there first (so a
sandbox account connected before the upgrade still publishes), then the old tables are dropped.
Frozen copies of both sides' models as of this version."""

import contextlib
import os
from pathlib import Path
from typing import Any

from peewee import (
    BooleanField,
    CharField,
    Database,
    DateTimeField,
    FloatField,
    IntegerField,
    JSONField,
    Model,
    PostgresqlDatabase,
    SqliteDatabase,
    TextField,
)
from playhouse.migrate import SchemaMigrator

BATCH = 500


def _models(db: Database, account_table: str, item_table: str) -> tuple[type[Any], type[Any]]:
    # model classes made here for the tables named: what a type checker can say of their fields is Any
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Account(Base):
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
            table_name = account_table
            indexes = ((("platform", "external_id"), True),)

    class Item(Base):
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
            table_name = item_table
            indexes = ((("platform", "account_id", "kind", "created_at"), False),)

    return Account, Item


def _sandbox_database(db: Database) -> tuple[Database, bool]:
    """Where the sandbox keeps its state for this product database (the rule of backend/networks/sandbox/store.py
    and backend/services/adapters.sandbox_location)."""
    if isinstance(db, PostgresqlDatabase):
        return db, False
    path = Path(db.database).parent / "sandbox.db"
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return SqliteDatabase(str(path), pragmas={"journal_mode": "wal", "busy_timeout": 15000}), True


def up(migrator: SchemaMigrator, db: Database) -> None:
    OldAccount, OldItem = _models(db, "sandbox_account", "sandbox_item")
    if OldAccount.table_exists() and OldAccount.select().exists():
        target, own = _sandbox_database(db)
        try:
            NewAccount, NewItem = _models(target, "emulator_account", "emulator_item")
            NewItem.add_index(NewItem.post_id, where=NewItem.post_id.is_null(False))
            target.create_tables([NewAccount, NewItem])  # IF NOT EXISTS; the sandbox's migration 0001 agrees
            for old, new in ((OldAccount, NewAccount), (OldItem, NewItem)):
                fields = list(new._meta.sorted_field_names)
                rows = old.select().order_by(old.id).dicts().iterator()
                batch = []
                with target.atomic():
                    for row in rows:
                        batch.append({f: row[f] for f in fields})
                        if len(batch) >= BATCH:
                            new.insert_many(batch).on_conflict_ignore().execute()
                            batch = []
                    if batch:
                        new.insert_many(batch).on_conflict_ignore().execute()
        finally:
            if own:
                target.close()
    db.drop_tables([OldItem, OldAccount], safe=True)


def down(migrator: SchemaMigrator, db: Database) -> None:
    """The old tables come back empty: the sandbox's state stays in its own database."""
    OldAccount, OldItem = _models(db, "sandbox_account", "sandbox_item")
    db.create_tables([OldAccount, OldItem])
