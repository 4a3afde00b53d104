"""Generations (spec 2.5, 3.3, 4.5, 6, 8): validation, acceptance with a credit charge, reads, deletion, and the
worker's production of the file.

States: `pending` (accepted, charged) -> `processing` (the worker started it) -> `completed` (`mediaUrl` ready) or
`failed` (`error` says what happened and what to do; the credits are refunded in full). Every move to a final
state writes, in ONE transaction: the generation's columns, its refund (credit ledger, at most once: UNIQUE
index), its event (`generation.completed` / `generation.failed`, the generation object as the body) and the
completion of its job, fenced by the job's lease.

Acceptance (POST /v1/generations) validates everything first (every problem at once: 400 `validation_error`, one
detail per problem with its own code), then requires a current subscription (402 `subscription_required`), then
writes the generation, its charge and its job in one transaction (402 `insufficient_credits` when the balance is
short: nothing is written). `dryRun` stops before writing and answers the price and the balance after.

Production (job `generation.produce`, lane `generation`, one per generation):
1. the generation is locked; a deleted or final one ends the job. A job taken over from a worker whose lease
   expired (killed, or stalled past its lease) while the generation was `processing` was interrupted mid-production:
   the generation fails (refunded), it is not produced a second time behind the user's back;
2. the content guard (backend/generation/guard.py) checks the prompt: a refusal fails it (refunded);
3. a production slot of this process is taken (SOCIALPUB_GENERATION_CONCURRENCY; none free: the job is queued
   again shortly, not counted as an attempt), `pending -> processing` is committed, then the inputs are read
   (start images from the media host or through the SSRF-guarded fetcher; the workspace's brand) and the provider
   is called, outside any transaction;
4. `ProviderRefused` fails it; `ProviderUnavailable` is retried with backoff (its Retry-After honoured) until
   SOCIALPUB_GENERATION_MAX_ATTEMPTS tries, then fails it; any other error is retried by the worker and, once the
   job is buried, its `on_dead` hook fails it;
5. the file is stored on the media host (origin `generated`, held by `generation:<id>` without limit) and the
   generation completed.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend import clock, queue
from backend.config import Settings, get_settings
from backend.datadir import private_dir
from backend.errors import ApiError
from backend.generation import guard, registry
from backend.generation.provider import (
    Brand,
    GenerationRequest,
    Produced,
    Provider,
    ProviderRefused,
    ProviderUnavailable,
)
from backend.generation.registry import ProviderConfigError
from backend.ids import new_id
from backend.media.storage import get_storage, media_base_url
from backend.queue.backoff import RetryLater
from backend.schemas.generations import (
    ASPECT_RATIOS,
    DURATIONS,
    GENERATION_TYPES,
    MAX_SOURCES,
    PROMPT_MAX,
    PROMPT_MIN,
)
from backend.schemas.statuses import GENERATION_FINAL, GenerationStatus
from backend.services import credits, cursors, events, plans
from backend.services import workspace as workspace_service
from backend.services.workspace import PLACEHOLDER_NAMES
from backend.store.db import locked, tx
from backend.store.models import Generation, Media, MediaHold, Workspace

log = logging.getLogger("socialpub.generations")

PRODUCE_JOB = "generation.produce"
LANE = "generation"
DEFAULT_ASPECT = "9:16"
DEFAULT_DURATION = 5
MAX_LIST_LIMIT = 100
MAX_SOURCE_BYTES = 20 * 1024 * 1024  # a start image: the image limit of spec 8


def job_key(generation_id: str) -> str:
    return f"generation:{generation_id}"


def media_ref(generation_id: str) -> str:
    """The media hold of the produced file (backend/services/media.py: released when the creation is deleted)."""
    return f"generation:{generation_id}"


def price(type_: str, duration_sec: int | None) -> int:
    """Spec 8: an image 2 credits; a video 15, 30 or 45 for 5, 10 or 15 seconds."""
    if type_ == "image":
        return plans.CREDIT_COST["IMAGE"]
    return plans.CLIP_COST[str(duration_sec or DEFAULT_DURATION)]


# ---------------------------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class Checked:
    """A request that passed every rule, defaults applied."""

    type: str
    prompt: str
    aspect_ratio: str
    duration_sec: int | None
    source_urls: tuple[str, ...]
    background_url: str | None = None

    @property
    def cost(self) -> int:
        return price(self.type, self.duration_sec)


class _Problems:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def add(self, field: str, code: str, message: str, **extra: Any) -> None:
        self.items.append({"field": field, "error": code, "message": message, **extra})

    def raise_if_any(self) -> None:
        if not self.items:
            return
        summary = "; ".join(f"{p['field']}: {p['error']}" for p in self.items)
        raise ApiError(
            400,
            "validation_error",
            f"invalid generation request ({summary}). Nothing was charged.",
            self.items,
        )


def validate(settings: Settings, workspace_id: str, body: dict[str, Any]) -> Checked:
    """Every rule of spec 4.5 (the duration set is 5/10/15, as the field definition says; the 4/6/8 of the error
    table is the spec's own conflict, resolved in favour of the field). All problems are reported at once."""
    problems = _Problems()
    type_ = body.get("type")
    if type_ not in GENERATION_TYPES:
        problems.add("type", "invalid_type", f"type must be `image` or `video`, not {str(type_)[:40]!r}")
    prompt = body.get("prompt") or ""
    if len(prompt.strip()) < PROMPT_MIN:
        problems.add(
            "prompt",
            "prompt_too_short",
            f"the prompt needs at least {PROMPT_MIN} characters (blanks around it do not count); it has "
            f"{len(prompt.strip())}",
            minLength=PROMPT_MIN,
        )
    elif len(prompt) > PROMPT_MAX:
        problems.add(
            "prompt",
            "prompt_too_long",
            f"the prompt is at most {PROMPT_MAX:,} characters; it has {len(prompt):,}",
            maxLength=PROMPT_MAX,
        )
    aspect = body.get("aspect_ratio")
    if aspect is None:
        aspect = DEFAULT_ASPECT
    elif aspect not in ASPECT_RATIOS:
        problems.add(
            "aspectRatio",
            "invalid_aspect_ratio",
            f"aspectRatio must be one of {', '.join(ASPECT_RATIOS)} (default 9:16), not {str(aspect)[:40]!r}",
            allowed=list(ASPECT_RATIOS),
        )
    duration = body.get("duration_sec")
    if duration is not None:
        if type_ == "image":
            problems.add(
                "durationSec",
                "duration_not_allowed_for_image",
                "durationSec is for videos only: leave it out for an image",
            )
        elif duration not in DURATIONS:
            problems.add(
                "durationSec",
                "invalid_duration",
                f"durationSec must be 5, 10 or 15 (seconds), not {duration}",
                allowed=list(DURATIONS),
            )
    elif type_ == "video":
        duration = DEFAULT_DURATION
    sources = list(body.get("source_urls") or [])
    if sources and type_ == "image":
        problems.add(
            "sourceUrls",
            "source_urls_not_allowed_for_image",
            "sourceUrls (start images) are for videos only: leave them out for an image",
        )
    elif len(sources) > MAX_SOURCES:
        problems.add(
            "sourceUrls",
            "too_many_source_urls",
            f"at most {MAX_SOURCES} source images: one start image, or a first and a last frame; "
            f"{len(sources)} were given",
            maxItems=MAX_SOURCES,
        )
    elif sources:
        for i, url in enumerate(sources):
            why = source_problem(settings, workspace_id, url)
            if why is not None:
                problems.add(f"sourceUrls.{i}", why[0], f"{url[:200]}: {why[1]}", sourceUrl=url)
    background = body.get("background_url")
    if background is not None:
        if type_ == "video":
            problems.add(
                "backgroundUrl",
                "background_url_not_allowed_for_video",
                "backgroundUrl (a photo behind the design) is for images only: a video takes start images, "
                "sourceUrls",
            )
        elif type_ == "image":
            why = source_problem(settings, workspace_id, background, what="background")
            if why is not None:
                problems.add(
                    "backgroundUrl", why[0], f"{background[:200]}: {why[1]}", backgroundUrl=background
                )
    problems.raise_if_any()
    return Checked(
        str(type_),
        prompt,
        str(aspect),
        duration if type_ == "video" else None,
        tuple(sources),
        background if type_ == "image" else None,
    )


def _on_media_host(settings: Settings, url: str) -> bool:

    return url.startswith(media_base_url(settings))


def source_problem(
    settings: Settings, workspace_id: str, url: str, *, what: str = "source"
) -> tuple[str, str] | None:
    """(code, why) when `url` cannot be a start image (`what` "source": codes `source_url_unreadable`,
    `source_not_an_image`) or a background photo ("background": `background_url_unreadable`,
    `background_not_an_image`): a file of this workspace's media host that is an image, or a public https URL of
    an image (probed through the SSRF-guarded fetcher, as post media are)."""
    # deferred: backend.media.fetch costs ~20 ms of start-up (-X importtime), paid only where it is used
    from backend.media import fetch

    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    unreadable, not_image = f"{what}_url_unreadable", f"{what}_not_an_image"
    label = "a start image" if what == "source" else "a background"
    if _on_media_host(settings, url):
        try:
            row = media_service.get_media(workspace_id, media_service.key_of(url))
        except ApiError:
            return (
                unreadable,
                "no such file in this workspace's media (deleted, expired, or never "
                "uploaded): upload it with POST /v1/media",
            )
        if row.type != "image":
            return not_image, f"{label} must be an image, this file is a video"
        return None
    if not url.lower().startswith("https://"):
        return (
            unreadable,
            f"only https URLs, or files on this service's media host (POST /v1/media), can be {label}",
        )
    try:
        detected = fetch.probe(url, settings)
    except ApiError as exc:
        return unreadable, exc.message
    if detected is None or detected.kind != "image":
        return (
            not_image,
            "the file is not an image this service can read (JPEG, PNG, WebP, HEIC, ...)",
        )
    return None


# ---------------------------------------------------------------------------------------------- acceptance


def _subscription_required() -> ApiError:
    return ApiError(
        402,
        "subscription_required",
        "creating images and videos needs a current subscription: subscribe to a plan (its monthly "
        "credits pay for creations)",
    )


def _insufficient(cost: int, balance: int, what: str) -> ApiError:
    return ApiError(
        402,
        "insufficient_credits",
        f"this {what} costs {cost} credits and the balance is {balance}: nothing was charged. Wait for "
        "the monthly credits of your plan" + (", or choose a shorter video" if "video" in what else ""),
        [{"required": cost, "balance": balance, "missing": cost - balance}],
    )


def _what(checked: Checked) -> str:
    return "image" if checked.type == "image" else f"{checked.duration_sec}-second video"


class Replayed(dict[str, Any]):
    """The public generation already made with an idempotency key (the route answers it with 200)."""


def _existing_by_key(settings: Settings, workspace_id: str, key: str) -> Replayed | None:
    row = Generation.get_or_none((Generation.workspace == workspace_id) & (Generation.idempotency_key == key))
    return Replayed(public(row, settings)) if row is not None else None


def accept(
    settings: Settings, workspace_id: str, body: dict[str, Any], *, dry_run: bool = False
) -> dict[str, Any]:
    """POST /v1/generations: the public generation, accepted (`pending`, charged, its job queued), or with
    `dry_run` the quote (nothing written). Order: 400 validation, 402 subscription, 402 credits.

    `idempotency_key` (extension): a generation already made with the key in this workspace is answered as it
    is (a `Replayed`: 200, nothing validated, charged or queued again), whatever its state. The key's row is
    inserted before the charge in the same transaction, so the UNIQUE (workspace, idempotency_key) index decides
    concurrent requests: the loser reads the winner's generation (409 `idempotency_conflict` only if the winner
    has not committed yet on a database that does not wait: retry). A deleted generation's key is released."""
    key = None if dry_run else body.get("idempotency_key")
    if key is not None:
        found = _existing_by_key(
            settings, workspace_id, key
        )  # fast path only: the UNIQUE index decides races below
        if found is not None:
            return found
    checked = validate(settings, workspace_id, body)
    ws = workspace_service.refresh_allowance(workspace_service.get(workspace_id))
    if not plans.has_current_subscription(
        ws.plan_subscribed, ws.plan_status, ws.plan_period_end, clock.now()
    ):
        raise _subscription_required()
    cost = checked.cost
    if dry_run:
        balance = int(ws.credits_balance)
        enough = balance >= cost
        return {
            "dryRun": True,
            "type": checked.type,
            "durationSec": checked.duration_sec,
            "creditsCost": cost,
            "balance": balance,
            "balanceAfter": balance - cost if enough else None,
            "enough": enough,
        }
    generation_id = new_id("gen")
    with tx():
        now = clock.now()
        row = {
            "id": generation_id,
            "workspace": workspace_id,
            "type": checked.type,
            "status": GenerationStatus.PENDING,
            "prompt": checked.prompt,
            "aspect_ratio": checked.aspect_ratio,
            "duration_sec": checked.duration_sec,
            "source_urls": list(checked.source_urls),
            "background_url": checked.background_url,
            "seed": int.from_bytes(os.urandom(4), "big") >> 1,
            "media_key": None,
            "mime_type": None,
            "error": None,
            "credits_cost": cost,
            "created_at": now,
            "idempotency_key": key,
        }
        if key is not None and not Generation.insert(row).on_conflict_ignore().as_rowcount().execute():
            # the UNIQUE (workspace, idempotency_key) index refused it: a replay, decided before any charge
            found = _existing_by_key(settings, workspace_id, key)
            if found is None:
                raise ApiError(
                    409,
                    "idempotency_conflict",
                    "a generation with this idempotency key is being created by another request: retry",
                )
            return found
        if (
            credits.charge(workspace_id, generation_id, cost, note=_what(checked)) is None
        ):  # the balance first
            raise _insufficient(cost, credits.balance(workspace_id), _what(checked))
        if key is None:
            Generation.insert(row).execute()
        queue.enqueue(
            PRODUCE_JOB,
            {"generation_id": generation_id},
            workspace_id=workspace_id,
            dedupe_key=job_key(generation_id),
            max_attempts=settings.generation_max_attempts,
            lane=LANE,
        )
    return public(row, settings)


# ---------------------------------------------------------------------------------------------- reads


def public(values: dict[str, Any] | Generation, settings: Settings | None) -> dict[str, Any]:
    """The generation object of spec 2.5: the API's answers and the events' body (one serializer). `settings`
    (the media host's address) is needed once there is a file; None: the process's settings."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services.media import url_for

    v = values.__data__ if isinstance(values, Generation) else values
    key = v.get("media_key")
    if key and settings is None:
        settings = get_settings()
    return {
        "id": v["id"],
        "type": v["type"],
        "status": v["status"],
        "prompt": v["prompt"],
        "aspectRatio": v["aspect_ratio"],
        "durationSec": v.get("duration_sec"),
        "sourceUrls": list(v.get("source_urls") or []),
        "backgroundUrl": v.get("background_url"),
        "mediaUrl": url_for(settings, key) if key and settings is not None else None,
        "mimeType": v.get("mime_type"),
        "error": v.get("error"),
        "creditsCost": v["credits_cost"],
        "idempotencyKey": v.get("idempotency_key"),
        "createdAt": clock.iso(v["created_at"]),
        "completedAt": clock.iso(v.get("completed_at")),
    }


def _not_found(generation_id: str) -> ApiError:
    return ApiError(
        404,
        "generation_not_found",
        f"no generation {generation_id[:60]!r} in this workspace (unknown, or deleted)",
    )


def get(workspace_id: str, generation_id: str) -> Generation:
    row = Generation.get_or_none(
        (Generation.id == generation_id)
        & (Generation.workspace == workspace_id)
        & Generation.deleted_at.is_null()
    )
    if row is None:
        raise _not_found(generation_id)
    return row


def get_public(settings: Settings, workspace_id: str, generation_id: str) -> dict[str, Any]:
    return public(get(workspace_id, generation_id), settings)


def list_public(
    settings: Settings,
    workspace_id: str,
    *,
    limit: int = 20,
    cursor: str | None = None,
    status: Sequence[str] | None = None,
    type_: str | None = None,
) -> dict[str, Any]:
    """GET /v1/generations: the workspace's creations, newest first (deleted ones left out), cursor pagination,
    and the workspace's credits as GET /v1/workspace shows them."""
    limit = max(1, min(limit, MAX_LIST_LIMIT))
    q = Generation.select().where((Generation.workspace == workspace_id) & Generation.deleted_at.is_null())
    if cursor is not None:  # "" too: an empty cursor is not one this API gave
        q = q.where(Generation.id < cursors.decode(cursor, "g1", "gen", "GET /v1/generations"))
    if status:
        q = q.where(Generation.status.in_(list(status)))
    if type_:
        q = q.where(Generation.type == type_)
    rows = list(q.order_by(Generation.id.desc()).limit(limit + 1))
    more = len(rows) > limit
    rows = rows[:limit]
    ws = workspace_service.refresh_allowance(workspace_service.get(workspace_id))
    return {
        "items": [public(r, settings) for r in rows],
        "nextCursor": cursors.encode("g1", rows[-1].id) if more and rows else None,
        "credits": workspace_service.to_public(ws)["credits"],
    }


# ---------------------------------------------------------------------------------------------- delete


def delete(settings: Settings, workspace_id: str, generation_id: str) -> dict[str, Any]:
    """DELETE /v1/generations/:id: the creation leaves the list (GET answers 404 from then on).

    - `processing`: 409 `generation_in_progress` (the file is being made: delete it once it is final);
    - `pending`: production never started: the job is dropped and the cost refunded in full;
    - the produced file's hold is released: deleted now, unless posts still use it (a post not yet sent keeps it
      until it is sent + 30 days, the retention rule of spec 8). The answer says which.
    """
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    with tx():
        row = locked(
            Generation.select().where(
                (Generation.id == generation_id)
                & (Generation.workspace == workspace_id)
                & Generation.deleted_at.is_null()
            )
        ).first()
        if row is None:
            raise _not_found(generation_id)
        if row.status == GenerationStatus.PROCESSING:
            raise ApiError(
                409,
                "generation_in_progress",
                f"generation {row.id} is being produced: delete it once it is completed or failed "
                "(poll GET /v1/generations/{id})",
                [{"status": row.status}],
            )
        now = clock.now()
        refunded = 0
        values: dict[Any, Any] = {
            Generation.deleted_at: now,
            Generation.idempotency_key: None,
        }  # key released
        if row.status == GenerationStatus.PENDING:
            moved = credits.refund(workspace_id, row.id, note="deleted before production started")
            refunded = moved.amount if moved is not None else 0
            queue.cancel(job_key(row.id))  # a claimed job finds the generation deleted and ends
            values.update(
                {
                    Generation.status: GenerationStatus.FAILED,
                    Generation.completed_at: now,
                    Generation.error: "Deleted before production started; the credits were refunded.",
                }
            )
        Generation.update(values).where(Generation.id == row.id).execute()
        media = None
        if row.media_key:
            media_service.release(media_ref(row.id), None)
            media = Media.get_or_none(Media.key == row.media_key)
    out: dict[str, Any] = {
        "ok": True,
        "id": row.id,
        "status": row.status,
        "mediaDeleted": False,
        "mediaKeptBy": [],
        "mediaKeptUntil": None,
        "creditsRefunded": refunded,
    }
    if media is not None:
        refs = sorted(h.ref for h in MediaHold.select(MediaHold.ref).where(MediaHold.media == media.id))
        if not refs:
            out["mediaDeleted"] = media_service.delete_if_unheld(settings, media.id)
        else:
            out["mediaKeptBy"] = [r.split(":", 1)[1] for r in refs if r.startswith("post:")] or refs
            out["mediaKeptUntil"] = clock.iso(media.expires_at)
    return out


# ---------------------------------------------------------------------------------------------- production


INTERRUPTED = (
    "Production was interrupted by a restart of the service before the file was finished; create it again"
)
INTERNAL = "An internal error stopped this creation (it has been logged); create it again"


class _LeaseLost(Exception):
    """The job's lease was lost (another worker holds it now): this worker's outcome is not recorded."""


def provider_for(settings: Settings) -> Provider:
    """The configured provider (SOCIALPUB_GENERATION_PROVIDER, the entry-point group of backend.generation)."""

    return registry.get_provider(settings)


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:] if text else "The creation failed"


