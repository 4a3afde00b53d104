"""The event outbox: one row per event, written in the transaction of the state change that emits it."""

from __future__ import annotations

from peewee import CharField, JSONField

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel


class Event(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    workspace_id = CharField(max_length=40, index=True)
    type = CharField(max_length=60)
    data = JSONField(default=dict)
    subject_id = CharField(max_length=40, null=True, index=True)  # post id, publish id, generation id…
    created_at = UTCDateTimeField()
    delivered_at = UTCDateTimeField(null=True)  # set by webhook delivery once every endpoint has it
