"""Webhook endpoints (extension; docs/webhooks.md): create, list, read, update, delete, rotate the secret, send a
test event, read the delivery log. An owner session, or a key with `webhooks:write` (changes; implies read) or
`webhooks:read`. Plain `def` routes (the store is never called on the event loop)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic_core import to_json

from backend.api.deps import AuthContext, SettingsDep, require_scope
from backend.api.errors import responses
from backend.schemas.common import DELIVERY_CURSOR
from backend.schemas.webhooks import (
    DeliveryList,
    DeliveryStatus,
    WebhookCreate,
    WebhookDeleted,
    WebhookDryRun,
    WebhookList,
    WebhookOut,
    WebhookPatch,
    WebhookTestOut,
    WebhookWithSecret,
)
from backend.services import webhooks as svc

router = APIRouter(tags=["webhooks"])
Writer = Depends(require_scope("webhooks:write"))
Reader = Depends(require_scope("webhooks:read"))


def _json(data: Any, status: int = 200) -> Response:
    return Response(to_json(data), status_code=status, media_type="application/json")


@router.post(
    "/webhooks",
    status_code=201,
    response_model=WebhookWithSecret,
    operation_id="createWebhook",
    responses={
        **responses(409),
        200: {
            "model": WebhookDryRun,
            "description": "`dryRun=true`: the URL would be taken; nothing created",
        },
    },
)
def create_webhook(
    body: WebhookCreate,
    settings: SettingsDep,
    ctx: AuthContext = Writer,
    dry_run: bool = Query(
        False,
        alias="dryRun",
        description="run every check of the real call and create nothing: 200 {dryRun, url, events}",
    ),
) -> Response:
    """Register an endpoint. The answer holds the `whsec_` signing secret: shown this once (and at rotation).
    400 `invalid_webhook_url` when the address rule refuses the URL (a loopback or private receiver needs the
    data dir's `private-urls` setting: `socialpub admin private-urls on`); 409 `webhook_limit_reached` past 100
    endpoints. `?dryRun=true` checks the URL and creates nothing (200)."""
    out = svc.create(settings, ctx.workspace_id, body.model_dump(), dry_run=dry_run)
    return _json(out, 200 if dry_run else 201)


@router.get("/webhooks", response_model=WebhookList, operation_id="listWebhooks", responses=responses())
def list_webhooks(ctx: AuthContext = Reader) -> Response:
    """The workspace's endpoints, newest first."""
    return _json(svc.list_public(ctx.workspace_id))


@router.get(
    "/webhooks/{webhook_id}", response_model=WebhookOut, operation_id="getWebhook", responses=responses(404)
)
def get_webhook(webhook_id: str, ctx: AuthContext = Reader) -> Response:
    return _json(svc.get(ctx.workspace_id, webhook_id))


@router.patch(
    "/webhooks/{webhook_id}",
    response_model=WebhookOut,
    operation_id="updateWebhook",
    responses=responses(404),
)
def update_webhook(
    webhook_id: str, body: WebhookPatch, settings: SettingsDep, ctx: AuthContext = Writer
) -> Response:
    """Change the URL, the event types, the description, or `enabled` (true re-enables a disabled endpoint and
    clears its failing flag)."""
    return _json(svc.update(settings, ctx.workspace_id, webhook_id, body.model_dump(exclude_unset=True)))


@router.delete(
    "/webhooks/{webhook_id}",
    response_model=WebhookDeleted,
    operation_id="deleteWebhook",
    responses=responses(404),
)
def delete_webhook(webhook_id: str, ctx: AuthContext = Writer) -> Response:
    """Delete the endpoint with its delivery log; its pending deliveries are dropped."""
    return _json(svc.delete(ctx.workspace_id, webhook_id))


@router.post(
    "/webhooks/{webhook_id}/rotate",
    response_model=WebhookWithSecret,
    operation_id="rotateWebhookSecret",
    responses=responses(404),
)
def rotate_webhook(webhook_id: str, ctx: AuthContext = Writer) -> Response:
    """A new signing secret (shown this once); the previous one keeps signing beside it for 24 h."""
    return _json(svc.rotate(ctx.workspace_id, webhook_id))


@router.post(
    "/webhooks/{webhook_id}/test",
    status_code=202,
    response_model=WebhookTestOut,
    operation_id="testWebhook",
    responses=responses(404, 409),
)
def test_webhook(webhook_id: str, settings: SettingsDep, ctx: AuthContext = Writer) -> Response:
    """Queue a `webhook.test` event to this endpoint only. 409 `webhook_disabled` for a disabled endpoint, 409
    `webhook_url_refused` when the address rule refuses its URL now (the message names the setting)."""
    return _json(svc.send_test(settings, ctx.workspace_id, webhook_id), 202)


@router.get(
    "/webhooks/{webhook_id}/deliveries",
    response_model=DeliveryList,
    operation_id="listWebhookDeliveries",
    responses=responses(404),
)
def list_deliveries(
    webhook_id: str,
    ctx: AuthContext = Reader,
    status: DeliveryStatus | None = Query(None, description="only deliveries in this state"),
    limit: int = Query(20, ge=1, le=100, description="page size (1-100)"),
    cursor: str | None = Query(
        None,
        max_length=200,
        json_schema_extra={"pattern": DELIVERY_CURSOR},  # stated here; another shape: 400 invalid_cursor
        description="`nextCursor` of the previous page, as it came",
    ),
) -> Response:
    """The endpoint's deliveries, newest first, each with every attempt (time, status code, duration, error)."""
    return _json(svc.list_deliveries(ctx.workspace_id, webhook_id, status=status, limit=limit, cursor=cursor))
