"""Hot-path statements with their SQL built once per dialect.

peewee builds the SQL of a query on every execution, which costs more than SQLite takes to run the small
statements of the engine's hot path (get a row by id, update a few columns of one row, insert one row).
These helpers keep peewee's models as the source of truth (table and column names, `db_value` /
`python_value` conversions, defaults) and cache the SQL text per (dialect, statement shape); the values go
through the fields' own converters, so rows read or written here are the same as through the ORM.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from peewee import Field, JSONField, Model, Node

from backend.store.db import database, is_sqlite

M = TypeVar("M", bound=Model)

_SQL: dict[tuple[Any, ...], tuple[str, Any]] = {}


def _dialect() -> tuple[str, str]:
    db = database.obj
    return type(db).__name__, db.param


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _slot(field: Field, param: str) -> tuple[str, Callable[[Any], Any]]:
    """The placeholder of a value written to `field` and the conversion of the value. JSON fields are wrapped
    by peewee in a SQL function on SQLite (`json(?)`): that fragment is compiled once, the value dumped."""
    if isinstance(field, JSONField):
        probe = field.db_value({})
        if isinstance(probe, Node):
            fragment = database.obj.get_sql_context().sql(probe).query()[0]
            return fragment, field._dumps
    return param, field.db_value


def _decoder(model: type[M], fields: Sequence[Field]) -> Callable[[Sequence[Any]], M]:
    """row -> model instance, built as peewee's own SELECT builds it (see fastq._builder)."""
    from backend.store.fastq import _builder

    return _builder(model, fields)


def get(model: type[M], pk: Any, *, lock: bool = False) -> M | None:
    """The row with primary key `pk`, or None. lock=True: FOR UPDATE on PostgreSQL (SQLite: the enclosing
    BEGIN IMMEDIATE transaction already holds the write lock)."""
    kind, param = _dialect()
    key = ("get", kind, model, lock)
    cached = _SQL.get(key)
    if cached is None:
        meta = model._meta
        fields = tuple(meta.sorted_fields)
        sql = (f"SELECT {', '.join(_q(f.column_name) for f in fields)} FROM {_q(meta.table_name)} "
               f"WHERE {_q(meta.primary_key.column_name)} = {param}")
        if lock and not is_sqlite():
            sql += " FOR UPDATE"
        cached = _SQL[key] = (sql, _decoder(model, fields))
    sql, decode = cached
    row = database.execute_sql(sql, (model._meta.primary_key.db_value(pk),)).fetchone()
    return None if row is None else decode(row)


def value(model: type[Model], pk: Any, column: str, *, lock: bool = False) -> Any:
    """One column of the row with primary key `pk` (None when there is no such row). lock=True: FOR UPDATE on
    PostgreSQL, like `get`."""
    kind, param = _dialect()
    key = ("value", kind, model, column, lock)
    field = model._meta.fields[column]
    cached = _SQL.get(key)
    if cached is None:
        meta = model._meta
        sql = (f"SELECT {_q(field.column_name)} FROM {_q(meta.table_name)} "
               f"WHERE {_q(meta.primary_key.column_name)} = {param}")
        if lock and not is_sqlite():
            sql += " FOR UPDATE"
        cached = _SQL[key] = (sql, None)
    row = database.execute_sql(cached[0], (model._meta.primary_key.db_value(pk),)).fetchone()
    return None if row is None or row[0] is None else field.python_value(row[0])


def select_where(model: type[M], column: str, value: Any) -> list[M]:
    """All rows whose `column` equals `value` (one equality, e.g. the targets of a post)."""
    kind, param = _dialect()
    key = ("where", kind, model, column)
    cached = _SQL.get(key)
    field = model._meta.fields[column]
    if cached is None:
        meta = model._meta
        fields = tuple(meta.sorted_fields)
        sql = (f"SELECT {', '.join(_q(f.column_name) for f in fields)} FROM {_q(meta.table_name)} "
               f"WHERE {_q(field.column_name)} = {param}")
        cached = _SQL[key] = (sql, _decoder(model, fields))
    sql, decode = cached
    return [decode(row) for row in database.execute_sql(sql, (field.db_value(value),)).fetchall()]


