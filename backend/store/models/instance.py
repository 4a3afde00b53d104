"""Instance settings: facts of the data dir (its database) that every process opening it reads the same way."""

from __future__ import annotations

from peewee import CharField, TextField

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel


class InstanceSetting(BaseModel):
    key = CharField(primary_key=True, max_length=60)
    value = TextField()
    updated_at = UTCDateTimeField()
