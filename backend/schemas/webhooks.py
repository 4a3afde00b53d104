"""Webhooks (spec 6 and its "not shown" parts; docs/webhooks.md): endpoints, deliveries, events. Pure pydantic
(the client imports it)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from backend.schemas.common import DELIVERY_CURSOR, CamelModel, CamelOut, Timestamp, Url, not_nullable

# Every event type a webhook can carry (docs/webhooks.md "Event types").
EVENT_TYPES: tuple[str, ...] = (
    "publish.completed",
    "publish.failed",
    "publish.inbox_delivered",
    "tiktok.publish.completed",
    "tiktok.publish.inbox_delivered",
    "tiktok.publish.failed",
    "generation.completed",
    "generation.failed",
    "account.needs_reauth",
    "account.token_expiring",
    "webhook.test",
)
# Events whose body is the bare object of the API (spec 6: "body is exactly the generation object"); every other
# type is sent in the envelope {"id", "type", "createdAt", "data"}.
BARE_EVENT_TYPES: frozenset[str] = frozenset({"generation.completed", "generation.failed"})
EVENT_TYPE_HEADER = "socialpub-event-type"
MAX_ENDPOINTS = 100
URL_MAX = 2048
DESCRIPTION_MAX = 500
DeliveryStatus = Literal["pending", "succeeded", "failed"]


class WebhookCreate(CamelModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "url": "https://example.com/socialpub",
                    "events": ["publish.completed", "publish.failed"],
                    "description": "ops dashboard",
                },
            ]
        }
    )

    url: str = Field(
        min_length=1,
        max_length=URL_MAX,
        json_schema_extra={"format": "uri"},
        description="http or https; checked by the address rule (public addresses only unless the "
        "data dir allows them: `socialpub admin private-urls on`)",
    )
    events: list[str] | None = Field(
        default=None,
        max_length=len(EVENT_TYPES),
        description="the event types to receive; absent or empty: every type",
        json_schema_extra={"items": {"enum": list(EVENT_TYPES)}},
    )
    description: str | None = Field(default=None, max_length=DESCRIPTION_MAX)


class WebhookPatch(CamelModel):
    model_config = ConfigDict(json_schema_extra=not_nullable("url", "events", "enabled"))

    url: str | None = Field(
        default=None, min_length=1, max_length=URL_MAX, json_schema_extra={"format": "uri"}
    )
    events: list[str] | None = Field(
        default=None, max_length=len(EVENT_TYPES), json_schema_extra={"items": {"enum": list(EVENT_TYPES)}}
    )
    description: str | None = Field(default=None, max_length=DESCRIPTION_MAX, description="null clears it")
    enabled: bool | None = Field(
        default=None,
        description="true re-enables a disabled endpoint and clears its "
        "failing flag; false stops new deliveries",
    )


class WebhookOut(CamelOut):
    id: str
    url: Url
    events: list[str] = Field(description="`[]`: every type")
    description: str | None
    enabled: bool
    disabled_reason: str | None = Field(description="why the endpoint was disabled (410 Gone, or by a user)")
    failing: bool = Field(description="an event exhausted its retries here; cleared by the next success")
    failing_since: Timestamp | None
    last_delivery_at: Timestamp | None
    last_status_code: int | None
    secret_rotated_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class WebhookWithSecret(WebhookOut):
    """The answer of create and rotate: the only time the signing secret is shown."""

    secret: str = Field(description="`whsec_…`: the Standard Webhooks signing secret; shown once")


class WebhookDryRun(CamelOut):
    """`POST /v1/webhooks?dryRun=true`: the URL passed every check of the real call; nothing was created."""

    dry_run: bool = Field(description="always true")
    url: str
    events: list[str]


class WebhookList(CamelOut):
    items: list[WebhookOut]


class WebhookDeleted(CamelOut):
    id: str
    deleted: bool


class AttemptOut(CamelOut):
    at: Timestamp
    status_code: int | None = Field(description="the receiver's HTTP status; null when no answer came")
    duration_ms: int
    error: str | None = Field(description="null on a 2xx; otherwise what went wrong")


class DeliveryOut(CamelOut):
    id: str
    endpoint_id: str
    event_id: str
    event_type: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: Timestamp | None
    created_at: Timestamp
    completed_at: Timestamp | None
    last_status_code: int | None
    last_error: str | None
    refused_by: str | None = Field(
        default=None,
        description="the setting that refused this delivery (`private-urls`: the data dir's address rule, "
        "`socialpub admin private-urls on` allows loopback and private receivers); null when none did",
    )
    attempt_log: list[AttemptOut] = Field(description="every attempt, oldest first")


class DeliveryList(CamelOut):
    items: list[DeliveryOut]
    next_cursor: str | None = Field(
        json_schema_extra={"pattern": DELIVERY_CURSOR},
        description="pass as `cursor` for the next (older) page; null at the end",
    )


class WebhookTestOut(CamelOut):
    event_id: str
    delivery_id: str


class RedeliverBody(CamelModel):
    endpoint_id: str | None = Field(
        default=None,
        max_length=40,
        description="only this endpoint; absent: every endpoint that had the event",
    )


class RedeliverOut(CamelOut):
    event_id: str
    deliveries: list[str]


class EventOut(CamelOut):
    id: str
    type: str
    created_at: Timestamp
    subject_id: str | None = Field(
        description="the post, dedicated tiktok publication or generation it is about"
    )
    data: dict[str, Any]