def _fail_locked(row: Generation, reason: str, job: Any = None) -> None:
    """In the caller's transaction, with the generation row locked and not final: `failed`, `error` set, the full
    refund (once), `completedAt`, the `generation.failed` event, and `job` completed (fenced: _LeaseLost)."""
    now = clock.now()
    moved = credits.refund(row.workspace_id, row.id, note=reason[:200])
    refunded = moved.amount if moved is not None else 0
    error = _sentence(reason) + (f". Your {refunded} credits were refunded." if refunded else ".")
    changed = (
        Generation.update(status=GenerationStatus.FAILED, error=error, completed_at=now)
        .where((Generation.id == row.id) & Generation.status.not_in(GENERATION_FINAL))
        .execute()
    )
    if not changed:
        return
    row.status, row.error, row.completed_at = GenerationStatus.FAILED, error, now
    if job is not None and not queue.complete(job):
        raise _LeaseLost(row.id)
    events.record(row.workspace_id, "generation.failed", public(row, None), subject_id=row.id)
    log.info("generation %s failed: %s", row.id, error)


def _lock(generation_id: str) -> Generation | None:
    row: Generation | None = locked(Generation.select().where(Generation.id == generation_id)).first()
    return row


def fail(generation_id: str, reason: str, job: Any = None) -> bool:
    """Fail a generation that is not final (its own transaction). False when it was final already."""
    try:
        with tx():
            row = _lock(generation_id)
            if row is None or row.status in GENERATION_FINAL:
                if job is not None:
                    queue.complete(job)
                return False
            _fail_locked(row, reason, job)
        return True
    except _LeaseLost:
        log.warning(
            "generation %s: the job's lease was lost; its new holder records the outcome", generation_id
        )
        return False


