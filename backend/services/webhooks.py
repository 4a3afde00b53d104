"""Webhooks (spec 6; docs/webhooks.md): endpoints, the delivery of events to them, the delivery log, replay.

Events are recorded with their deliveries by backend/services/events.py, in the transaction of the change they
report. Each delivery is one job (`webhook.deliver`, backend/jobs/webhooks.py) on its endpoint's serial lane:
`deliver` makes one signed attempt and records it; a failure that may pass is tried again on the schedule
SOCIALPUB_WEBHOOK_RETRY_SCHEDULE (the job is queued again for the delay: `RetryLater`), the delivery waiting
`pending` with `next_attempt_at`; 410 Gone disables the endpoint; the last failed attempt ends the delivery
`failed` and flags the endpoint `failing`.
"""

from __future__ import annotations

import json
import logging
import random
from datetime import datetime, timedelta
from typing import Any

from peewee import fn

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.outbound.guard import FetchError, check_url
from backend.queue.backoff import RetryLater
from backend.schemas.webhooks import BARE_EVENT_TYPES, EVENT_TYPE_HEADER, EVENT_TYPES, MAX_ENDPOINTS
from backend.services import cursors, events
from backend.store.db import locked, tx
from backend.store.instance import address_rule
from backend.store.models import Event, WebhookAttempt, WebhookDelivery, WebhookEndpoint
from backend.webhooks import send, signing

log = logging.getLogger("socialpub.webhooks")

ROTATION_GRACE = timedelta(hours=24)
LOG_RETENTION = timedelta(days=30)  # settled deliveries (and their attempts) are kept this long
JITTER = 0.10  # each scheduled wait is stretched by up to this fraction
MAX_LIST_LIMIT = 100


# ---------------------------------------------------------------------------------------------- endpoints


def _not_found(endpoint_id: str) -> ApiError:
    return ApiError(404, "webhook_not_found", f"no webhook endpoint {endpoint_id} in this workspace")


def to_public(ep: WebhookEndpoint, *, with_secret: bool = False) -> dict[str, Any]:
    out = {
        "id": ep.id,
        "url": ep.url,
        "events": list(ep.event_types or []),
        "description": ep.description,
        "enabled": bool(ep.enabled),
        "disabledReason": ep.disabled_reason,
        "failing": ep.failing_since is not None,
        "failingSince": clock.iso(ep.failing_since),
        "lastDeliveryAt": clock.iso(ep.last_delivery_at),
        "lastStatusCode": ep.last_status_code,
        "secretRotatedAt": clock.iso(ep.secret_rotated_at),
        "createdAt": clock.iso(ep.created_at),
        "updatedAt": clock.iso(ep.updated_at),
    }
    if with_secret:
        out["secret"] = ep.secret
    return out


def check_endpoint_url(url: str, settings: Settings) -> str:
    """The URL rules of media fetches (scheme, no credentials, the address rule as the data dir sets it): 400
    `invalid_webhook_url`, whose message says which setting refuses a local receiver and how to change it."""
    try:
        check_url(url, address_rule(settings))
    except FetchError as exc:
        detail = {"field": "url", "rule": exc.rule, **({"setting": exc.setting} if exc.setting else {})}
        raise ApiError(
            400, "invalid_webhook_url", f"the webhook URL is refused: {exc.message}", [detail]
        ) from None
    return url.strip()


def _refuse_unreachable(settings: Settings, ep: WebhookEndpoint) -> None:
    """409 `webhook_url_refused` when the address rule this process applies now refuses the endpoint's URL (the
    data dir's setting changed since it was added): a test or a redelivery would only be refused by the worker."""
    try:
        check_url(ep.url, address_rule(settings))
    except FetchError as exc:
        if exc.setting is None:
            return  # no setting decides it (the name does not resolve now): the attempt will say what happens
        raise ApiError(
            409,
            "webhook_url_refused",
            f"the address rule refuses deliveries to the endpoint {ep.id} ({ep.url}): "
            + exc.message.removeprefix("refused by the address rule: "),
            [{"endpointId": ep.id, "rule": exc.rule, "setting": exc.setting}],
        ) from None


