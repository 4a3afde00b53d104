"""Media: ingestion (spec 4.3), listing, and the retention rule (spec 8). No HTTP here.

Retention, as a function of references
--------------------------------------
A file's deadline (`Media.expires_at`, None = no limit) is recomputed whenever its references change:

* an ingested file (origin `upload` or `url`) lives 30 days from upload;
* a reference (a *hold*) named `ref` keeps it longer: a hold with `until=None` keeps it without limit
  until released, a hold with a date keeps it until that date;
* a generated file (origin `generated`) has no base period: it lives as long as a hold keeps it, so the
  hold its creation registers keeps it without limit until the creation is deleted;
* the deadline is the latest of the base period and every hold; no deadline if any hold is open.

The posts issue only registers references:

* post created (not yet sent) with media URLs:  ``hold(ws, post.media_urls, None, f"post:{post.id}")``
* post sent:                                     ``release(f"post:{post.id}", sent_at)``  (kept to sent + 30 d)
* post cancelled or deleted unsent:              ``release(f"post:{post.id}", None)``     (back to the base rule)
* generation stores its output:                  ``store_generated(settings, ws, data, ref=f"generation:{id}")``
* generation deleted:                            ``release(f"generation:{id}", None)``, then
                                                 ``delete_if_unheld(settings, media_id)`` (at once when unheld)

The periodic job `media.retention` (backend/jobs/retention.py) deletes what is due; the media host
already answers 404 for a file past its deadline.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import re
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from peewee import fn

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.media import fetch
from backend.media.detect import HEAD_BYTES, Detected, detect
from backend.media.images import MAX_IMAGE_BYTES, open_image, process_image
from backend.media.probe import VideoInfo, probe_video
from backend.media.storage import get_storage, media_base_url, valid_key
from backend.services import cursors
from backend.store.db import tx
from backend.store.models import Media, MediaHold
from backend.store.shapes import ListShape, Shape, Slot, insert_shape

log = logging.getLogger("socialpub.media")

RETENTION = timedelta(days=30)
MAX_VIDEO_URL_BYTES = 128 * 1024 * 1024
ORIGINS = ("upload", "url", "generated")
KEY_RANDOM_BYTES = 16  # 128 bits

# Image decodes hold a few hundred MB at worst: bound how many run at once in this process.
_image_slots = threading.BoundedSemaphore(2)


# ---------------------------------------------------------------- keys


def new_key(media_id: str, extension: str) -> str:
    """A file's key on the media host, which serves it without credentials (networks pull from it): a capability.
    `<media id>_<26 base32 characters>.<ext>`: the id (time-sortable, and within one process consecutive inside a
    millisecond: never the secret) and 128 bits from `secrets`, drawn for this key alone, so no key says anything
    about another (migration 0030 gave the files stored before it such keys)."""
    token = base64.b32encode(secrets.token_bytes(KEY_RANDOM_BYTES)).decode().rstrip("=").lower()
    return f"{media_id}_{token}.{extension}"


# ---------------------------------------------------------------- ingestion


def ingest(
    settings: Settings, workspace_id: str, *, url: str | None = None, data_b64: str | None = None
) -> Media:
    """POST /v1/media: exactly one of `url` or `data_b64`."""
    if (url is None) == (data_b64 is None):
        raise ApiError(
            400,
            "validation_error",
            "give exactly one of url or base64",
            [{"field": "url/base64", "error": "exactly_one", "message": "exactly one of url or base64"}],
        )
    if url is not None:
        return ingest_url(settings, workspace_id, url)
    return ingest_bytes(settings, workspace_id, decode_base64(data_b64 or ""), origin="upload")


_DATA_URI = re.compile(r"^data:[\w.+-]+/[\w.+-]+(;[\w=.+-]+)*;base64,", re.IGNORECASE)


def decode_base64(text: str) -> bytes:
    """Standard or URL-safe base64, whitespace ignored, a `data:<type>;base64,` prefix allowed."""
    text = _DATA_URI.sub("", text.strip(), count=1)
    compact = "".join(text.split())
    if "-" in compact or "_" in compact:
        compact = compact.replace("-", "+").replace("_", "/")
    compact += "=" * (-len(compact) % 4)
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ApiError(
            400,
            "validation_error",
            "base64 is not valid base64 data",
            [{"field": "base64", "error": "invalid_base64", "message": str(exc)}],
        ) from exc


def ingest_bytes(
    settings: Settings,
    workspace_id: str,
    data: bytes,
    *,
    origin: str = "upload",
    source_url: str | None = None,
) -> Media:
    detected = detect(data[:HEAD_BYTES])
    storage = get_storage(settings)
    media_id = new_id("med")
    if detected.kind == "image":
        with _image_slots:
            img = process_image(data, detected.format, max_pixels=settings.max_image_pixels)
        key = new_key(media_id, "jpg")
        stored = storage.put_bytes(key, img.data, "image/jpeg")
        return _record(
            storage,
            workspace_id,
            media_id,
            key,
            "image",
            "image/jpeg",
            stored.size,
            stored.sha256,
            origin,
            source_url,
            img.width,
            img.height,
            source_sha256=hashlib.sha256(data).hexdigest(),
        )
    video = probe_video(data, deadline_s=settings.video_probe_timeout_s)  # 400 not_a_video: nothing stored
    key = new_key(media_id, detected.extension)
    stored = storage.put_bytes(key, data, detected.mime_type)
    return _record(
        storage,
        workspace_id,
        media_id,
        key,
        "video",
        detected.mime_type,
        stored.size,
        stored.sha256,
        origin,
        source_url,
        source_sha256=stored.sha256,
        video=video,
    )


def _sniff(head: bytes) -> int:
    detected = detect(head)
    return MAX_IMAGE_BYTES if detected.kind == "image" else MAX_VIDEO_URL_BYTES


def ingest_url(settings: Settings, workspace_id: str, url: str) -> Media:
    """Stream the URL to a temporary file (never whole in memory), then process or store it as is."""
    fetched = fetch.fetch_to_file(url, settings, MAX_VIDEO_URL_BYTES, sniff=_sniff)
    try:
        detected = detect(fetched.head)
        if detected.kind == "image":
            return ingest_bytes(
                settings, workspace_id, fetched.path.read_bytes(), origin="url", source_url=url
            )
        return _store_video_file(settings, workspace_id, fetched.path, detected, origin="url", source_url=url)
    finally:
        fetched.discard()


def _store_video_file(
    settings: Settings,
    workspace_id: str,
    path: Path,
    detected: Detected,
    *,
    origin: str,
    source_url: str | None = None,
) -> Media:
    video = probe_video(path, deadline_s=settings.video_probe_timeout_s)  # 400 not_a_video: nothing stored
    storage = get_storage(settings)
    media_id = new_id("med")
    key = new_key(media_id, detected.extension)
    stored = storage.put_file(key, path, detected.mime_type, move=True)
    return _record(
        storage,
        workspace_id,
        media_id,
        key,
        "video",
        detected.mime_type,
        stored.size,
        stored.sha256,
        origin,
        source_url,
        source_sha256=stored.sha256,
        video=video,
    )


def _record(
    storage: Any,
    workspace_id: str,
    media_id: str,
    key: str,
    kind: str,
    mime: str,
    size: int,
    sha256: str,
    origin: str,
    source_url: str | None,
    width: int | None = None,
    height: int | None = None,
    holds: Iterable[tuple[str, datetime | None]] = (),
    source_sha256: str | None = None,
    video: VideoInfo | None = None,
) -> Media:
    now = clock.now()
    holds = list(holds)
    if video is not None:
        width, height = video.width, video.height
    try:
        with tx():
            media = Media.create(
                id=media_id,
                workspace=workspace_id,
                key=key,
                type=kind,
                mime_type=mime,
                bytes=size,
                width=width,
                height=height,
                sha256=sha256,
                source_sha256=source_sha256,
                origin=origin,
                source_url=(source_url or None) and source_url[:2000],
                created_at=now,
                expires_at=None,
                duration_ms=round(video.duration_s * 1000) if video else None,
                frame_rate=video.frame_rate if video else None,
                video_codec=video.video_codec[:30] if video else None,
                audio_codec=video.audio_codec[:30] if video and video.audio_codec else None,
            )
            for ref, until in holds:
                MediaHold.create(media=media, ref=ref, until=until, created_at=now)
            media.expires_at = compute_expiry(media, [h for _, h in holds])
            media.save()
    except Exception:
        try:
            storage.delete(key)  # the row could not be written: do not leave an unreachable file behind
        except ApiError:
            log.warning("could not remove %s after a failed insert; the orphan sweep will", key)
        raise
    return media


def store_generated(
    settings: Settings, workspace_id: str, data: bytes | Path, *, ref: str, mime_type: str | None = None
) -> Media:
    """Store a file produced by a generation, as is (origin `generated`), held by `ref` without limit.

    `data` is the file's bytes or a path (moved into storage). Its type is detected from its content.
    Release it with ``release(ref, None)`` when the generation is deleted.
    """
    storage = get_storage(settings)
    head = data[:HEAD_BYTES] if isinstance(data, bytes) else _read_head(data)
    detected = detect(head)
    mime = mime_type or ("image/jpeg" if detected.format == "jpeg" else detected.mime_type)
    media_id = new_id("med")
    key = new_key(media_id, detected.extension)
    width = height = None
    video = None
    if (
        detected.kind == "video"
    ):  # our own renderer's file, probed as any video: what the rules read comes from it
        video = probe_video(data, deadline_s=settings.video_probe_timeout_s)
    if detected.kind == "image":
        raw = data if isinstance(data, bytes) else data.read_bytes()
        with open_image(raw, detected.format, settings.max_image_pixels) as im:
            width, height = im.size
        stored = storage.put_bytes(key, raw, mime)
    elif isinstance(data, bytes):
        stored = storage.put_bytes(key, data, mime)
    else:
        stored = storage.put_file(key, data, mime, move=True)
    return _record(
        storage,
        workspace_id,
        media_id,
        key,
        detected.kind,
        mime,
        stored.size,
        stored.sha256,
        "generated",
        None,
        width,
        height,
        holds=[(ref, None)],
        video=video,
    )


def _read_head(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read(HEAD_BYTES)


# ---------------------------------------------------------------- wire format


def url_for(settings: Settings, key: str) -> str:
    return media_base_url(settings) + key


def to_public(media: Media, settings: Settings) -> dict[str, Any]:
    """The media object of spec 2.3 (image: type,url,key,width,height,bytes; video: type,url,key,bytes,mimeType)."""
    out: dict[str, Any] = {"type": media.type, "url": url_for(settings, media.key), "key": media.key}
    if media.type == "image":
        out.update(width=media.width, height=media.height, bytes=media.bytes)
    else:
        out.update(bytes=media.bytes, mimeType=media.mime_type)
    return out


def to_item(media: Media, settings: Settings) -> dict[str, Any]:
    """A media library item (GET /v1/media): the 2.3 fields plus id, origin, createdAt and expiresAt."""
    return {
        "id": media.id,
        "type": media.type,
        "url": url_for(settings, media.key),
        "key": media.key,
        "width": media.width,
        "height": media.height,
        "bytes": media.bytes,
        "mimeType": media.mime_type,
        "origin": media.origin,
        "sha256": media.sha256,
        "sourceSha256": media.source_sha256,
        "durationSec": media.duration_ms / 1000 if media.duration_ms is not None else None,
        "frameRate": media.frame_rate,
        "videoCodec": media.video_codec,
        "audioCodec": media.audio_codec,
        "createdAt": clock.iso(media.created_at),
        "expiresAt": clock.iso(media.expires_at),
    }


# ---------------------------------------------------------------- reading


def _live(now: datetime | Slot) -> Any:  # a Slot in a statement shape
    return Media.expires_at.is_null() | (Media.expires_at > now)


def list_media(
    workspace_id: str,
    *,
    cursor: str | None = None,
    limit: int = 50,
    kind: str | None = None,
    sha256: str | None = None,
    source_sha256: str | None = None,
) -> tuple[list[Media], str | None]:
    """Newest first; `cursor` the previous page's `nextCursor` (400 `invalid_cursor` for one this API did not
    give); `sha256`: the stored bytes'; `source_sha256`: the bytes' as they were sent."""
    now = clock.now()
    query = Media.select().where((Media.workspace == workspace_id) & _live(now))
    if kind:
        query = query.where(Media.type == kind)
    if sha256:
        query = query.where(Media.sha256 == sha256)
    if source_sha256:
        query = query.where(Media.source_sha256 == source_sha256)
    if cursor is not None:  # "" too: an empty cursor is not one this API gave
        query = query.where(Media.id < cursors.decode(cursor, "m1", "med", "GET /v1/media"))
    rows = list(query.order_by(Media.id.desc()).limit(limit + 1))
    next_cursor = cursors.encode("m1", rows[limit - 1].id) if len(rows) > limit else None
    return rows[:limit], next_cursor


# a file by key or id (a post's media checked at acceptance, GET /v1/media/:id): rendered once (store/shapes.py)
_MEDIA_BY_KEY_OR_ID = Shape(
    lambda: (
        Media.select()
        .where(
            ((Media.key == Slot("key")) | (Media.id == Slot("key")))
            & (Media.workspace == Slot("workspace"))
            & _live(Slot("now", Media.expires_at))
        )
        .limit(1)
    )
)


def get_media(workspace_id: str, key_or_id: str) -> Media:
    row: Media | None = _MEDIA_BY_KEY_OR_ID.first(key=key_or_id, workspace=workspace_id, now=clock.now())
    if row is None:
        raise ApiError(404, "media_not_found", "no such media file in this workspace (or it has expired)")
    return row


def servable(key: str) -> Media | None:
    """The row behind a media-host key, if the file may be served now (not past its deadline)."""
    if not valid_key(key):
        return None
    return Media.get_or_none((Media.key == key) & _live(clock.now()))


def delete_media(settings: Settings, workspace_id: str, key_or_id: str) -> None:
    """Delete a file now. Refused (409 media_in_use) while a reference holds it."""
    with tx():
        media = get_media(workspace_id, key_or_id)
        refs = [h.ref for h in MediaHold.select().where(MediaHold.media == media)]
        if refs:
            raise ApiError(
                409,
                "media_in_use",
                f"the file is still referenced by {', '.join(refs[:5])}",
                [{"ref": r} for r in refs],
            )
        key = media.key
        media.delete_instance()
    get_storage(settings).delete(key)


def delete_if_unheld(settings: Settings, media_id: str) -> bool:
    """Delete a file at once if nothing holds it any more (a generation deleted, a produced file not used), instead
    of waiting for the retention job. False (nothing done) while a hold remains. The row goes first, in a
    transaction that checks the holds; then the stored file (a failure there is left to the orphan sweep)."""
    with tx():
        row = Media.get_or_none(Media.id == media_id)
        if row is None or MediaHold.select().where(MediaHold.media == media_id).exists():
            return False
        row.delete_instance()
    try:
        get_storage(settings).delete(row.key)
    except ApiError:
        log.warning("could not remove %s now; the orphan sweep will", row.key)
    return True


# ---------------------------------------------------------------- retention


def compute_expiry(media: Media, holds: Iterable[datetime | None]) -> datetime | None:
    """The retention rule (see module docstring): None = kept without limit."""
    untils = list(holds)
    if any(u is None for u in untils):
        return None
    candidates: list[datetime] = [u for u in untils if u is not None]
    if media.origin != "generated":
        candidates.append(clock.to_utc(media.created_at) + RETENTION)
    if not candidates:
        return clock.now()  # a generated file nothing refers to any more: due now
    return max(clock.to_utc(c) for c in candidates)


# The statements of a post's holds and their release (backend/store/shapes.py: each rendered once, executed with
# its values; a post's holds are at its acceptance and released at its start).
_MEDIA_OF_IDS = ListShape("ids", lambda ids: Media.select().where(Media.id.in_(ids)))
_KEYS_OF_IDS = ListShape("ids", lambda ids: Media.select(Media.key).where(Media.id.in_(ids)))
_LIVE_OF_KEYS = ListShape(
    "keys",
    lambda keys: Media.select().where(
        (Media.workspace == Slot("workspace")) & Media.key.in_(keys) & _live(Slot("now", Media.expires_at))
    ),
)
_SET_EXPIRY = Shape(
    lambda: Media.update(expires_at=Slot("expires", Media.expires_at)).where(Media.id == Slot("media"))
)
_HELD_WITHOUT_LIMIT = Shape(
    lambda: (
        MediaHold.select(MediaHold.media)
        .where((MediaHold.media == Slot("media")) & MediaHold.until.is_null())
        .limit(1)
    )
)
_LATEST_HOLD = Shape(
    lambda: MediaHold.select(fn.MAX(MediaHold.until).alias("latest")).where(MediaHold.media == Slot("media"))
)
_HOLDS_OF_REF = Shape(lambda: MediaHold.select(MediaHold.media).where(MediaHold.ref == Slot("ref")))
_DROP_HOLDS = Shape(lambda: MediaHold.delete().where(MediaHold.ref == Slot("ref")))
_END_HOLDS = Shape(
    lambda: MediaHold.update(until=Slot("until", MediaHold.until)).where(MediaHold.ref == Slot("ref"))
)
_HOLD_KEY = (MediaHold.media, MediaHold.ref)  # an upsert: a hold of `ref` already on a file is replaced


def _refresh(media_ids: Iterable[str]) -> None:
    """Recompute the expiry of these files from their holds. Runs as each post is sent, so the holds are
    aggregated in SQL (one file may be held by thousands of posts)."""
    ids = sorted(set(media_ids))
    if not ids:
        return
    for media in _MEDIA_OF_IDS.rows(ids=ids):
        unlimited, latest = _hold_summary(media.id)
        expiry = compute_expiry(media, [None] if unlimited else ([latest] if latest is not None else []))
        if expiry != media.expires_at:
            _SET_EXPIRY.run(expires=expiry, media=media.id)


def _hold_summary(media_id: str) -> tuple[bool, datetime | None]:
    """(held without limit, latest `until`) over the holds of one file: two seeks on the (media_id, until)
    index (migration 0009), whatever the number of holds."""
    if _HELD_WITHOUT_LIMIT.first(media=media_id) is not None:
        return True, None
    row = _LATEST_HOLD.first(media=media_id)
    until = MediaHold.until.python_value(None if row is None else row.latest)
    return False, until if isinstance(until, datetime) else None


def key_of(url_or_key: str) -> str:
    """The media key in a media URL (its last path segment, query and fragment dropped), or the key itself."""
    text = url_or_key.strip().split("#", 1)[0].split("?", 1)[0]
    return text.rstrip("/").rsplit("/", 1)[-1]


def hold(workspace_id: str, urls_or_keys: Iterable[str], until: datetime | None, ref: str) -> list[str]:
    """Keep the workspace's files named by `urls_or_keys` (media URLs or keys) for reference `ref`.

    `until=None` keeps them without limit until ``release(ref, ...)``; a date keeps them at least until
    then. Holding again with the same `ref` replaces that hold. URLs that are not files of this
    workspace (or files already expired) are ignored. Returns the keys actually held.
    """
    keys = {key_of(u) for u in urls_or_keys if u}
    keys = {k for k in keys if valid_key(k)}
    if not keys:
        return []
    now = clock.now()
    with tx():
        rows = _LIVE_OF_KEYS.rows(workspace=workspace_id, keys=sorted(keys), now=now)
        if rows:  # one upsert: a hold of `ref` already on a file is replaced
            insert_shape(MediaHold, len(rows), conflict=_HOLD_KEY, replace=(MediaHold.until,)).insert(
                [{"media": m.id, "ref": ref, "until": until, "created_at": now} for m in rows]
            )
        held = [m.key for m in rows]
        _refresh(m.id for m in rows)
    return sorted(held)


def release(ref: str, sent_at: datetime | None) -> list[str]:
    """End the open holds of `ref`.

    With `sent_at` (the post was sent): each file stays until ``sent_at + 30 days`` (or longer if another
    rule keeps it). With None (post cancelled or deleted unsent, generation deleted): the holds are
    removed and the files fall back to their base rule (30 days from upload; a generated file
    nothing else holds becomes due at once). Returns the keys affected.
    """
    with tx():
        media_ids = [h.media_id for h in _HOLDS_OF_REF.rows(ref=ref)]
        if not media_ids:
            return []
        if sent_at is None:
            _DROP_HOLDS.run(ref=ref)
        else:
            _END_HOLDS.run(until=clock.to_utc(sent_at) + RETENTION, ref=ref)
        _refresh(media_ids)
        keys = [m.key for m in _KEYS_OF_IDS.rows(ids=sorted(set(media_ids)))]
    return sorted(keys)


@dataclass
class RetentionReport:
    deleted: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    temp_removed: int = 0


def enforce_retention(
    settings: Settings, now: datetime | None = None, *, batch: int = 500
) -> RetentionReport:
    """Delete every file past its deadline: the row first (in a transaction that checks the deadline
    again, so a hold registered meanwhile wins), then the stored file."""
    now = now or clock.now()
    storage = get_storage(settings)
    report = RetentionReport()
    while True:
        due = list(
            Media.select(Media.id, Media.key)
            .where(Media.expires_at.is_null(False) & (Media.expires_at <= now))
            .order_by(Media.expires_at)
            .limit(batch)
        )
        if not due:
            break
        progressed = False
        for row in due:
            with tx():
                gone = (
                    Media.delete()
                    .where((Media.id == row.id) & Media.expires_at.is_null(False) & (Media.expires_at <= now))
                    .execute()
                )
                if gone:
                    MediaHold.delete().where(MediaHold.media == row.id).execute()
            if not gone:
                continue
            progressed = True
            try:
                storage.delete(row.key)
                report.deleted.append(row.key)
            except ApiError:
                report.failed.append(row.key)  # no row any more: the orphan sweep retries the file
        if not progressed or len(due) < batch:
            break
    return report


def sweep_orphans(settings: Settings, now: datetime | None = None) -> list[str]:
    """Delete stored files without a row (a crash between store and insert, a failed delete), once they
    are older than `media_orphan_grace_s`."""
    now = now or clock.now()
    storage = get_storage(settings)
    cutoff = now - timedelta(seconds=settings.media_orphan_grace_s)
    removed: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        known = {m.key for m in Media.select(Media.key).where(Media.key.in_(pending))}
        for key in pending:
            if key not in known:
                try:
                    storage.delete(key)
                    removed.append(key)
                except ApiError:
                    log.warning("orphan %s could not be deleted", key)
        pending.clear()

    for info in storage.iter_keys():
        if clock.to_utc(info.modified) < cutoff and valid_key(info.key):
            pending.append(info.key)
            if len(pending) >= 500:
                flush()
    if pending:
        flush()
    return removed
