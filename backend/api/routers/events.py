"""Events (extension; docs/webhooks.md): read one as stored, deliver it again. `webhooks:read` /
`webhooks:write` (or an owner session)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends
from fastapi.responses import Response
from pydantic_core import to_json

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.webhooks import EventOut, RedeliverBody, RedeliverOut
from backend.services import webhooks as svc

router = APIRouter(tags=["webhooks"])


def _json(data: Any, status: int = 200) -> Response:
    return Response(to_json(data), status_code=status, media_type="application/json")


@router.get("/events/{event_id}", response_model=EventOut, operation_id="getEvent", responses=responses(404))
def get_event(event_id: str, ctx: AuthContext = Depends(require_scope("webhooks:read"))) -> Response:
    """The event as recorded (type, subject, data). 404 `event_not_found`."""
    return _json(svc.get_event(ctx.workspace_id, event_id))


@router.post(
    "/events/{event_id}/redeliver",
    status_code=202,
    response_model=RedeliverOut,
    operation_id="redeliverEvent",
    responses=responses(404, 409),
)
def redeliver_event(
    event_id: str,
    settings: SettingsDep,
    body: RedeliverBody | None = Body(None),
    ctx: AuthContext = Depends(require_scope("webhooks:write")),
) -> Response:
    """Deliver the event again, with the same `webhook-id`, to every enabled endpoint that had it, or to
    `endpointId`. 409 `webhook_disabled` / `no_webhook_endpoint` when there is nowhere to send it, 409
    `webhook_url_refused` when the address rule refuses an endpoint's URL now (the message names the setting)."""
    endpoint_id = body.endpoint_id if body is not None else None
    return _json(svc.redeliver(settings, ctx.workspace_id, event_id, endpoint_id), 202)