def update(model: type[Model], pk: Any, values: dict[str, Any], *, increment: Iterable[str] = (),
           keep: Iterable[str] = (), where: dict[str, Any] | None = None,
           unless_status_in: tuple[str, ...] = ()) -> int:
    """UPDATE one row by primary key (or the rows of a list of keys: `pk IN (...)`), returning the rows changed.

    values: new values by field name; increment: columns that grow by 1; keep: columns of `values` set only
    when NULL (COALESCE); where: further equality conditions (None means IS NULL); unless_status_in: only
    when the row's `status` is not one of these."""
    kind, param = _dialect()
    names = tuple(values)
    inc = tuple(increment)
    kept = frozenset(keep)
    conds = tuple((n, where[n] is None) for n in where) if where else ()
    many = len(pk) if isinstance(pk, list | tuple) else 0
    key = ("update", kind, model, names, inc, kept, conds, unless_status_in, many)
    cached = _SQL.get(key)
    meta = model._meta
    if cached is None:
        fields = tuple(meta.fields[n] for n in names)
        slots = [_slot(f, param) for f in fields]
        sets = [f"{_q(f.column_name)} = COALESCE({_q(f.column_name)}, {ph})" if f.name in kept
                else f"{_q(f.column_name)} = {ph}" for f, (ph, _c) in zip(fields, slots, strict=True)]
        sets += [f"{_q(meta.fields[n].column_name)} = {_q(meta.fields[n].column_name)} + 1" for n in inc]
        pk_match = f"IN ({', '.join([param] * many)})" if many else f"= {param}"
        sql = f"UPDATE {_q(meta.table_name)} SET {', '.join(sets)} WHERE {_q(meta.primary_key.column_name)} {pk_match}"
        for n, is_null in conds:
            col = _q(meta.fields[n].column_name)
            sql += f" AND {col} IS NULL" if is_null else f" AND {col} = {param}"
        if unless_status_in:
            sql += f" AND {_q('status')} NOT IN ({', '.join([param] * len(unless_status_in))})"
        cached = _SQL[key] = (sql, tuple(zip(names, (c for _p, c in slots), strict=True)))
    sql, converters = cached
    params = [None if values[n] is None else conv(values[n]) for n, conv in converters]
    if many:
        params.extend(meta.primary_key.db_value(k) for k in pk)
    else:
        params.append(meta.primary_key.db_value(pk))
    if where:
        params.extend(meta.fields[n].db_value(v) for n, v in where.items() if v is not None)
    params.extend(unless_status_in)
    return database.execute_sql(sql, params).rowcount


def insert(model: type[M], **values: Any) -> M:
    """INSERT one row, with the fields' defaults for anything not given (like Model.create)."""
    return _insert(model, values, ignore_conflict=False)[0]


def insert_if_absent(model: type[M], **values: Any) -> tuple[M, bool]:
    """INSERT one row unless it would break a unique constraint (ON CONFLICT DO NOTHING, on SQLite and
    PostgreSQL alike). Returns the row as given and whether it was inserted."""
    return _insert(model, values, ignore_conflict=True)


def _insert(model: type[M], values: dict[str, Any], *, ignore_conflict: bool) -> tuple[M, bool]:
    kind, param = _dialect()
    meta = model._meta
    key = ("insert", kind, model, ignore_conflict)
    cached = _SQL.get(key)
    if cached is None:
        fields = tuple(meta.sorted_fields)
        slots = [_slot(f, param) for f in fields]
        sql = (f"INSERT INTO {_q(meta.table_name)} ({', '.join(_q(f.column_name) for f in fields)}) "
               f"VALUES ({', '.join(ph for ph, _c in slots)})" + (" ON CONFLICT DO NOTHING" if ignore_conflict else ""))
        cached = _SQL[key] = (sql, tuple((f, c) for f, (_p, c) in zip(fields, slots, strict=True)))
    sql, converters = cached
    full: dict[str, Any] = {}
    params = []
    for f, conv in converters:
        if f.name in values:
            v = values[f.name]
        elif f.default is not None:
            v = f.default() if callable(f.default) else f.default
        else:
            v = None
        full[f.name] = v
        params.append(conv(v) if v is not None else None)
    inserted = database.execute_sql(sql, params).rowcount != 0
    return model(__no_default__=True, **full), inserted


def select_in(model: type[M], column: str, values: Iterable[Any]) -> list[M]:
    """All rows whose `column` is one of `values` (e.g. the accounts of a post's targets)."""
    vals = list(values)
    if not vals:
        return []
    kind, param = _dialect()
    field = model._meta.fields[column]
    key = ("in", kind, model, column, len(vals))
    cached = _SQL.get(key)
    if cached is None:
        meta = model._meta
        fields = tuple(meta.sorted_fields)
        sql = (f"SELECT {', '.join(_q(f.column_name) for f in fields)} FROM {_q(meta.table_name)} "
               f"WHERE {_q(field.column_name)} IN ({', '.join([param] * len(vals))})")
        cached = _SQL[key] = (sql, _decoder(model, fields))
    sql, decode = cached
    rows = database.execute_sql(sql, [field.db_value(v) for v in vals]).fetchall()
    return [decode(row) for row in rows]