def give_up(generation_id: str, error: str) -> None:
    """The job's on_dead hook (inside the worker's bury transaction): what the job was making ends `failed`."""
    with tx():
        row = _lock(generation_id)
        if row is not None and row.status not in GENERATION_FINAL:
            log.error("generation %s: its job was buried (%s)", generation_id, error)
            _fail_locked(row, INTERNAL)


def _start(job: Any, settings: Settings) -> Generation | None:
    """Step 1-2 and `pending -> processing`, in one transaction: the row to produce, or None when there is nothing
    more to do (gone, ended, or failed here)."""
    generation_id = job.payload["generation_id"]
    taken_over = queue.taken_over_from(job)
    with tx():
        row = _lock(generation_id)
        if row is None or row.deleted_at is not None or row.status in GENERATION_FINAL:
            queue.complete(job)
            return None
        if row.status == GenerationStatus.PROCESSING and taken_over is not None:
            log.warning(
                "generation %s: interrupted mid-production (its worker %s stopped): failed, refunded",
                row.id,
                taken_over,
            )
            _remove_leftovers(settings, row.id)
            _fail_locked(row, INTERRUPTED, job)
            return None
        refusal = guard.policy(settings).check(row.prompt)
        if refusal is not None:
            _fail_locked(row, refusal.reason, job)
            return None
    return row