def _event_types(value: list[str] | None) -> list[str]:
    types = list(dict.fromkeys(value or []))
    unknown = [t for t in types if t not in EVENT_TYPES]
    if unknown:
        raise ApiError(
            400,
            "validation_error",
            f"unknown event type(s) {', '.join(map(repr, unknown))}; known: {', '.join(EVENT_TYPES)}",
            [
                {
                    "field": "events",
                    "error": "unknown_event_type",
                    "message": f"{t!r} is not an event type",
                    "value": t,
                }
                for t in unknown
            ],
        )
    return types


def _description(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def create(
    settings: Settings, workspace_id: str, body: dict[str, Any], *, dry_run: bool = False
) -> dict[str, Any]:
    """POST /v1/webhooks: 201 with the secret, shown this once. `dry_run` (`?dryRun=true`): every check of the
    real call, nothing created: 200 `{dryRun: true, url, events}` (`socialpub webhooks listen` asks it whether its
    URL would be taken before saying how to register it)."""
    url = check_endpoint_url(body["url"], settings)
    types = _event_types(body.get("events"))
    now = clock.now()
    with tx():
        count = WebhookEndpoint.select().where(WebhookEndpoint.workspace == workspace_id).count()
        if count >= MAX_ENDPOINTS:
            raise ApiError(
                409,
                "webhook_limit_reached",
                f"a workspace has at most {MAX_ENDPOINTS} webhook endpoints: delete one first",
            )
        if dry_run:
            return {"dryRun": True, "url": url, "events": types}
        ep = WebhookEndpoint.create(
            id=new_id("we"),
            workspace=workspace_id,
            url=url,
            description=_description(body.get("description")),
            event_types=types,
            secret=signing.new_secret(),
            enabled=True,
            created_at=now,
            updated_at=now,
        )
    return to_public(ep, with_secret=True)


def _get(workspace_id: str, endpoint_id: str, *, lock: bool = False) -> WebhookEndpoint:
    q = WebhookEndpoint.select().where(
        (WebhookEndpoint.id == endpoint_id) & (WebhookEndpoint.workspace == workspace_id)
    )
    ep: WebhookEndpoint | None = (locked(q) if lock else q).first()
    if ep is None:
        raise _not_found(endpoint_id)
    return ep


def get(workspace_id: str, endpoint_id: str) -> dict[str, Any]:
    return to_public(_get(workspace_id, endpoint_id))


def list_public(workspace_id: str) -> dict[str, Any]:
    rows = (
        WebhookEndpoint.select()
        .where(WebhookEndpoint.workspace == workspace_id)
        .order_by(WebhookEndpoint.id.desc())
        .limit(MAX_ENDPOINTS)
    )
    return {"items": [to_public(r) for r in rows]}


def update(
    settings: Settings, workspace_id: str, endpoint_id: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """PATCH /v1/webhooks/:id: the fields given (`changes` holds only those sent)."""
    for name in ("url", "events", "enabled"):
        if name in changes and changes[name] is None:
            raise ApiError(
                400,
                "validation_error",
                f"{name} cannot be null",
                [{"field": name, "error": "null_not_allowed", "message": f"{name} cannot be null"}],
            )
    values: dict[str, Any] = {}
    if "url" in changes:
        values["url"] = check_endpoint_url(changes["url"], settings)
    if "events" in changes:
        values["event_types"] = _event_types(changes["events"])
    if "description" in changes:
        values["description"] = _description(changes["description"])
    with tx():
        ep = _get(workspace_id, endpoint_id, lock=True)
        if "enabled" in changes:
            if changes["enabled"] and not ep.enabled:
                values.update(enabled=True, disabled_reason=None, failing_since=None)
            elif not changes["enabled"] and ep.enabled:
                values.update(enabled=False, disabled_reason="disabled by a user")
        if values:
            values["updated_at"] = clock.now()
            WebhookEndpoint.update(**values).where(WebhookEndpoint.id == ep.id).execute()
        ep = _get(workspace_id, endpoint_id)
    return to_public(ep)


def delete(workspace_id: str, endpoint_id: str) -> dict[str, Any]:
    """DELETE /v1/webhooks/:id: the endpoint, its deliveries and their log go; a delivery job left behind finds
    nothing to do."""
    with tx():
        ep = _get(workspace_id, endpoint_id, lock=True)
        ids = [
            d.id for d in WebhookDelivery.select(WebhookDelivery.id).where(WebhookDelivery.endpoint == ep.id)
        ]
        for chunk in range(0, len(ids), 500):
            part = ids[chunk : chunk + 500]
            WebhookAttempt.delete().where(WebhookAttempt.delivery.in_(part)).execute()
        WebhookDelivery.delete().where(WebhookDelivery.endpoint == ep.id).execute()
        WebhookEndpoint.delete().where(WebhookEndpoint.id == ep.id).execute()
    return {"id": endpoint_id, "deleted": True}


def rotate(workspace_id: str, endpoint_id: str) -> dict[str, Any]:
    """POST /v1/webhooks/:id/rotate: a new secret; the current one keeps signing beside it for 24 h."""
    now = clock.now()
    with tx():
        ep = _get(workspace_id, endpoint_id, lock=True)
        values = dict(
            secret=signing.new_secret(),
            previous_secret=ep.secret,
            previous_secret_until=now + ROTATION_GRACE,
            secret_rotated_at=now,
            updated_at=now,
        )
        WebhookEndpoint.update(**values).where(WebhookEndpoint.id == ep.id).execute()
        ep = _get(workspace_id, endpoint_id)
    return to_public(ep, with_secret=True)


def _refuse_disabled(ep: WebhookEndpoint) -> None:
    if not ep.enabled:
        raise ApiError(
            409,
            "webhook_disabled",
            f"the endpoint {ep.id} is disabled ({ep.disabled_reason}): {_how_to_enable([ep.id])} first",
        )


def _how_to_enable(endpoint_ids: list[str]) -> str:
    """How to re-enable these endpoints, through the API and the CLI."""
    if len(endpoint_ids) == 1:
        return (
            f're-enable it with PATCH /v1/webhooks/{endpoint_ids[0]} {{"enabled": true}} '
            f"(`socialpub webhooks enable {endpoint_ids[0]}`)"
        )
    return (
        're-enable them with PATCH /v1/webhooks/{id} {"enabled": true} ('
        + ", ".join(f"`socialpub webhooks enable {i}`" for i in endpoint_ids)
        + ")"
    )


def send_test(settings: Settings, workspace_id: str, endpoint_id: str) -> dict[str, Any]:
    """POST /v1/webhooks/:id/test: a `webhook.test` event delivered to this endpoint only."""
    with tx():
        ep = _get(workspace_id, endpoint_id, lock=True)
        _refuse_disabled(ep)
        _refuse_unreachable(settings, ep)
        event = events.record(
            workspace_id,
            "webhook.test",
            {"endpointId": ep.id, "message": "a test event from socialpub"},
            endpoint_id=ep.id,
        )
        delivery = (
            WebhookDelivery.select(WebhookDelivery.id).where(WebhookDelivery.event_id == event.id).first()
        )
    return {"eventId": event.id, "deliveryId": delivery.id}


# ---------------------------------------------------------------------------------------------- events


def _event_not_found(event_id: str) -> ApiError:
    return ApiError(404, "event_not_found", f"no event {event_id} in this workspace")


def _event(workspace_id: str, event_id: str) -> Event:
    row: Event | None = (
        Event.select().where((Event.id == event_id) & (Event.workspace_id == workspace_id)).first()
    )
    if row is None:
        raise _event_not_found(event_id)
    return row


def get_event(workspace_id: str, event_id: str) -> dict[str, Any]:
    row = _event(workspace_id, event_id)
    return {
        "id": row.id,
        "type": row.type,
        "createdAt": clock.iso(row.created_at),
        "subjectId": row.subject_id,
        "data": row.data,
    }


def redeliver(
    settings: Settings, workspace_id: str, event_id: str, endpoint_id: str | None
) -> dict[str, Any]:
    """POST /v1/events/:id/redeliver: a new delivery (same `webhook-id`) to `endpoint_id`, or to every endpoint
    that had the event and is still enabled (none had it: the enabled endpoints that take its type now). 409
    `webhook_url_refused` when the address rule refuses an endpoint's URL now (it would only be refused again)."""
    with tx():
        event = _event(workspace_id, event_id)
        if endpoint_id is not None:
            ep = _get(workspace_id, endpoint_id, lock=True)
            _refuse_disabled(ep)
            _refuse_unreachable(settings, ep)
            targets = [ep.id]
        else:
            had = {
                d.endpoint_id
                for d in WebhookDelivery.select(WebhookDelivery.endpoint).where(
                    (WebhookDelivery.event_id == event.id) & (WebhookDelivery.workspace_id == workspace_id)
                )
            }
            enabled = list(
                WebhookEndpoint.select(
                    WebhookEndpoint.id, WebhookEndpoint.url, WebhookEndpoint.event_types
                ).where(
                    (WebhookEndpoint.workspace == workspace_id) & (WebhookEndpoint.enabled == True)  # noqa: E712
                )
            )
            targets = [e.id for e in enabled if e.id in had]
            if not had:
                targets = [e.id for e in enabled if not e.event_types or event.type in e.event_types]
            if not targets:
                disabled = sorted(had - {e.id for e in enabled})
                fix = (
                    f"the endpoint{'s' if len(disabled) > 1 else ''} that had it "
                    f"{'are' if len(disabled) > 1 else 'is'} disabled: {_how_to_enable(disabled)}"
                    if disabled
                    else "add one (POST /v1/webhooks, `socialpub webhooks add URL`)"
                )
                raise ApiError(
                    409,
                    "no_webhook_endpoint",
                    f"no enabled endpoint takes the event {event.id} ({event.type}): {fix}",
                )
            for e in enabled:
                if e.id in targets:
                    _refuse_unreachable(settings, e)
        ids = events.deliver(event, targets)
    return {"eventId": event.id, "deliveries": ids}


# ---------------------------------------------------------------------------------------------- the log


def delivery_public(d: WebhookDelivery, attempts: list[WebhookAttempt]) -> dict[str, Any]:
    return {
        "id": d.id,
        "endpointId": d.endpoint_id,
        "eventId": d.event_id,
        "eventType": d.event_type,
        "status": d.status,
        "attempts": d.attempts,
        "nextAttemptAt": clock.iso(d.next_attempt_at),
        "createdAt": clock.iso(d.created_at),
        "completedAt": clock.iso(d.completed_at),
        "lastStatusCode": d.last_status_code,
        "lastError": d.last_error,
        "refusedBy": d.refused_by,
        "attemptLog": [
            {
                "at": clock.iso(a.at),
                "statusCode": a.status_code,
                "durationMs": a.duration_ms,
                "error": a.error,
            }
            for a in attempts
        ],
    }


def list_deliveries(
    workspace_id: str,
    endpoint_id: str,
    *,
    status: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> dict[str, Any]:
    """GET /v1/webhooks/:id/deliveries: newest first, each with its attempts."""
    ep = _get(workspace_id, endpoint_id)
    limit = max(1, min(limit, MAX_LIST_LIMIT))
    q = WebhookDelivery.select().where(WebhookDelivery.endpoint == ep.id)
    if status:
        q = q.where(WebhookDelivery.status == status)
    if cursor is not None:  # "" too: an empty cursor is not one this API gave
        q = q.where(
            WebhookDelivery.id < cursors.decode(cursor, "d1", "whd", "GET /v1/webhooks/{id}/deliveries")
        )
    rows = list(q.order_by(WebhookDelivery.id.desc()).limit(limit + 1))
    more = len(rows) > limit
    rows = rows[:limit]
    by_delivery: dict[str, list[WebhookAttempt]] = {r.id: [] for r in rows}
    if rows:
        for a in (
            WebhookAttempt.select()
            .where(WebhookAttempt.delivery.in_(list(by_delivery)))
            .order_by(WebhookAttempt.at, WebhookAttempt.id)
        ):
            by_delivery[a.delivery_id].append(a)
    return {
        "items": [delivery_public(r, by_delivery[r.id]) for r in rows],
        "nextCursor": cursors.encode("d1", rows[-1].id) if more and rows else None,
    }


# ---------------------------------------------------------------------------------------------- delivery


def message(event: Event) -> bytes:
    """The body sent for an event: the bare object for generation events (spec 6), the envelope otherwise."""
    payload = (
        event.data
        if event.type in BARE_EVENT_TYPES
        else {
            "id": event.id,
            "type": event.type,
            "createdAt": clock.iso(event.created_at),
            "data": event.data,
        }
    )
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def signing_secrets(ep: WebhookEndpoint, now: datetime) -> list[str]:
    """The secrets that sign now: the current one, and a rotated-out one during its grace."""
    grace = ep.previous_secret and ep.previous_secret_until is not None and ep.previous_secret_until > now
    return [ep.secret, ep.previous_secret] if grace else [ep.secret]


def _wait(settings: Settings, attempts: int, retry_after_s: float | None) -> float | None:
    """The wait before the next attempt after `attempts` attempts; None when the schedule is over."""
    delays = settings.webhook_retry_delays
    if attempts >= len(delays):
        return None
    wait = delays[attempts] * (1 + JITTER * random.random())
    return max(wait, retry_after_s) if retry_after_s is not None else wait


def deliver(job: Any, settings: Settings) -> None:
    """The `webhook.deliver` job: one signed attempt of a pending delivery, recorded; RetryLater when the
    schedule says to try again."""
    row = WebhookDelivery.get_or_none(WebhookDelivery.id == job.payload["delivery_id"])
    if row is None or row.status != "pending":
        return  # the endpoint was deleted, or the delivery already settled (disabled endpoint, a redelivery)
    now = clock.now()
    first_wait = settings.webhook_retry_delays[0]
    if row.attempts == 0 and first_wait > 0 and now < row.created_at + timedelta(seconds=first_wait):
        raise RetryLater(
            "waiting for the first attempt",
            delay_s=(row.created_at + timedelta(seconds=first_wait) - now).total_seconds(),
            count_attempt=False,
        )
    ep = WebhookEndpoint.get_or_none(WebhookEndpoint.id == row.endpoint_id)
    event = Event.get_or_none(Event.id == row.event_id)
    if ep is None:
        return
    if not ep.enabled or event is None:
        _settle_without_attempt(
            row.id, "the endpoint is disabled" if event is not None else "the event is gone"
        )
        return
    body = message(event)
    headers = signing.headers(signing_secrets(ep, now), event.id, int(now.timestamp()), body)
    headers[EVENT_TYPE_HEADER] = event.type
    answer = send.post(ep.url, body, headers, settings, address_rule(settings))
    wait = _record(settings, row.id, answer, now)
    if wait is not None:
        raise RetryLater(answer.error or "failed", delay_s=wait)


def _settle_without_attempt(delivery_id: str, error: str) -> None:
    with tx():
        WebhookDelivery.update(
            status="failed", last_error=error, completed_at=clock.now(), next_attempt_at=None
        ).where((WebhookDelivery.id == delivery_id) & (WebhookDelivery.status == "pending")).execute()


def _record(settings: Settings, delivery_id: str, answer: send.Answer, at: datetime) -> float | None:
    """Write an attempt and what it decides, in one transaction. Returns the wait before the next attempt, or
    None when the delivery is settled."""
    now = clock.now()
    with tx():
        row = locked(WebhookDelivery.select().where(WebhookDelivery.id == delivery_id)).first()
        if row is None:
            return None
        WebhookAttempt.insert(
            id=new_id("wha"),
            delivery=row.id,
            at=at,
            status_code=answer.status_code,
            duration_ms=answer.duration_ms,
            error=answer.error,
        ).execute()
        if row.status != "pending":
            return None  # settled meanwhile (the endpoint was disabled): the attempt is logged, nothing else
        attempts = row.attempts + 1
        values: dict[str, Any] = dict(
            attempts=attempts,
            last_status_code=answer.status_code,
            last_error=answer.error,
            next_attempt_at=None,
        )
        endpoint: dict[str, Any] = dict(last_delivery_at=now, last_status_code=answer.status_code)
        wait: float | None = None
        if answer.ok:
            values.update(status="succeeded", completed_at=now)
            endpoint["failing_since"] = None
        elif answer.status_code == 410:
            values.update(status="failed", completed_at=now)
            reason = f"the receiver answered 410 Gone on {clock.iso(now)}"
            endpoint.update(enabled=False, disabled_reason=reason)
            (
                WebhookDelivery.update(
                    status="failed",
                    completed_at=now,
                    next_attempt_at=None,
                    last_error="not sent: the endpoint was disabled (410 Gone)",
                )
                .where(
                    (WebhookDelivery.endpoint == row.endpoint_id)
                    & (WebhookDelivery.status == "pending")
                    & (WebhookDelivery.id != row.id)
                )
                .execute()
            )
            log.warning("webhook endpoint %s disabled: it answered 410 Gone", row.endpoint_id)
        elif answer.setting is not None:
            # refused by a rule a setting decides (the address rule): retrying cannot help until the setting
            # changes, and the endpoint is not at fault: the delivery fails saying which setting (`refusedBy`,
            # and its error says how to change it); the endpoint is not flagged failing. Redeliver once allowed.
            values.update(status="failed", completed_at=now, refused_by=answer.setting)
            log.info(
                "webhook delivery %s of %s to %s refused by the %s setting: %s",
                row.id,
                row.event_id,
                row.endpoint_id,
                answer.setting,
                answer.error,
            )
        else:
            wait = None if answer.refused else _wait(settings, attempts, answer.retry_after_s)
            if wait is None:
                values.update(status="failed", completed_at=now)
                endpoint["failing_since"] = _failing_since(now)
                log.warning(
                    "webhook delivery %s of %s to %s failed after %d attempt(s): %s",
                    row.id,
                    row.event_id,
                    row.endpoint_id,
                    attempts,
                    answer.error,
                )
            else:
                values["next_attempt_at"] = now + timedelta(seconds=wait)
        WebhookDelivery.update(**values).where(WebhookDelivery.id == row.id).execute()
        WebhookEndpoint.update(**endpoint).where(WebhookEndpoint.id == row.endpoint_id).execute()
    return wait


def _failing_since(now: datetime) -> Any:
    """`failing_since` keeps the first failure's time (the parameter converted as the column converts it)."""
    return fn.COALESCE(WebhookEndpoint.failing_since, WebhookEndpoint.failing_since.db_value(now))


def give_up(delivery_id: str, error: str) -> None:
    """A delivery job was buried (its handler kept crashing): the delivery ends `failed`, the endpoint flagged."""
    now = clock.now()
    with tx():
        row = locked(WebhookDelivery.select().where(WebhookDelivery.id == delivery_id)).first()
        if row is None or row.status != "pending":
            return
        WebhookDelivery.update(
            status="failed",
            completed_at=now,
            next_attempt_at=None,
            last_error=f"delivery stopped: {error}"[:2000],
        ).where(WebhookDelivery.id == row.id).execute()
        WebhookEndpoint.update(failing_since=_failing_since(now)).where(
            WebhookEndpoint.id == row.endpoint_id
        ).execute()


def prune(now: datetime) -> int:
    """Forget settled deliveries (with their attempts) older than LOG_RETENTION; the events stay. Returns how many
    deliveries went."""
    cutoff = now - LOG_RETENTION
    old = [
        d.id
        for d in WebhookDelivery.select(WebhookDelivery.id)
        .where((WebhookDelivery.status != "pending") & (WebhookDelivery.completed_at < cutoff))
        .limit(5000)
    ]
    if not old:
        return 0
    with tx():
        WebhookAttempt.delete().where(WebhookAttempt.delivery.in_(old)).execute()
        WebhookDelivery.delete().where(WebhookDelivery.id.in_(old)).execute()
    return len(old)
