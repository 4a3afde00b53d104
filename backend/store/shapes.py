"""Statement shapes: a peewee query built and rendered once, executed with new values (issue 34, ruling 2).

Rendering a query object's SQL text costs peewee ~100-400 µs (a walk of its node tree, a context copied at each
node) while SQLite runs the statement in 2-50 µs; building the query object costs about as much again. A hot
statement of the store is written ONCE as a peewee query whose varying values are `Slot`s, in a `Shape`:

    _JOB_HELD = Shape(lambda: Job.select(Job.status).where((Job.id == Slot("id")) & (Job.locked_by == Slot("by"))))
    row = _JOB_HELD.first(id=job.id, by=job.locked_by)

The shape builds its query once per kind of database (SQLite, PostgreSQL: `locked()` and the dialect differ); each
execution runs a clone of it through the store's one execution path (db._OnceRendered.execute, where every
query object's execute() arrives), which renders it with peewee the first time and afterwards binds the new values
into that SQL text's parameters — each converted by its field's `db_value`, as peewee would have. Rows are made
into models by peewee's own cursor wrappers, as for any query. A query of no shape is rendered each time by the
same path. Nothing but peewee writes SQL here: the SQL text is peewee's, the values are always bound parameters.

What a shape may hold: Slots wherever a value changes between executions, constants otherwise. A Slot compared to
a field takes that field's conversion; a Slot given as a SET value of an UPDATE names its field
(`Slot("at", Job.updated_at)`), since peewee converts no node there. No Slot for a column whose field turns a
value into SQL rather than a parameter (a JSON column on SQLite: `json(?)`; refused when bound). No INSERT (peewee fills a row's defaults,
e.g. a new id, while rendering: a shape would repeat the first one's) and no IN over a Slot (its length is part of
the shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from peewee import ColumnBase, Context, Field, Insert

from backend.store.db import ARMED, Hole, Rendered, database


class Slot(ColumnBase):  # a column-like node: `==`, `.concat` on it build expressions
    """A value given when the shape's statement is executed (a keyword of Shape.rows / first / run)."""

    def __init__(self, name: str, field: Field | None = None) -> None:
        super().__init__()
        self.name = name
        self.field = field

    def __sql__(self, ctx: Context) -> Context:
        converter = self.field.db_value if self.field is not None else ctx.state.converter
        # converter=False: the Hole is kept as it is among the parameters, and converted when a value is bound
        ctx.value(Hole(self.name, converter or None), converter=False)
        return ctx


class _Entry:
    """A shape's query on one kind of database, and its SQL once rendered (set by the execution path)."""

    __slots__ = ("query", "rendered")

    def __init__(self, query: Any) -> None:
        self.query = query
        self.rendered: Rendered | None = None


class _Armed:
    __slots__ = ("query", "entry", "values")

    def __init__(self, query: Any, entry: _Entry, values: dict[str, Any]) -> None:
        self.query = query
        self.entry = entry
        self.values = values


class Shape:
    """One statement of the store, built by `build` (a peewee SELECT, UPDATE or DELETE with Slots) and rendered
    once per kind of database; executed by rows / first / run with a value for each Slot."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._entries: dict[type, _Entry] = {}

    def _entry(self) -> _Entry:
        kind = type(database.obj)
        entry = self._entries.get(kind)
        if entry is None:
            query = self._build()
            if isinstance(query, Insert):
                raise TypeError(
                    "a statement shape cannot be an INSERT: its row's defaults would be rendered once"
                )
            entry = self._entries[kind] = _Entry(query)
        return entry

    def _execute(self, values: dict[str, Any]) -> Any:
        entry = self._entry()
        query = entry.query.clone()  # its results are its own (peewee keeps them on the query object)
        ARMED.statement = _Armed(query, entry, values)
        try:
            return query.execute()
        finally:
            ARMED.statement = None

    def rows(self, **values: Any) -> list[Any]:
        """Every row of a SELECT (or of an UPDATE … RETURNING), as the query yields them."""
        return list(self._execute(values))

    def first(self, **values: Any) -> Any | None:
        """The first row of a SELECT, None when there is none (the shape's query should LIMIT 1 itself)."""
        return next(iter(self._execute(values)), None)

    def run(self, **values: Any) -> Any:
        """An UPDATE's or DELETE's result (the rows it changed)."""
        return self._execute(values)
