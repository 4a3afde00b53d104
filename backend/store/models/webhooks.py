"""Webhooks (docs/webhooks.md, migration 0019): endpoints, deliveries (one event at one endpoint) and the log of
their attempts."""

from __future__ import annotations

from peewee import BooleanField, CharField, ForeignKeyField, IntegerField, JSONField, TextField

from backend.store.fields import EncryptedTextField, UTCDateTimeField
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace


class WebhookEndpoint(BaseModel):
    """A receiver. `secret` signs every delivery; `previous_secret` keeps signing beside it until
    `previous_secret_until` (a rotation's grace). `enabled` False: no new deliveries (410 Gone, or a user).
    `failing_since`: an event exhausted its retries here; cleared by the next success."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # peewee's column for workspace, typed for mypy
    url = TextField()
    description = TextField(null=True)
    event_types = JSONField(default=list)  # [] = every type
    secret = EncryptedTextField()  # encrypted at rest, like every secret (backend/store/secretbox.py)
    previous_secret = EncryptedTextField(null=True)
    previous_secret_until = UTCDateTimeField(null=True)
    secret_rotated_at = UTCDateTimeField(null=True)
    enabled = BooleanField(default=True)
    disabled_reason = TextField(null=True)
    failing_since = UTCDateTimeField(null=True)
    last_delivery_at = UTCDateTimeField(null=True)
    last_status_code = IntegerField(null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "webhook_endpoint"
        indexes = ((("workspace", "id"), False),)

    def __repr__(self) -> str:  # never the secrets
        return f"<WebhookEndpoint {self.id} {self.url!r}>"


class WebhookDelivery(BaseModel):
    """One event at one endpoint: pending -> succeeded | failed. A redelivery is a new row."""

    id = CharField(primary_key=True, max_length=40)
    workspace_id = CharField(max_length=40)
    endpoint = ForeignKeyField(WebhookEndpoint, on_delete="CASCADE", index=False)
    endpoint_id: str  # peewee's column for endpoint, typed for mypy
    event_id = CharField(max_length=40, index=True)
    event_type = CharField(max_length=60)
    status = CharField(max_length=12, default="pending")
    attempts = IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    last_status_code = IntegerField(null=True)
    last_error = TextField(null=True)
    refused_by = CharField(
        max_length=40, null=True
    )  # the setting that refused it (`private-urls`), if one did
    created_at = UTCDateTimeField()
    completed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "webhook_delivery"
        indexes = ((("endpoint", "id"), False), (("endpoint", "status", "id"), False))


class WebhookAttempt(BaseModel):
    """One HTTP request of a delivery: when, the receiver's status (None: no answer), how long, what went wrong."""

    id = CharField(primary_key=True, max_length=40)
    delivery = ForeignKeyField(WebhookDelivery, on_delete="CASCADE", index=True)
    delivery_id: str  # peewee's column for delivery, typed for mypy
    at = UTCDateTimeField()
    status_code = IntegerField(null=True)
    duration_ms = IntegerField()
    error = TextField(null=True)

    class Meta:
        table_name = "webhook_attempt"
