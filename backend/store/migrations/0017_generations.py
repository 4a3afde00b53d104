"""Issue 15: generations and the credit ledger.

`generation`: one row per creation (spec 2.5), soft-deleted (`deleted_at`) so that its ledger entries keep their
subject. `credit_entry`: the ledger of the workspace's credits — every grant, operator change, charge and refund is
one signed entry; `workspace.credits_balance` is their running sum, updated in the same transaction as each entry.
UNIQUE (generation_id, reason) makes a second charge or a second refund of one generation impossible (NULLs are
distinct: grants and operator changes carry no generation). The balances that existed before the ledger become
one `opening` entry each, so the sum of a workspace's entries is its balance from the start.
"""

import os
import time

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


def _id(prefix: str) -> str:
    # the layout of backend.ids.new_id (frozen here: a migration does not follow later changes of the product)
    alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    return prefix + "_" + "".join(alphabet[(value >> shift) & 31] for shift in range(125, -1, -5))


def up(migrator: SchemaMigrator, db: Database) -> None:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Workspace(Base):  # the referenced table, as far as the foreign keys and the opening entries need it
        id = CharField(primary_key=True, max_length=40)
        credits_balance = IntegerField(default=0)

    class Generation(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
        type = CharField(max_length=10)
        status = CharField(max_length=12)
        prompt = TextField()
        aspect_ratio = CharField(max_length=8)
        duration_sec = IntegerField(null=True)
        source_urls = JSONField(default=list)
        seed = IntegerField(default=0)
        media_key = CharField(max_length=200, null=True)
        mime_type = CharField(max_length=60, null=True)
        error = TextField(null=True)
        credits_cost = IntegerField()
        created_at = DateTimeField()
        started_at = DateTimeField(null=True)
        completed_at = DateTimeField(null=True)
        deleted_at = DateTimeField(null=True)

        class Meta:
            table_name = "generation"
            indexes = ((("workspace", "id"), False),)

    class CreditEntry(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
        amount = IntegerField()
        reason = CharField(max_length=12)
        generation_id = CharField(max_length=40, null=True)
        note = TextField(default="")
        balance_after = IntegerField()
        created_at = DateTimeField()

        class Meta:
            table_name = "credit_entry"
            indexes = ((("workspace", "id"), False), (("generation_id", "reason"), True))

    db.create_tables([Generation, CreditEntry], safe=True)
    from datetime import UTC, datetime

    now = datetime.now(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")
    opening = [
        {
            "id": _id("cre"),
            "workspace": ws.id,
            "amount": ws.credits_balance,
            "reason": "opening",
            "generation_id": None,
            "note": "balance before the credit ledger",
            "balance_after": ws.credits_balance,
            "created_at": now,
        }
        for ws in Workspace.select(Workspace.id, Workspace.credits_balance).where(
            Workspace.credits_balance != 0
        )
    ]
    if opening:
        CreditEntry.insert_many(opening).execute()


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP TABLE IF EXISTS "credit_entry"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
    db.execute_sql('DROP TABLE IF EXISTS "generation"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
