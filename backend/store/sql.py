"""Hand-written SQL for the per-request hot path, where peewee's query building costs more than the query.

Statements are written with `?` placeholders and adapted once per dialect (`%s` on PostgreSQL).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from backend.store.db import database, is_sqlite


@lru_cache(maxsize=256)
def _adapt(sql: str, sqlite: bool) -> str:
    return sql if sqlite else sql.replace("?", "%s")


def fetchone(sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
    return database.execute_sql(_adapt(sql, is_sqlite()), params).fetchone()


def execute(sql: str, params: tuple[Any, ...]) -> int:
    return database.execute_sql(_adapt(sql, is_sqlite()), params).rowcount
