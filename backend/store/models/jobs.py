"""Durable job rows: the queue the worker claims from."""

from __future__ import annotations

from peewee import CharField, IntegerField, JSONField, TextField

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel


class Job(BaseModel):
    """status: queued -> running -> done | dead. `lease_until` bounds a running claim."""

    id = CharField(primary_key=True, max_length=40)
    kind = CharField(max_length=60)
    payload = JSONField(default=dict)
    status = CharField(max_length=12, default="queued")
    run_at = UTCDateTimeField()
    attempts = IntegerField(default=0)
    max_attempts = IntegerField(default=5)
    lease_until = UTCDateTimeField(null=True)
    locked_by = CharField(max_length=160, null=True)  # 0054: the claim and the job id (statements.claim_jobs)
    last_error = TextField(null=True)
    dedupe_key = CharField(max_length=120, null=True, unique=True)
    workspace_id = CharField(max_length=40, null=True, index=True)
    lane = CharField(max_length=60, null=True)  # the network a job calls (0010; 60 chars: 0019); None: none
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        indexes = ((("status", "run_at"), False),)
