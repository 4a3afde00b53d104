"""Workspace, its owner login, API keys and the shared rate-limit counters."""

from __future__ import annotations

from peewee import (
    BigIntegerField,
    CharField,
    CompositeKey,
    ForeignKeyField,
    IntegerField,
    JSONField,
    TextField,
)

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel


class Workspace(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    name = CharField(max_length=200)
    description = TextField(default="")
    currency = CharField(max_length=3, default="USD")
    logo_url = TextField(default="")
    brand = JSONField(default=dict)
    plan_subscribed = CharField(max_length=20, null=True)
    plan_status = CharField(max_length=20, null=True)
    plan_period_end = UTCDateTimeField(null=True)
    credits_balance = IntegerField(default=0)
    credits_granted_at = UTCDateTimeField(null=True)
    free_posts_used = IntegerField(default=0)
    created_at = UTCDateTimeField()


class Owner(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="owners", on_delete="CASCADE")
    workspace_id: str  # peewee's column for workspace, typed for mypy
    email = CharField(max_length=320, unique=True)
    password_hash = CharField(max_length=300)
    created_at = UTCDateTimeField()


class ApiKey(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="api_keys", on_delete="CASCADE", index=True)
    workspace_id: str  # peewee's column for workspace, typed for mypy
    name = CharField(max_length=200)
    key_prefix = CharField(max_length=40)
    key_hash = CharField(max_length=64, unique=True)
    scopes = JSONField(default=list)
    expires_at = UTCDateTimeField(null=True)
    last_used_at = UTCDateTimeField(null=True)
    revoked_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()


class RateCounter(BaseModel):
    """One row per (bucket, minute window); shared by every API process on the store."""

    bucket = CharField(max_length=80)
    window = BigIntegerField()
    count = IntegerField(default=0)

    class Meta:
        primary_key = CompositeKey("bucket", "window")
