"""Events (spec 6): recorded in the outbox inside the caller's transaction, ready for webhook delivery."""

from __future__ import annotations

from typing import Any

from backend import clock
from backend.ids import new_id
from backend.store import fast
from backend.store.models.events import Event


def record(workspace_id: str, type_: str, data: dict[str, Any], *, subject_id: str | None = None) -> Event:
    """Write one event row. Call inside the transaction of the state change it reports."""
    return fast.insert(Event, id=new_id("evt"), workspace_id=workspace_id, type=type_, data=data,
                       subject_id=subject_id, created_at=clock.now())


def envelope(event: Event) -> dict[str, Any]:
    """The delivered message: `type` and `data` as spec 6 says, plus id, workspace and time."""
    return {
        "id": event.id,
        "type": event.type,
        "createdAt": clock.iso(event.created_at),
        "workspaceId": event.workspace_id,
        "data": event.data,
    }


def list_events(workspace_id: str, *, type_: str | None = None, subject_id: str | None = None,
                limit: int = 100) -> list[Event]:
    q = Event.select().where(Event.workspace_id == workspace_id)
    if type_:
        q = q.where(Event.type == type_)
    if subject_id:
        q = q.where(Event.subject_id == subject_id)
    return list(q.order_by(Event.id.desc()).limit(limit))
