"""Events (spec 6): recorded in the outbox inside the caller's transaction, with one webhook delivery (and its
job) per enabled endpoint of the workspace that takes the event's type — so the event and its deliveries commit
(or roll back) with the state change they report. backend/services/webhooks.py delivers them."""

from __future__ import annotations

from typing import Any

from backend import clock, queue
from backend.ids import new_id
from backend.store.models import Event, WebhookDelivery, WebhookEndpoint
from backend.store.shapes import InsertShape, Shape, Slot

DELIVER_JOB = "webhook.deliver"


def lane(endpoint_id: str) -> str:
    """A delivery's lane: one per endpoint, serial (the worker runs one of its jobs at a time, oldest first)."""
    return f"serial:webhook:{endpoint_id}"


# The event's INSERT and its endpoints' read, each rendered once (backend/store/shapes.py): every state change of a
# target records one (issue 34).
_EVENT_INSERT = InsertShape(Event)


def _endpoints_shape(one: bool) -> Shape:
    def build() -> Any:
        q = WebhookEndpoint.select(WebhookEndpoint.id, WebhookEndpoint.event_types).where(
            (WebhookEndpoint.workspace == Slot("workspace")) & (WebhookEndpoint.enabled == True)  # noqa: E712
        )
        return q.where(WebhookEndpoint.id == Slot("endpoint")) if one else q

    return Shape(build)


_ENDPOINTS = {one: _endpoints_shape(one) for one in (False, True)}


def record(
    workspace_id: str,
    type_: str,
    data: dict[str, Any],
    *,
    subject_id: str | None = None,
    endpoint_id: str | None = None,
) -> Event:
    """Write one event row and its deliveries. Call it inside the transaction of the state change it reports.
    `endpoint_id`: deliver to that endpoint only (a test event), whatever its type filter."""
    now = clock.now()
    values = dict(
        id=new_id("evt"),
        workspace_id=workspace_id,
        type=type_,
        data=data,
        subject_id=subject_id,
        created_at=now,
    )
    _EVENT_INSERT.insert([values])
    event = Event(**values)
    if endpoint_id is not None:
        endpoints = _ENDPOINTS[True].rows(workspace=workspace_id, endpoint=endpoint_id)
    else:
        endpoints = _ENDPOINTS[False].rows(workspace=workspace_id)
    targets = [
        e.id for e in endpoints if endpoint_id is not None or not e.event_types or type_ in e.event_types
    ]
    deliver(event, targets)
    return event


def deliver(event: Event, endpoint_ids: list[str]) -> list[str]:
    """Queue a new delivery of `event` to each endpoint (inside the caller's transaction); their ids."""
    if not endpoint_ids:
        return []
    now = clock.now()
    rows = [
        dict(
            id=new_id("whd"),
            workspace_id=event.workspace_id,
            endpoint=eid,
            event_id=event.id,
            event_type=event.type,
            status="pending",
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        for eid in endpoint_ids
    ]
    WebhookDelivery.insert_many(rows).execute()
    queue.enqueue_many(
        [
            queue.JobSpec(
                DELIVER_JOB,
                {"delivery_id": r["id"]},
                workspace_id=event.workspace_id,
                dedupe_key=f"whd:{r['id']}",
                max_attempts=100,
                lane=lane(str(r["endpoint"])),
            )
            for r in rows
        ]
    )
    return [str(r["id"]) for r in rows]
