"""Events (spec 6): recorded in the outbox inside the caller's transaction, ready for webhook delivery."""

from __future__ import annotations

from typing import Any

from backend import clock
from backend.ids import new_id
from backend.store.models.events import Event


def record(workspace_id: str, type_: str, data: dict[str, Any], *, subject_id: str | None = None) -> Event:
    """Write one event row. Call it inside the transaction of the state change it reports: the event commits
    (or rolls back) with that change."""
    values = dict(id=new_id("evt"), workspace_id=workspace_id, type=type_, data=data, subject_id=subject_id,
                  created_at=clock.now())
    Event.insert(**values).execute()
    return Event(**values)
