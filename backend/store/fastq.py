"""More hot-path statements with their SQL built once per dialect (see backend/store/fast.py for the idea).

fast.py covers rows by primary key and one-row writes; this module adds what the sandbox emulators need on
every call: small filtered reads (`rows`, `first`, `count`) from a WHERE clause written once, a read by
primary key, one-row `insert` and `update`, and a cheaper construction of the model instances they return
(also used by fast.py). The WHERE clause is plain SQL with `?` placeholders (turned into the dialect's own)
over the model's column names; the values are passed as the database stores them (use `field.db_value(...)`
for anything but plain strings and numbers).

Instances are built as peewee's own SELECT builds them (`Model(__no_default__=1, **row)` then a clean dirty
set), with each field's `python_value` applied, but without going through the field descriptors one
attribute at a time: the row dict becomes the instance's `__data__` directly. The row decoder and the INSERT
parameters are small functions generated once per field list (as namedtuple does), so that the identity
conversions (text already str, floats, ints) cost a type test and no call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeVar

from peewee import CharField, Field, FloatField, IntegerField, JSONField, Model, Node, TextField

from backend.store.db import database
from backend.store.fields import UTCDateTimeField

M = TypeVar("M", bound=Model)

_fromisoformat = datetime.fromisoformat

_SQL: dict[tuple[Any, ...], tuple[str, Any]] = {}


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _converter(field: Field) -> Callable[[Any], Any]:
    """The field's python_value, short-cut where it is the identity: text already str in text columns, float
    in float columns, int in integer columns (the exact peewee classes only; subclasses may convert); and
    UTCDateTimeField's parse done in one step (below)."""
    conv = field.python_value
    t = type(field)
    if t is CharField or t is TextField:
        return lambda v: v if type(v) is str else conv(v)
    if t is FloatField:
        return lambda v: v if type(v) is float else conv(v)
    if t is IntegerField:
        return lambda v: v if type(v) is int else conv(v)
    if t is UTCDateTimeField:
        return partial(_utc_datetime, conv)
    return conv


def _utc_datetime(conv: Callable[[Any], Any], v: Any) -> Any:
    """UTCDateTimeField.python_value: peewee parses text with datetime.fromisoformat (after turning a ' '
    separator into 'T' and a final 'Z' into '+00:00', which fromisoformat takes as they are since 3.11), then
    the field makes it aware UTC. Anything fromisoformat refuses, and any other type, goes through the field."""
    if type(v) is str:
        try:
            d = _fromisoformat(v)
        except ValueError:
            return conv(v)
    elif type(v) is datetime:
        d = v
    else:
        return conv(v)
    return d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)


def _builder(model: type[M], fields: Sequence[Field]) -> Callable[[Sequence[Any]], M]:
    """row -> model instance, as peewee's SELECT builds it (python_value of each non-NULL value).

    The function is generated for the field list (like namedtuple's): one local per column, the identity
    cases tested inline (no call), the other conversions called only for non-NULL values."""
    env: dict[str, Any] = {"_new": model.__new__, "_model": model, "_set": set}
    names = [f"v{i}" for i in range(len(fields))]
    lines = ["def build(row):", f"    {', '.join(names)}{',' if len(names) == 1 else ''} = row"]
    for i, f in enumerate(fields):
        t = type(f)
        identity = _IDENTITY.get(t)
        env[f"c{i}"] = f.python_value if identity else _converter(f)
        if identity:
            lines.append(f"    if v{i} is not None and type(v{i}) is not {identity}: v{i} = c{i}(v{i})")
        else:
            lines.append(f"    if v{i} is not None: v{i} = c{i}(v{i})")
    lines += ["    obj = _new(_model)",
              "    obj.__data__ = {" + ", ".join(f"{f.name!r}: v{i}" for i, f in enumerate(fields)) + "}",
              "    obj._dirty = _set()",
              "    obj.__rel__ = {}",
              "    return obj"]
    exec("\n".join(lines), env)  # noqa: S102 - generated from the model's own field names
    return env["build"]  # type: ignore[no-any-return]


