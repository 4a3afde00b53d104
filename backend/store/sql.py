"""Hand-written SQL for the per-request hot path, where peewee's query building costs more than the query.

Statements are written with `?` placeholders and adapted once per dialect (`%s` on PostgreSQL). Inserts of
model rows are compiled once per (dialect, model) from the model's own metadata (table, columns, defaults,
`db_value` conversions), so the rows written are the ones peewee would write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from peewee import Field, JSONField, Model, Node

from backend.store.db import database, is_sqlite


@lru_cache(maxsize=256)
def _adapt(sql: str, sqlite: bool) -> str:
    return sql if sqlite else sql.replace("?", "%s")


def fetchone(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    return database.execute_sql(_adapt(sql, is_sqlite()), params).fetchone()


def fetchall(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    return database.execute_sql(_adapt(sql, is_sqlite()), params).fetchall()


def execute(sql: str, params: Sequence[Any]) -> int:
    return database.execute_sql(_adapt(sql, is_sqlite()), params).rowcount


# ------------------------------------------------------------------------------------------- inserts

_Converter = Callable[[Any], Any]
_INSERTS: dict[tuple[bool, type[Model]], tuple[str, tuple[tuple[Field, _Converter], ...]]] = {}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _slot(field: Field, param: str) -> tuple[str, _Converter]:
    """Placeholder and value conversion of `field`. peewee wraps JSON values in a SQL function on SQLite
    (`json(?)`, the value dumped): the fragment is compiled once here."""
    if isinstance(field, JSONField):
        probe = field.db_value({})
        if isinstance(probe, Node):
            return database.obj.get_sql_context().sql(probe).query()[0], field._dumps
    return param, field.db_value


def _insert_statement(model: type[Model]) -> tuple[str, tuple[tuple[Field, _Converter], ...]]:
    sqlite = is_sqlite()
    cached = _INSERTS.get((sqlite, model))
    if cached is None:
        meta = model._meta
        fields = tuple(meta.sorted_fields)
        slots = [_slot(f, database.obj.param) for f in fields]
        sql = (f"INSERT INTO {_q(meta.table_name)} ({', '.join(_q(f.column_name) for f in fields)}) "
               f"VALUES ({', '.join(ph for ph, _c in slots)})")
        cached = _INSERTS[(sqlite, model)] = (sql, tuple((f, c) for f, (_p, c) in zip(fields, slots, strict=True)))
    return cached


def insert_rows(model: type[Model], rows: Sequence[dict[str, Any]]) -> None:
    """INSERT rows of `model` (values by field name; the fields' defaults for the others, like Model.create),
    one statement (executemany for several rows). Call it inside a transaction."""
    if not rows:
        return
    sql, converters = _insert_statement(model)
    params = []
    for values in rows:
        row = []
        for f, conv in converters:
            if f.name in values:
                v = values[f.name]
            elif f.default is not None:
                v = f.default() if callable(f.default) else f.default
            else:
                v = None
            row.append(None if v is None else conv(v))
        params.append(row)
    if len(params) == 1:
        database.execute_sql(sql, params[0])
        return
    from peewee import __exception_wrapper__  # sqlite3 / psycopg errors -> peewee's (IntegrityError, ...)

    with __exception_wrapper__:
        database.cursor().executemany(sql, params)
