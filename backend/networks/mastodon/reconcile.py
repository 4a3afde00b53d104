"""Never publish twice on Mastodon (docs.joinmastodon.org/methods/statuses/, read 2026-11-28).

1. Every `POST /api/v1/statuses` of a target carries `Idempotency-Key: idempotency_key(target token)`: within the
   instance's retention a replay answers the first status instead of making a second one. "Idempotency keys are
   stored for up to 1 hour", per account, and only after a success (PostStatusService: `setex … 3_600`).
2. Past that hour (KEY_RETENTION_S, with a margin: TRUST_KEY_S) a key protects nothing: an attempt whose outcome
   is unknown is reconciled through the account's statuses (`GET /api/v1/accounts/:id/statuses`, with
   `read:statuses` the owner sees every visibility) before any new POST.

The match: a status can carry no key of ours that the listing shows (Mastodon keeps no client reference on a
status), so a status is ours when all of these hold — its source text (`GET /api/v1/statuses/:id/source`, the text
as sent, not the rendered HTML) and its `spoiler_text` are exactly what the target sends; it was created no earlier
than the first attempt (minus CLOCK_SLACK_S); and it was posted through socialpub's own app (`application.name`,
which the owner sees, is the client_name socialpub registered on that instance). Text alone could match a status
the user wrote by hand in that window; the application name rules that out, the time window rules out an older
status of ours with the same words."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from backend import clock

KEY_RETENTION_S = 3600.0  # "Idempotency keys are stored for up to 1 hour."
TRUST_KEY_S = 55 * 60.0  # past this, reconcile through the listing before a new POST (F4: margin for clocks)
CLOCK_SLACK_S = 120.0


def idempotency_key(token: str) -> str:
    """The Idempotency-Key of a target's status: its idempotency token (the target id), stable across attempts."""
    if not token:
        raise ValueError("a target's idempotency token is needed for its Idempotency-Key")
    return f"socialpub-{token}"


def key_still_protects(first_attempt_at: datetime | None, now: datetime | None = None) -> bool:
    """Whether a retry may rely on the key alone (the first attempt within TRUST_KEY_S), else reconcile first."""
    if first_attempt_at is None:
        return True
    return ((now or clock.now()) - first_attempt_at).total_seconds() < TRUST_KEY_S


def _created_at(status: dict[str, Any]) -> datetime | None:
    raw = status.get("created_at")
    if not isinstance(raw, str):
        return None
    try:
        return clock.to_utc(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError:
        return None


def is_ours(
    status: dict[str, Any],
    source: dict[str, Any],
    *,
    text: str,
    spoiler_text: str,
    app_name: str,
    attempted_at: datetime | None,
) -> bool:
    """Whether `status` (an entry of the account's listing) with its `source` (/statuses/:id/source) is the
    target's publication: same source text and content warning, through socialpub's app, not older than the first
    attempt. A status whose time cannot be read is not ours (never assume)."""
    application = status.get("application")
    if not isinstance(application, dict) or application.get("name") != app_name:
        return False
    if source.get("text") != text or (source.get("spoiler_text") or "") != spoiler_text:
        return False
    created = _created_at(status)
    if created is None:
        return False
    return attempted_at is None or created >= attempted_at - timedelta(seconds=CLOCK_SLACK_S)