def _select(model: type[Model], where: str, order_by: str, limit: bool) -> tuple[str, Callable[..., Any]]:
    db = database.obj
    key = ("select", type(db).__name__, db.param, model, where, order_by, limit)
    cached = _SQL.get(key)
    if cached is None:
        meta = model._meta
        fields = tuple(meta.sorted_fields)
        sql = (f"SELECT {', '.join(_q(f.column_name) for f in fields)} FROM {_q(meta.table_name)} "
               f"WHERE {where.replace('?', db.param)}")
        if order_by:
            sql += f" ORDER BY {order_by}"
        if limit:
            sql += f" LIMIT {db.param}"
        cached = _SQL[key] = (sql, _builder(model, fields))
    return cached


def rows(model: type[M], where: str, params: Sequence[Any], *, order_by: str = "",
         limit: int | None = None) -> list[M]:
    """The rows of `model` matching `where` (SQL over column names, `?` placeholders), in `order_by` order,
    at most `limit`."""
    sql, build = _select(model, where, order_by, limit is not None)
    args = list(params) if limit is None else [*params, limit]
    return [build(r) for r in database.execute_sql(sql, args).fetchall()]


def first(model: type[M], where: str, params: Sequence[Any], *, order_by: str = "") -> M | None:
    """The first row matching `where` (in `order_by` order when given), or None."""
    sql, build = _select(model, where, order_by, True)
    row = database.execute_sql(sql, [*params, 1]).fetchone()
    return None if row is None else build(row)


def get(model: type[M], pk: Any) -> M | None:
    """The row with primary key `pk`, or None (like fast.get, with the cheaper instance construction)."""
    db = database.obj
    key = ("get", type(db).__name__, db.param, model)
    cached = _SQL.get(key)
    if cached is None:
        pk_field = model._meta.primary_key
        sql, build = _select(model, f"{_q(pk_field.column_name)} = ?", "", True)
        cached = _SQL[key] = (sql, (build, pk_field.db_value))
    sql, (build, pk_value) = cached
    row = database.execute_sql(sql, (pk_value(pk), 1)).fetchone()
    return None if row is None else build(row)


def count(model: type[Model], where: str, params: Sequence[Any], *, limit: int | None = None) -> int:
    """COUNT of the rows matching `where`; with `limit`, counting stops there (min(count, limit))."""
    db = database.obj
    key = ("count", type(db).__name__, db.param, model, where, limit is not None)
    cached = _SQL.get(key)
    if cached is None:
        inner = f"SELECT 1 FROM {_q(model._meta.table_name)} WHERE {where.replace('?', db.param)}"
        sql = (f"SELECT COUNT(*) FROM ({inner} LIMIT {db.param}) AS t" if limit is not None
               else f"SELECT COUNT(*) FROM {_q(model._meta.table_name)} WHERE {where.replace('?', db.param)}")
        cached = _SQL[key] = (sql, int)
    sql = cached[0]
    args = list(params) if limit is None else [*params, limit]
    return int(database.execute_sql(sql, args).fetchone()[0])


def make(model: type[M], data: dict[str, Any]) -> M:
    """An instance holding `data` (field name -> python value) as its fields, with a clean dirty set."""
    obj = model.__new__(model)
    obj.__data__ = data
    obj._dirty = set()
    obj.__rel__ = {}
    return obj


def _slot(field: Field) -> tuple[str, Callable[[Any], Any]]:
    """The placeholder of a value written to `field` and its conversion (as fast._slot: a JSON field that peewee
    wraps in a SQL function, `json(?)` on SQLite, gets that fragment and the dumped value)."""
    db = database.obj
    if isinstance(field, JSONField):
        probe = field.db_value({})
        if isinstance(probe, Node):
            return db.get_sql_context().sql(probe).query()[0], field._dumps
    conv = field.db_value
    t = type(field)  # db_value is the identity for these exact classes given their own type (adapt)
    if t is CharField or t is TextField:
        return db.param, lambda v: v if type(v) is str else conv(v)
    if t is FloatField:
        return db.param, lambda v: v if type(v) is float else conv(v)
    if t is IntegerField:
        return db.param, lambda v: v if type(v) is int else conv(v)
    return db.param, conv


