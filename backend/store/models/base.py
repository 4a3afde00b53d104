from __future__ import annotations

from peewee import Model

from backend.store.db import database


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False
