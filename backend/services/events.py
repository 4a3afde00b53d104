"""Events (spec 6): recorded in the outbox inside the caller's transaction, ready for webhook delivery."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from backend import clock
from backend.ids import new_id
from backend.store import fast
from backend.store.fastq import make
from backend.store.models.events import Event
from backend.store.sql import insert_rows


def record(workspace_id: str, type_: str, data: dict[str, Any], *, subject_id: str | None = None) -> Event:
    """Write one event row. Call inside the transaction of the state change it reports (inside `batched()`,
    the row is written with the others of the batch when it ends, still in that transaction)."""
    values = {"id": new_id("evt"), "workspace_id": workspace_id, "type": type_, "data": data,
              "subject_id": subject_id, "created_at": clock.now()}
    pending = getattr(_batch, "rows", None)
    if pending is not None:
        pending.append(values)
        return make(Event, values)
    return fast.insert(Event, **values)


_batch = threading.local()


@contextmanager
def batched() -> Iterator[None]:
    """Events recorded inside are written in one statement at the end (executemany). Use it inside the
    transaction of the changes they report; on an exception nothing is written (the transaction, or the
    savepoint, rolls back). Nested: the inner block's events join the outer block's only if it ends well."""
    outer = getattr(_batch, "rows", None)
    _batch.rows = rows = []
    try:
        yield
    finally:
        _batch.rows = outer
    if outer is not None:
        outer.extend(rows)
    else:
        insert_rows(Event, rows)