def insert(model: type[M], values: dict[str, Any]) -> M:
    """INSERT one row, with the fields' defaults for anything not in `values` (like Model.create and
    fast.insert); returns the instance as a SELECT of the row would build it."""
    db = database.obj
    key = ("insert", type(db).__name__, db.param, model)
    cached = _SQL.get(key)
    if cached is None:
        meta = model._meta
        fields = tuple(meta.sorted_fields)
        slots = [_slot(f) for f in fields]
        sql = (f"INSERT INTO {_q(meta.table_name)} ({', '.join(_q(f.column_name) for f in fields)}) "
               f"VALUES ({', '.join(ph for ph, _c in slots)})")
        cached = _SQL[key] = (sql, _insert_params(model, fields, [c for _ph, c in slots]))
    sql, params_of = cached
    params, data = params_of(values)
    database.execute_sql(sql, params)
    return make(model, data)


def _insert_params(model: type[Model], fields: Sequence[Field],
                   convs: Sequence[Callable[[Any], Any]]) -> Callable[[dict[str, Any]], tuple[list[Any], dict[str, Any]]]:
    """values -> (statement parameters, the row's field values): each field's value or default, converted for
    the database unless NULL. Generated for the field list, like _builder."""
    env: dict[str, Any] = {"_missing": _MISSING}
    lines = ["def params_of(values):", "    get = values.get"]
    for i, f in enumerate(fields):
        env[f"c{i}"], env[f"d{i}"] = convs[i], f.default
        default = "None" if f.default is None else f"d{i}()" if callable(f.default) else f"d{i}"
        lines += [f"    v{i} = get({f.name!r}, _missing)",
                  f"    if v{i} is _missing: v{i} = {default}"]
    params = []
    for i, f in enumerate(fields):
        identity = _IDENTITY.get(type(f))  # db_value is the identity for a value of the field's own type
        params.append(f"v{i} if v{i} is None or type(v{i}) is {identity} else c{i}(v{i})" if identity
                      else f"None if v{i} is None else c{i}(v{i})")
    lines += ["    return ([" + ", ".join(params) + "],",
              "            {" + ", ".join(f"{f.name!r}: v{i}" for i, f in enumerate(fields)) + "})"]
    exec("\n".join(lines), env)  # noqa: S102 - generated from the model's own field names
    return env["params_of"]  # type: ignore[no-any-return]


_MISSING = object()
_IDENTITY = {CharField: "str", TextField: "str", FloatField: "float", IntegerField: "int"}


def update(model: type[Model], pk: Any, values: dict[str, Any]) -> int:
    """UPDATE the columns of `values` of the row with primary key `pk` (the statement fast.update makes for
    plain values, with less to do per call); returns the rows changed (0 or 1)."""
    db = database.obj
    names = tuple(values)
    key = ("update", type(db).__name__, db.param, model, names)
    cached = _SQL.get(key)
    if cached is None:
        meta = model._meta
        fields = [meta.fields[n] for n in names]
        slots = [_slot(f) for f in fields]
        sets = ", ".join(f"{_q(f.column_name)} = {ph}" for f, (ph, _c) in zip(fields, slots, strict=True))
        sql = f"UPDATE {_q(meta.table_name)} SET {sets} WHERE {_q(meta.primary_key.column_name)} = {db.param}"
        cached = _SQL[key] = (sql, (tuple(c for _ph, c in slots), meta.primary_key.db_value))
    sql, (convs, pk_conv) = cached
    params = [None if v is None else conv(v) for conv, v in zip(convs, values.values(), strict=True)]
    params.append(pk_conv(pk))
    return int(database.execute_sql(sql, params).rowcount)
