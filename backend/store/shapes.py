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
(`Slot("at", Job.updated_at)`), since peewee converts no node there. A JSON column's Slot is bound as a parameter
too: on SQLite, where peewee writes the value as `json(?)`, the shape's SQL keeps that `json(?)` and the parameter
is the value's JSON text as the field dumps it; on PostgreSQL the field's own parameter. No Slot for another column
whose field turns a value into SQL rather than a parameter (refused when bound). An IN list's length is part of
the SQL text: `ListShape` makes a shape per length (rounded up to a power of two, the list padded by repeating its
last item, which IN does not count twice), each item a Slot. No INSERT built by hand (peewee fills a row's missing
columns with their defaults, e.g. a new id, while rendering: a shape would repeat the first one's): `InsertShape`
inserts rows that name every column, the missing ones given their field's default at each execution
(`insert_shape` gives the one of a model, a number of rows and if_absent, or an upsert's conflict target and the
columns it replaces).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from peewee import EXCLUDED, ColumnBase, Context, Field, Function, Insert, JSONField, Model, Value

from backend.store.db import ARMED, Hole, Rendered, database


class Slot(ColumnBase):  # a column-like node: `==`, `.concat` on it build expressions
    """A value given when the shape's statement is executed (a keyword of Shape.rows / first / run)."""

    def __init__(self, name: str, field: Field | None = None) -> None:
        super().__init__()
        self.name = name
        self.field = field

    def __sql__(self, ctx: Context) -> Context:
        if isinstance(self.field, JSONField):
            json_field: Any = self.field  # peewee's fields are untyped
            wrapped = json_field.db_value({})
            if isinstance(wrapped, Function):  # SQLite: json(?), the value's JSON text as the parameter
                context: Any = ctx  # peewee's Context is untyped
                context.sql(
                    Function(wrapped.name, [Value(Hole(self.name, _json_text(json_field)), converter=False)])
                )
                return ctx
        converter = self.field.db_value if self.field is not None else ctx.state.converter
        # converter=False: the Hole is kept as it is among the parameters, and converted when a value is bound
        ctx.value(Hole(self.name, converter or None), converter=False)
        return ctx


def _json_text(field: Any) -> Callable[[Any], Any]:
    """A JSON column's value (`field`: a peewee JSONField) as the parameter of the `json(?)` peewee writes on SQLite:
    the field's own JSON text."""

    def convert(value: Any) -> Any:
        wrapped = field.db_value(value)
        if isinstance(wrapped, Function):
            arguments: Any = wrapped.arguments  # json(text): the one argument
            return arguments[0]
        return wrapped

    return convert


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

    _whole_rows = False  # InsertShape: an INSERT whose rows name every column

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._entries: dict[type, _Entry] = {}

    def _entry(self) -> _Entry:
        kind = type(database.obj)
        entry = self._entries.get(kind)
        if entry is None:
            query = self._build()
            if isinstance(query, Insert) and not self._whole_rows:
                raise TypeError(
                    "a statement shape cannot be an INSERT built by hand: its row's defaults would be rendered "
                    "once (InsertShape names every column)"
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

    def run(self, **values: Any) -> int:
        """An UPDATE's or DELETE's result: the number of rows it changed."""
        return int(self._execute(values))


class InsertShape(Shape):
    """`rows` rows of `model` inserted in one statement (`if_absent`: a row whose unique key exists already is
    skipped, peewee's on_conflict_ignore), rendered once: every column is a Slot, and `insert` gives each row's
    columns by field name, the missing ones their field's default (a callable default called for each row, as
    peewee does). An auto-incremented primary key is left to the database, as peewee leaves it. One shape per
    number of rows. An upsert (`replace`): a row whose `conflict` columns match an existing one's sets that row's
    `replace` columns to its own values instead (peewee's on_conflict with EXCLUDED)."""

    _whole_rows = True

    def __init__(
        self,
        model: type[Model],
        *,
        rows: int = 1,
        if_absent: bool = False,
        conflict: tuple[Field, ...] = (),
        replace: tuple[Field, ...] = (),
    ) -> None:
        if bool(conflict) != bool(replace) or (replace and if_absent):
            raise TypeError(
                "an upsert names its conflict columns and the columns it replaces, and is not if_absent"
            )
        self.model = model
        meta: Any = model._meta  # peewee's documented model metadata (untyped)
        fields: list[Field] = list(meta.sorted_fields)
        if meta.auto_increment:  # the database numbers the row: peewee's own INSERT leaves the column out too
            fields = [f for f in fields if f is not meta.primary_key]
        self.fields = fields
        self.names = {f.name for f in self.fields}
        self.n_rows = rows
        # each column's name, its default and whether the default is called for each row; each row's Slot names
        self._defaults = [(f.name, f.default, callable(f.default)) for f in fields]
        self._slots = [[f"{i}:{f.name}" for f in fields] for i in range(rows)]

        def build() -> Any:
            insert = model.insert_many(
                [{f: Slot(slot, f) for f, slot in zip(fields, slots, strict=True)} for slots in self._slots]
            ).as_rowcount()  # the rows inserted (no RETURNING of the keys: the caller gives them)
            if replace:
                excluded: Any = EXCLUDED  # peewee's node of the proposed row (untyped)
                return insert.on_conflict(
                    conflict_target=list(conflict),
                    update={f: getattr(excluded, f.column_name) for f in replace},
                )
            return insert.on_conflict_ignore() if if_absent else insert

        super().__init__(build)

    def insert(self, rows: list[dict[str, Any]]) -> int:
        """Insert `rows` (each by field name); returns how many were inserted (if_absent: those not skipped)."""
        if len(rows) != self.n_rows:
            raise ValueError(f"this shape inserts {self.n_rows} rows, {len(rows)} given")
        values: dict[str, Any] = {}
        for slots, row in zip(self._slots, rows, strict=True):
            if not row.keys() <= self.names:
                raise TypeError(f"{self.model.__name__} has no field {sorted(set(row) - self.names)}")
            for slot, (name, default, call) in zip(slots, self._defaults, strict=True):
                values[slot] = row[name] if name in row else default() if call else default
        inserted: int = self._execute(values)
        return inserted


# The INSERT shapes made by insert_shape: one for each model, number of rows, if_absent and upsert.
_INSERTS: dict[tuple[type[Model], int, bool, tuple[Field, ...], tuple[Field, ...]], InsertShape] = {}


def insert_shape(
    model: type[Model],
    rows: int = 1,
    *,
    if_absent: bool = False,
    conflict: tuple[Field, ...] = (),
    replace: tuple[Field, ...] = (),
) -> InsertShape:
    """The INSERT shape of `rows` rows of `model` (made the first time it is asked for): for a statement whose
    number of rows varies (a post's targets, its labels, follow-up jobs, a post's media holds), each number of rows
    being a shape of its own. Bounded by the callers' own bounds (a post has at most 20 targets and 20 labels)."""
    key = (model, rows, if_absent, conflict, replace)
    shape = _INSERTS.get(key)
    if shape is None:  # two threads making it at once make two equal shapes: the last one is kept
        shape = _INSERTS[key] = InsertShape(
            model, rows=rows, if_absent=if_absent, conflict=conflict, replace=replace
        )
    return shape


def list_length(n: int) -> int:
    """The length of the IN list of a ListShape's shape for a list of `n` items: the next power of two (0 for an
    empty list), so a list whose length varies widely (the heartbeat's claims: 1 to the pool's size) is a few
    shapes."""
    return 0 if n <= 0 else 1 << (n - 1).bit_length()


class ListShape:
    """A statement with an IN list whose length varies (the keys a post names, the accounts of its targets, the
    claims a heartbeat renews): `build(items)` builds it with `items`, a list of Slots, in its IN; one Shape per
    length (list_length: a power of two), made the first time it is needed. At execution the list's values (the
    keyword `items_name`) fill the items' Slots, the last value repeated to the shape's length (an IN matches a value
    given twice once). The other Slots are given as for a Shape."""

    def __init__(self, items_name: str, build: Callable[[list[Slot]], Any]) -> None:
        self.items_name = items_name
        self._build = build
        self._shapes: dict[int, Shape] = {}

    def _slot_names(self, length: int) -> list[str]:
        return [f"{self.items_name}:{i}" for i in range(length)]

    def shape(self, n: int) -> Shape:
        """The shape for a list of `n` items."""
        length = list_length(n)
        shape = self._shapes.get(length)
        if shape is None:  # two threads making it at once make two equal shapes: the last one is kept
            names = self._slot_names(length)
            shape = self._shapes[length] = Shape(lambda: self._build([Slot(name) for name in names]))
        return shape

    def _armed(self, values: dict[str, Any]) -> tuple[Shape, dict[str, Any]]:
        items = list(values.pop(self.items_name))
        shape = self.shape(len(items))
        names = self._slot_names(list_length(len(items)))
        values.update(zip(names, items + items[-1:] * (len(names) - len(items)), strict=True))
        return shape, values

    def rows(self, **values: Any) -> list[Any]:
        shape, values = self._armed(values)
        return shape.rows(**values)

    def first(self, **values: Any) -> Any | None:
        shape, values = self._armed(values)
        return shape.first(**values)

    def run(self, **values: Any) -> int:
        shape, values = self._armed(values)
        return shape.run(**values)
