"""Generations (spec 2.5, 3.3) and the credit ledger (migration 0017)."""

from __future__ import annotations

from peewee import CharField, ForeignKeyField, IntegerField, JSONField, TextField

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace


class Generation(BaseModel):
    """One creation. status: pending -> processing -> completed | failed. `deleted_at` set by DELETE: the row
    stays (its ledger entries name it) but the API no longer shows it. `media_key`: the produced file on the
    media host (a Media row of origin `generated`, held by `generation:<id>` until the creation is deleted)."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="generations", on_delete="CASCADE", index=False)
    workspace_id: str  # peewee's column for workspace, typed for mypy
    type = CharField(max_length=10)  # image | video
    status = CharField(max_length=12)
    prompt = TextField()
    aspect_ratio = CharField(max_length=8)
    duration_sec = IntegerField(null=True)  # video only
    source_urls = JSONField(default=list)
    background_url = TextField(null=True)  # migration 0028: an image's background photo (extension)
    seed = IntegerField(default=0)
    media_key = CharField(max_length=200, null=True)
    mime_type = CharField(max_length=60, null=True)
    error = TextField(null=True)
    credits_cost = IntegerField()
    idempotency_key = CharField(max_length=200, null=True)  # migration 0018; cleared when deleted
    created_at = UTCDateTimeField()
    started_at = UTCDateTimeField(null=True)
    completed_at = UTCDateTimeField(null=True)
    deleted_at = UTCDateTimeField(null=True)

    class Meta:
        indexes = ((("workspace", "id"), False), (("workspace", "idempotency_key"), True))


class CreditEntry(BaseModel):
    """One movement of a workspace's credits: `amount` is signed (a charge is negative). The balance
    (`workspace.credits_balance`) is the running sum, written in the same transaction; `balance_after` records it.
    reason: opening | grant | admin | charge | refund. UNIQUE (generation_id, reason): one charge and at most one
    refund per generation."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="credit_entries", on_delete="CASCADE", index=False)
    workspace_id: str  # peewee's column for workspace, typed for mypy
    amount = IntegerField()
    reason = CharField(max_length=12)
    generation_id = CharField(max_length=40, null=True)
    note = TextField(default="")
    balance_after = IntegerField()
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "credit_entry"
        indexes = ((("workspace", "id"), False), (("generation_id", "reason"), True))