def _processing(row: Generation) -> bool:
    """`pending -> processing` as production starts (a generation deleted meanwhile: False)."""
    if row.status == GenerationStatus.PROCESSING:
        return True
    now = clock.now()
    with tx():
        changed = (
            Generation.update(status=GenerationStatus.PROCESSING, started_at=now)
            .where(
                (Generation.id == row.id)
                & (Generation.status == GenerationStatus.PENDING)
                & Generation.deleted_at.is_null()
            )
            .execute()
        )
    if changed:
        row.status, row.started_at = GenerationStatus.PROCESSING, now
    return bool(changed)


class _InputProblem(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _read_source(settings: Settings, workspace_id: str, url: str, label: str = "the start image") -> bytes:
    # deferred: backend.media.fetch costs ~20 ms of start-up (-X importtime), paid only where it is used
    from backend.media import fetch

    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    try:
        if _on_media_host(settings, url):
            row = media_service.get_media(workspace_id, media_service.key_of(url))
            if row.type != "image":
                raise _InputProblem(f"{label} {url} is a video, not an image: give an image")
            return b"".join(get_storage(settings).open_range(row.key, 0, max(0, row.bytes - 1)))
        return fetch.fetch_bytes(url, settings, MAX_SOURCE_BYTES)
    except ApiError as exc:
        raise _InputProblem(
            f"{label} {url} could not be read ({exc.message.rstrip('.')}): upload it with "
            "POST /v1/media and create it again"
        ) from None
    except OSError as exc:
        raise _InputProblem(
            f"{label} {url} could not be read ({exc.strerror or exc}): upload it again "
            "with POST /v1/media and create it again"
        ) from None


_COLOUR = re.compile(r"^#[0-9A-Fa-f]{6}$")


def _brand(settings: Settings, workspace_id: str) -> Brand:
    """The workspace's brand as far as a renderer uses it: name, colours, logo (a file of the media host), the
    other brand fields as text."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    ws = Workspace.get_by_id(workspace_id)
    brand = dict(ws.brand or {})
    colours = tuple(str(c) for c in brand.get("colors") or [] if isinstance(c, str) and _COLOUR.match(c))
    logo = None
    if ws.logo_url and _on_media_host(settings, ws.logo_url):
        try:
            row = media_service.get_media(workspace_id, media_service.key_of(ws.logo_url))
            if row.type == "image":
                logo = b"".join(get_storage(settings).open_range(row.key, 0, max(0, row.bytes - 1)))
        except (ApiError, OSError):
            logo = None  # the logo is decoration: a missing one never fails a creation
    extra = {
        k: (", ".join(map(str, v)) if isinstance(v, list) else str(v))
        for k, v in brand.items()
        if k != "colors" and v
    }
    if ws.description:
        extra.setdefault("description", ws.description)
    # a name socialpub gave (`make run`'s "Local workspace", init's "My workspace") is not a brand: left out
    name = ws.name if ws.name and ws.name not in PLACEHOLDER_NAMES else None
    return Brand(name=name, colors=colours, logo=logo, extra=extra)


def _request(settings: Settings, row: Generation) -> GenerationRequest:
    sources = tuple(_read_source(settings, row.workspace_id, url) for url in row.source_urls or [])
    background = (
        _read_source(settings, row.workspace_id, row.background_url, "the background photo")
        if row.background_url and row.type == "image"
        else None
    )
    return GenerationRequest(
        type=row.type,  # type: ignore[arg-type]  # peewee: a CharField is str; the row's type was checked a GenerationType when accepted
        prompt=row.prompt,
        aspect_ratio=row.aspect_ratio,  # type: ignore[arg-type]  # peewee: a CharField is str; the row's ratio was checked an AspectRatio when accepted
        duration_sec=row.duration_sec if row.type == "video" else None,
        sources=sources,
        background=background,
        brand=_brand(settings, row.workspace_id),
        seed=int(row.seed or 0),
    )


def _work_root(settings: Settings) -> Path:
    return private_dir(settings.data_dir / "tmp" / "generations")


def _remove_leftovers(settings: Settings, generation_id: str) -> None:
    """The working directory an interrupted production left behind."""
    root = settings.data_dir / "tmp" / "generations"
    if root.exists():
        for p in root.glob(f"{generation_id}-*"):
            shutil.rmtree(p, ignore_errors=True)


_slots: dict[int, threading.BoundedSemaphore] = {}
_slots_lock = threading.Lock()
BUSY_RETRY_S = 2.0


def _slot(settings: Settings) -> threading.BoundedSemaphore:
    """This process's production slots (SOCIALPUB_GENERATION_CONCURRENCY): rendering is CPU- and memory-bound
    (the local provider holds full-size frames), unlike the network-bound jobs the worker's pool is sized for."""
    with _slots_lock:
        sem = _slots.get(settings.generation_concurrency)
        if sem is None:
            sem = _slots[settings.generation_concurrency] = threading.BoundedSemaphore(
                settings.generation_concurrency
            )
        return sem


def produce(job: Any, settings: Settings) -> None:
    """The `generation.produce` job (see the module docstring). At most SOCIALPUB_GENERATION_CONCURRENCY
    productions run at once in a worker process; a job beyond that is queued again a moment later (the wait does
    not count as an attempt)."""
    row = _start(job, settings)
    if row is None:
        return
    slot = _slot(settings)
    if not slot.acquire(blocking=False):
        raise RetryLater(
            "every production slot of this worker is busy", delay_s=BUSY_RETRY_S, count_attempt=False
        )
    try:
        if not _processing(row):
            queue.complete(job)  # deleted while it waited
            return
        _produce(job, settings, row)
    finally:
        slot.release()


MISCONFIGURED = (
    "Creations are not available on this server right now (its generation provider is not set up; "
    "the operator has been told): try again later"
)


def _produce(job: Any, settings: Settings, row: Generation) -> None:

    try:
        provider = provider_for(settings)
    except ProviderConfigError as exc:  # an operator's mistake: said in the log; the user is refunded at once
        log.error("generation %s cannot be produced: %s", row.id, exc)
        fail(row.id, MISCONFIGURED, job)
        return
    try:
        request = _request(settings, row)
        with tempfile.TemporaryDirectory(prefix=f"{row.id}-", dir=_work_root(settings)) as work:
            produced = provider.generate(request, Path(work))
            media = _store(settings, row, produced, Path(work))
    except _InputProblem as exc:
        fail(row.id, exc.reason, job)
        return
    except ProviderRefused as exc:
        fail(
            row.id,
            exc.user_message or "the provider refused this request: change the prompt or the images",
            job,
        )
        return
    except ProviderUnavailable as exc:
        message = exc.user_message or "the generation service is temporarily unavailable"
        if job.attempts >= job.max_attempts:
            fail(
                row.id, f"{message.rstrip('.')} (tried {job.attempts} times): try again in a few minutes", job
            )
            return
        log.info(
            "generation %s: provider unavailable (attempt %d of %d): %s",
            row.id,
            job.attempts,
            job.max_attempts,
            message,
        )
        raise RetryLater(f"provider unavailable: {message}", delay_s=exc.retry_after_s) from None
    _complete(settings, job, row, media)


def _store(settings: Settings, row: Generation, produced: Produced, work: Path) -> Media:
    """The produced file onto the media host (origin `generated`, held by the creation)."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    path = Path(produced.path)
    try:
        path.resolve().relative_to(work.resolve())
    except ValueError:
        raise ProviderRefused("the provider wrote its file outside its working directory") from None
    if not path.is_file() or path.stat().st_size == 0:
        raise ProviderUnavailable("the generation service produced no file")
    try:
        media = media_service.store_generated(
            settings, row.workspace_id, path, ref=media_ref(row.id), mime_type=produced.mime_type
        )
    except ApiError as exc:
        if exc.status >= 500:  # storage down: the job retries
            raise RetryLater(f"storing the produced file failed: {exc.message}") from None
        raise _InputProblem(f"the produced file could not be stored ({exc.message})") from None
    if media.type != row.type:
        _drop(settings, row, media)
        raise _InputProblem(f"the generation service produced {media.type} instead of {row.type}")
    return media


def _drop(settings: Settings, row: Generation, media: Media) -> None:
    """A produced file that will not be used: its hold released, the file deleted now (else by the retention
    job: nothing holds it any more)."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    media_service.release(media_ref(row.id), None)
    media_service.delete_if_unheld(settings, media.id)


def _complete(settings: Settings, job: Any, row: Generation, media: Media) -> None:
    try:
        with tx():
            fresh = _lock(row.id)
            if fresh is None or fresh.status != GenerationStatus.PROCESSING or fresh.deleted_at is not None:
                raise _LeaseLost(row.id)
            now = clock.now()
            Generation.update(
                status=GenerationStatus.COMPLETED,
                media_key=media.key,
                mime_type=media.mime_type,
                completed_at=now,
                error=None,
            ).where(Generation.id == row.id).execute()
            fresh.status, fresh.media_key, fresh.mime_type, fresh.completed_at = (
                "completed",
                media.key,
                media.mime_type,
                now,
            )
            if not queue.complete(job):
                raise _LeaseLost(row.id)
            events.record(
                fresh.workspace_id, "generation.completed", public(fresh, settings), subject_id=row.id
            )
    except _LeaseLost:
        log.warning(
            "generation %s: produced, but the job's lease was lost or the generation ended meanwhile: the "
            "file is dropped",
            row.id,
        )
        _drop(settings, row, media)
        return
    log.info("generation %s completed: %s", row.id, media.key)
