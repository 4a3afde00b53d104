"""Dedicated TikTok publishing (spec 2.6, 3.5, 4.6; docs/tiktok.md): photo carousels, videos, status reads.

The spec answers these calls with TikTok's `publishId`, so the init call happens during the request:
1. validate the body, the account (channelId or the oldest connected tiktok account), the media (files of
   this workspace on the media host) and, in DIRECT_POST, the privacy level against creator_info;
2. commit a `TikTokPublish` row (INITIATING) BEFORE calling TikTok, so an attempt is never invisible;
3. call the init endpoint; a refusal ends the row FAILED and answers a clear error (429 rate limit with
   Retry-After, 403 for the daily and pending-draft caps, 400 for other refusals, 502 when TikTok is down);
4. on acceptance, store the publishId, hold the media for an hour (TikTok pulls within one hour) and
   enqueue `tiktok.track` in the same transaction: the worker follows the publication to a terminal
   status without anyone polling, and records `tiktok.publish.completed` / `.inbox_delivered` / `.failed`.

A status read checks the publishId belongs to the requested account (403
`token_not_authorized_for_specified_publish_id` otherwise, as TikTok refuses it), then asks TikTok when the
stored status is not terminal; terminal statuses are never re-read nor retried.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import httpx

from backend import clock, queue
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.media.storage import media_base_url
from backend.networks.base import MediaRef, NetworkError
from backend.networks.tiktok.adapter import UNAUDITED_CODE, classify, off, privacy_problem
from backend.queue.backoff import RetryLater
from backend.schemas.tiktok import (
    DEFAULT_POST_MODE,
    TIKTOK_FINAL,
    TikTokPhotoCreate,
    TikTokStatus,
    TikTokVideoCreate,
)
from backend.services import adapters, events, tokens
from backend.services.publishing.apply import track_poll_s
from backend.store.db import locked, tx
from backend.store.models import Account, Media, TikTokPublish

log = logging.getLogger("socialpub.tiktok")

PLATFORM = "tiktok"
TRACK_JOB = "tiktok.track"
UPLOAD_JOB = "tiktok.upload"
TRACK_DEADLINE_S = 2 * 3600  # same bound as the engine's tiktok targets
FRESH_S = 1.0  # a status read newer than this is served from the store (TikTok allows 30 reads a minute)
MEDIA_PULL_HOLD_S = 3600  # TikTok consumes a media URL within one hour
PHOTO_MIMES = ("image/jpeg", "image/webp")
VIDEO_MIMES = ("video/mp4", "video/quicktime", "video/webm")
DIRECT_ONLY = {
    "privacy_level": "privacyLevel",
    "disable_comment": "disableComment",
    "auto_add_music": "autoAddMusic",
    "disable_duet": "disableDuet",
    "disable_stitch": "disableStitch",
    "brand_content_toggle": "brandContentToggle",
    "brand_organic_toggle": "brandOrganicToggle",
}
# TikTok's init refusals that we answer with 403 (a cap the account hit; retrying soon does not help)
CAP_CODES = {
    "spam_risk_too_many_posts": "spam_risk_too_many_posts",
    "spam_risk_too_many_pending_share": "spam_risk_too_many_pending_shares",
    "spam_risk_too_many_pending_shares": "spam_risk_too_many_pending_shares",
    "reached_active_user_cap": "reached_active_user_cap",
}
EVENT_COMPLETED = "tiktok.publish.completed"
EVENT_FAILED = "tiktok.publish.failed"
EVENT_INBOX = "tiktok.publish.inbox_delivered"
EVENTS = {"PUBLISH_COMPLETE": EVENT_COMPLETED, "SEND_TO_USER_INBOX": EVENT_INBOX, "FAILED": EVENT_FAILED}


# ---------------------------------------------------------------------------------------------- helpers
def adapter_for(settings: Settings, account: Account) -> Any:
    """The account's adapter, looked up through the adapters module at each call (a name bound at import kept
    whatever adapter_for was at that moment: a test's stub, for the rest of its process)."""
    return adapters.adapter_for(account, settings)


def _media_base(settings: Settings) -> str:

    return media_base_url(settings)


def resolve_account(workspace_id: str, channel_id: str | None) -> Account:
    """channelId: that tiktok account of the workspace; none: the oldest connected active one."""
    if channel_id is None:
        acc: Account | None = (
            Account.select()
            .where(
                (Account.workspace == workspace_id)
                & (Account.platform == PLATFORM)
                & (Account.status == "active")
            )
            .order_by(Account.connected_at, Account.id)
            .first()
        )
        if acc is None:
            raise ApiError(
                400,
                "channel_not_connected",
                "no active tiktok account is connected to this workspace: connect one "
                "(GET /v1/accounts lists the connected accounts)",
                [{"platform": PLATFORM, "error": "channel_not_connected"}],
            )
        return acc
    acc = Account.get_or_none((Account.id == channel_id) & (Account.workspace == workspace_id))
    if acc is None or acc.platform != PLATFORM:
        raise ApiError(
            400,
            "channel_not_connected",
            f"channelId {channel_id!r} is not a tiktok account of this workspace "
            "(GET /v1/accounts lists them)",
            [{"platform": PLATFORM, "error": "channel_not_connected", "channelId": channel_id}],
        )
    if acc.status != "active":
        why = "must be reconnected" if acc.status == "needs_reauth" else "is disconnected"
        raise ApiError(
            400,
            "channel_not_connected",
            f"the tiktok account {acc.name!r} {why}",
            [{"platform": PLATFORM, "error": "channel_not_connected", "channelId": channel_id}],
        )
    return acc


def check_media(settings: Settings, workspace_id: str, urls: list[str], kind: str, field: str) -> list[Any]:
    """Every URL must be a live file of this workspace on the media host, of the right type for TikTok. Returns
    the files' Media rows, in order."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    base = _media_base(settings)
    many = kind == "photo"
    off_host = [(i, u) for i, u in enumerate(urls) if not u.startswith(base)]
    if off_host:
        raise ApiError(
            400,
            "media_not_on_media_host",
            f"TikTok pulls media only from this service's media host ({base}): ingest each file "
            "through POST /v1/media (or `socialpub media upload`) and pass the url it returns",
            [
                {"field": f"{field}[{i}]" if many else field, "url": u, "error": "media_not_on_media_host"}
                for i, u in off_host
            ],
        )
    problems: list[dict[str, Any]] = []
    rows: list[Any] = []
    for i, url in enumerate(urls):
        where = f"{field}[{i}]" if many else field
        try:
            row = media_service.get_media(workspace_id, media_service.key_of(url))
            rows.append(row)
        except ApiError:
            problems.append(
                {
                    "field": where,
                    "url": url,
                    "error": "media_unreadable",
                    "message": "no such file in this workspace's media (deleted, expired, or never "
                    "uploaded): upload it again with POST /v1/media",
                }
            )
            continue
        allowed = PHOTO_MIMES if kind == "photo" else VIDEO_MIMES
        if row.mime_type not in allowed:
            want = "a JPEG or WebP image" if kind == "photo" else "an MP4, MOV or WebM video"
            problems.append(
                {
                    "field": where,
                    "url": url,
                    "error": "unsupported_media_type",
                    "message": f"TikTok needs {want} here; this file is {row.mime_type}",
                }
            )
    if problems:
        code = problems[0]["error"]
        raise ApiError(400, code, "; ".join(f"{p['field']}: {p['message']}" for p in problems), problems)
    return rows


def check_public(settings: Settings, account: Account, urls: list[str], rows: list[Any], field: str) -> None:
    """A live account's network must reach the media it pulls (photos always, a video when TikTok is in
    SOCIALPUB_MEDIA_BY_URL): the posts engine's rule (posts.media_url_refusals), refused before anything is sent."""
    # deferred: backend.services.posts.checks costs ~17 ms of start-up (-X importtime), paid only where it is used
    from backend.services.posts.checks import media_url_refusals

    if account.kind != "live":
        return
    refs = [
        MediaRef(url=url, kind="image" if row.type == "image" else "video", mime=row.mime_type)
        for url, row in zip(urls, rows, strict=True)
    ]
    refusals = media_url_refusals(PLATFORM, refs, settings)
    if refusals:
        many = field == "imageUrls"
        where = {url: f"{field}[{i}]" if many else field for i, url in enumerate(urls)}
        raise ApiError(
            400,
            "media_url_not_public",
            refusals[0][1],
            [
                {
                    "platform": PLATFORM,
                    "field": where.get(url, field),
                    "url": url,
                    "error": "media_url_not_public",
                    "message": message,
                    "channelId": account.id,
                }
                for url, message in refusals
            ],
        )


def _reject_direct_only(fields: dict[str, Any]) -> None:
    given = [DIRECT_ONLY[k] for k, v in fields.items() if k in DIRECT_ONLY and v is not None]
    if given:
        raise ApiError(
            400,
            "validation_error",
            f"{', '.join(given)} apply to DIRECT_POST only: in MEDIA_UPLOAD (a draft) the creator "
            "chooses privacy and interactions in the TikTok app. Remove them or set postMode DIRECT_POST",
            [
                {
                    "field": name,
                    "error": "direct_post_only",
                    "message": "accepted with postMode DIRECT_POST only",
                }
                for name in given
            ],
        )


def network_refusal(exc: NetworkError, account: Account) -> ApiError:
    """TikTok refused a call: the error our API answers (docs/tiktok.md, 'Errors')."""
    code = exc.code or "network_error"
    details = [{"platform": PLATFORM, "error": code, "channelId": account.id}]
    if code == "rate_limit_exceeded":
        wait = int(exc.retry_after_s or 60)
        return ApiError(
            429,
            "rate_limit_exceeded",
            f"TikTok's publishing rate limit for this account was reached (about 6 publications a "
            f"minute): wait {wait} s (see Retry-After)",
            details,
            {"Retry-After": str(wait)},
        )
    if code in CAP_CODES:
        return ApiError(403, CAP_CODES[code], exc.reason, details)
    if exc.fail_type == "retriable":
        return ApiError(
            502, "network_error", f"{exc.reason} — nothing was published; retry the call", details
        )
    return ApiError(400, code, exc.reason, details)


def _mark_reauth(account: Account, exc: NetworkError) -> None:
    if exc.auth_refused:
        tokens.mark_needs_reauth(account.id, f"{exc.code}: {exc.reason}")


def _privacy(
    settings: Settings, account: Account, wanted: str | None, branded: bool = False
) -> tuple[str, dict[str, Any]]:
    """DIRECT_POST: (the creator's privacy level, creator_info). TikTok's rules, as the posts engine applies them
    (adapter.privacy_problem): the creator chooses (nothing pre-selected: 400 privacy_level_required_for_target
    naming the account's options), the level is one creator_info offers (400 privacy_level_option_mismatch),
    and an unaudited app (SOCIALPUB_TIKTOK_AUDITED unset) posts only SELF_ONLY to a private account (403
    unaudited_client_can_only_post_to_private_accounts); branded content (`branded`) is never SELF_ONLY (400
    branded_content_cannot_be_private). Nothing is sent to TikTok's init before."""
    adapter = adapter_for(settings, account)
    try:
        info = adapter.creator_info(account.access_token)
    except NetworkError as exc:
        _mark_reauth(account, exc)
        raise network_refusal(exc, account) from None
    except httpx.HTTPError as exc:
        raise ApiError(
            502,
            "network_error",
            f"could not reach TikTok ({type(exc).__name__}); retry the call",
            [{"platform": PLATFORM, "error": "network_error"}],
        ) from None
    offered = [str(x) for x in info.get("privacy_level_options") or []]
    problem = privacy_problem(wanted, offered, audited=adapter.audited, branded=branded)
    if problem is not None:
        code, reason = problem
        raise ApiError(
            403 if code == UNAUDITED_CODE else 400,
            code,
            f"{reason} (tiktok account {account.name!r})",
            [{"field": "privacyLevel", "error": code, "allowed": offered, "channelId": account.id}],
        )
    return str(wanted), info


def _interactions(body: Any, info: dict[str, Any], kind: str) -> dict[str, bool]:
    """The disable_* flags of a direct post: off unless the creator turned them on, and off where creator_info
    says the creator disabled them (TikTok's UX rules)."""
    names = ("comment",) if kind == "photo" else ("comment", "duet", "stitch")
    return {f"disable_{n}": off(getattr(body, f"disable_{n}"), info.get(f"{n}_disabled")) for n in names}


def _disclosure(body: Any) -> dict[str, bool]:
    """The commercial content disclosure of a direct post, always sent (false unless the creator set it)."""
    return {
        "brand_content_toggle": bool(body.brand_content_toggle),
        "brand_organic_toggle": bool(body.brand_organic_toggle),
    }


def _start(
    workspace_id: str,
    account: Account,
    kind: str,
    mode: str,
    title: str,
    description: str,
    urls: list[str],
    post_info: dict[str, Any],
) -> str:
    """Commit the record before the network call: an attempt is always visible."""
    now = clock.now()
    rec_id = new_id("tkp")
    with tx():
        TikTokPublish.create(
            id=rec_id,
            workspace=workspace_id,
            account=account.id,
            kind=kind,
            post_mode=mode,
            status=TikTokStatus.INITIATING,
            title=title,
            description=description,
            media_urls=list(urls),
            post_info=post_info,
            created_at=now,
            updated_at=now,
        )
    return rec_id


def _refused(rec_id: str, exc: NetworkError | None, reason: str) -> None:
    now = clock.now()
    with tx():
        TikTokPublish.update(
            status=TikTokStatus.FAILED,
            fail_reason=(exc.code if exc else None) or "network_error",
            fail_message=reason,
            completed_at=now,
            updated_at=now,
        ).where(TikTokPublish.id == rec_id).execute()


def _accepted(
    settings: Settings,
    rec_id: str,
    publish_id: str,
    account: Account,
    status: str,
    upload_url: str | None = None,
) -> None:
    """TikTok accepted the init: store the publishId, hold the media for the hour TikTok may pull it (or the
    worker upload it) and enqueue the tracking — and, for a FILE_UPLOAD, the upload of the bytes with its
    upload URL — in one transaction: a crash leaves either nothing of it or all of it."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    now = clock.now()
    poll = track_poll_s(settings, account)
    with tx():
        rec = TikTokPublish.get_by_id(rec_id)
        TikTokPublish.update(
            publish_id=publish_id,
            status=status,
            updated_at=now,
            upload_url=upload_url,
            track_deadline=now + timedelta(seconds=TRACK_DEADLINE_S),
        ).where(TikTokPublish.id == rec_id).execute()
        media_service.hold(
            rec.workspace_id,
            list(rec.media_urls or []),
            now + timedelta(seconds=MEDIA_PULL_HOLD_S),
            f"tiktok:{rec_id}",
        )
        if upload_url is not None:
            queue.enqueue(
                UPLOAD_JOB,
                {"id": rec_id},
                workspace_id=rec.workspace_id,
                run_at=now,
                dedupe_key=f"tiktok-upload:{rec_id}",
                max_attempts=settings.retry_max_attempts,
            )
        queue.enqueue(
            TRACK_JOB,
            {"id": rec_id},
            workspace_id=rec.workspace_id,
            run_at=now + timedelta(seconds=poll),
            dedupe_key=f"tiktok:{rec_id}",
            max_attempts=settings.retry_max_attempts,
        )


def _init(settings: Settings, rec_id: str, account: Account, call: Any) -> Any:
    """The init call (call(adapter) -> its answer); a refusal ends the record FAILED and raises the API error."""
    try:
        return call(adapter_for(settings, account))
    except NetworkError as exc:
        _refused(rec_id, exc, exc.reason)
        _mark_reauth(account, exc)
        raise network_refusal(exc, account) from None
    except httpx.HTTPError as exc:
        reason = f"could not reach TikTok ({type(exc).__name__})"
        _refused(rec_id, None, reason)
        raise ApiError(
            502,
            "network_error",
            f"{reason}: the publication may or may not have been accepted; "
            "check the TikTok app before retrying",
            [{"platform": PLATFORM, "error": "network_error", "channelId": account.id}],
        ) from None


# ---------------------------------------------------------------------------------------------- publish
def publish_photo(settings: Settings, workspace_id: str, body: TikTokPhotoCreate) -> dict[str, Any]:
    mode = body.post_mode or DEFAULT_POST_MODE
    if mode == "MEDIA_UPLOAD":
        _reject_direct_only(body.model_dump())
    account = resolve_account(workspace_id, body.channel_id)
    rows = check_media(settings, workspace_id, body.image_urls, "photo", "imageUrls")
    check_public(settings, account, body.image_urls, rows, "imageUrls")  # TikTok pulls photos: no other way
    title, description = body.title or "", body.description or ""
    post_info: dict[str, Any] = {}
    if mode == "DIRECT_POST":
        level, info = _privacy(settings, account, body.privacy_level, bool(body.brand_content_toggle))
        post_info = {
            "privacy_level": level,
            **_interactions(body, info, "photo"),
            "auto_add_music": body.auto_add_music,
            **_disclosure(body),
        }
        post_info = {k: v for k, v in post_info.items() if v is not None}
    rec_id = _start(workspace_id, account, "photo", mode, title, description, body.image_urls, post_info)
    publish_id = str(
        _init(
            settings,
            rec_id,
            account,
            lambda a: a.init_photo(
                account.access_token,
                image_urls=body.image_urls,
                post_mode=mode,
                title=title or None,
                description=description or None,
                **post_info,
            ),
        )
    )
    _accepted(settings, rec_id, publish_id, account, "PROCESSING_DOWNLOAD")
    return {
        "success": True,
        "publishId": publish_id,
        "title": title,
        "description": description,
        "postMode": mode,
        "channelId": account.id,
    }


def publish_video(settings: Settings, workspace_id: str, body: TikTokVideoCreate) -> dict[str, Any]:
    mode = body.post_mode or DEFAULT_POST_MODE
    if mode == "MEDIA_UPLOAD":
        _reject_direct_only(body.model_dump())
    account = resolve_account(workspace_id, body.channel_id)
    rows = check_media(settings, workspace_id, [body.video_url], "video", "videoUrl")
    adapter = adapter_for(settings, account)
    if (
        adapter.media_by_url
    ):  # the posts engine's rule: FILE_UPLOAD unless tiktok is in SOCIALPUB_MEDIA_BY_URL
        check_public(settings, account, [body.video_url], rows, "videoUrl")
    title = body.title or ""
    post_info: dict[str, Any] = {}
    if mode == "DIRECT_POST":
        level, info = _privacy(settings, account, body.privacy_level, bool(body.brand_content_toggle))
        post_info = {
            "privacy_level": level,
            "title": title or None,
            **_interactions(body, info, "video"),
            **_disclosure(body),
        }
        post_info = {k: v for k, v in post_info.items() if v is not None}
    # MEDIA_UPLOAD: TikTok's inbox endpoint takes no title or caption; the title is only echoed
    rec_id = _start(workspace_id, account, "video", mode, title, "", [body.video_url], post_info)
    if adapter.media_by_url:
        publish_id = str(
            _init(
                settings,
                rec_id,
                account,
                lambda a: a.init_video(
                    account.access_token, video_url=body.video_url, post_mode=mode, **post_info
                ),
            )
        )
        _accepted(settings, rec_id, publish_id, account, "PROCESSING_UPLOAD")
    else:  # FILE_UPLOAD: init now (the publishId is the answer), the worker sends the chunks (`tiktok.upload`)
        publish_id, upload_url = _init(
            settings,
            rec_id,
            account,
            lambda a: a.init_video_upload(
                account.access_token, video_size=int(rows[0].bytes), post_mode=mode, **post_info
            ),
        )
        _accepted(settings, rec_id, publish_id, account, "PROCESSING_UPLOAD", upload_url)
    return {
        "success": True,
        "status": TikTokStatus.PROCESSING_UPLOAD,
        "publishId": publish_id,
        "title": title,
        "postMode": mode,
        "channelId": account.id,
    }


# ---------------------------------------------------------------------------------------------- status
def to_status(rec: TikTokPublish) -> dict[str, Any]:
    status = rec.status if rec.status != TikTokStatus.INITIATING else TikTokStatus.PROCESSING_UPLOAD
    out: dict[str, Any] = {
        "status": status,
        "publishId": rec.publish_id,
        "kind": rec.kind,
        "postMode": rec.post_mode,
        "channelId": rec.account_id,
        "updatedAt": clock.iso(rec.updated_at),
    }
    if status == TikTokStatus.FAILED:
        out["failReason"] = rec.fail_reason or "internal"
        out["failMessage"] = rec.fail_message
    if rec.downloaded_bytes is not None:
        out["downloadedBytes"] = rec.downloaded_bytes
    if rec.public_post_ids:
        out["publicPostIds"] = [str(x) for x in rec.public_post_ids]
    return out


def read_status(
    settings: Settings, workspace_id: str, publish_id: str, channel_id: str | None
) -> dict[str, Any]:
    rec = TikTokPublish.get_or_none(
        (TikTokPublish.workspace == workspace_id) & (TikTokPublish.publish_id == publish_id)
    )
    if rec is None:
        raise ApiError(
            404,
            "invalid_publish_id",
            f"no tiktok publication {publish_id!r} in this workspace: use the publishId returned by "
            "POST /v1/publish/tiktok/photo or /video",
            [{"platform": PLATFORM, "error": "invalid_publish_id"}],
        )
    account = resolve_account(workspace_id, channel_id)
    if account.id != rec.account_id:
        owner = Account.get_or_none(Account.id == rec.account_id) if rec.account_id else None
        hint = (
            f"pass channelId={owner.id} (the tiktok account {owner.name!r} that created it)"
            if owner
            else "the account that created it is no longer connected"
        )
        raise ApiError(
            403,
            "token_not_authorized_for_specified_publish_id",
            f"publish id {publish_id} belongs to another tiktok account than {account.name!r} "
            f"({account.id}); TikTok refuses to read it with this account's token: {hint}",
            [
                {
                    "platform": PLATFORM,
                    "error": "token_not_authorized_for_specified_publish_id",
                    "channelId": account.id,
                    "expectedChannelId": rec.account_id,
                }
            ],
        )
    now = clock.now()
    fresh = rec.checked_at is not None and (now - rec.checked_at).total_seconds() < FRESH_S
    if rec.status not in TIKTOK_FINAL and rec.publish_id and not fresh:
        try:
            data = adapter_for(settings, account).fetch_status(account.access_token, rec.publish_id)
        except (NetworkError, httpx.HTTPError) as exc:  # serve what we know; the worker keeps tracking
            log.info("tiktok status read of %s failed: %s", rec.id, getattr(exc, "code", type(exc).__name__))
        else:
            apply_status(rec.id, data)
        rec = TikTokPublish.get_by_id(rec.id)
    return to_status(rec)


def apply_status(rec_id: str, data: dict[str, Any]) -> str:
    """Store a status read from TikTok; a terminal one settles the record and records its event. Returns the
    stored status (a terminal status is never overwritten)."""
    now = clock.now()
    status = str(data.get("status") or TikTokStatus.PROCESSING_DOWNLOAD)
    with tx():
        rec = locked(TikTokPublish.select().where(TikTokPublish.id == rec_id)).first()
        if rec is None:
            return "FAILED"
        if rec.status in TIKTOK_FINAL:
            return str(rec.status)
        changes: dict[str, Any] = {"checked_at": now, "updated_at": now, "checks": TikTokPublish.checks + 1}
        if data.get("downloaded_bytes") is not None:
            changes["downloaded_bytes"] = int(data["downloaded_bytes"])
        if status in TIKTOK_FINAL:
            _finish(rec, status, data, changes, now)
        else:
            changes["status"] = (
                status
                if status in (TikTokStatus.PROCESSING_UPLOAD, TikTokStatus.PROCESSING_DOWNLOAD)
                else rec.status
            )
            TikTokPublish.update(**changes).where(TikTokPublish.id == rec.id).execute()
        return str(changes.get("status", status))


def _finish(
    rec: TikTokPublish, status: str, data: dict[str, Any], changes: dict[str, Any], now: datetime
) -> None:

    changes.update(status=status, completed_at=now, upload_url=None)  # a settled record needs no upload URL
    event: dict[str, Any] = {
        "id": rec.id,
        "platform": PLATFORM,
        "publishId": rec.publish_id,
        "kind": rec.kind,
        "postMode": rec.post_mode,
        "channelId": rec.account_id,
        "status": status,
    }
    if status == TikTokStatus.FAILED:
        reason = str(data.get("fail_reason") or "internal")
        message = str(data.get("fail_message") or classify(reason).reason)
        changes.update(fail_reason=reason, fail_message=message)
        event.update(failReason=reason, failMessage=message)
    else:
        ids = data.get("publicaly_available_post_id") or data.get("publicly_available_post_id") or []
        changes["public_post_ids"] = [str(x) for x in ids]
        if ids:
            event["publicPostIds"] = [str(x) for x in ids]
    TikTokPublish.update(**changes).where(TikTokPublish.id == rec.id).execute()
    events.record(rec.workspace_id, EVENTS[status], event, subject_id=rec.id)


def fail(rec_id: str, reason: str, message: str) -> None:
    apply_status(rec_id, {"status": TikTokStatus.FAILED, "fail_reason": reason, "fail_message": message})


# ---------------------------------------------------------------------------------------------- tracking
def _open(rec_id: str, too_late: str, *, upload: bool = False) -> tuple[TikTokPublish, Account] | None:
    """A job's publication record and its account; None when there is nothing left to do: the record is gone or
    final, has no publishId (or, for `upload`, no upload URL), or its account was disconnected — then the
    record fails `account_disconnected`, the reason ending with `too_late`."""
    rec = TikTokPublish.get_or_none(TikTokPublish.id == rec_id)
    if rec is None or rec.status in TIKTOK_FINAL or not rec.publish_id or (upload and not rec.upload_url):
        return None
    account = Account.get_or_none(Account.id == rec.account_id) if rec.account_id else None
    if account is None or account.status == "disconnected" or not account.access_token:
        fail(rec.id, "account_disconnected", f"the tiktok account was disconnected {too_late}")
        return None
    return rec, account


def track(rec_id: str, settings: Settings) -> None:
    """The `tiktok.track` job: one status read; RetryLater until a terminal status or the deadline."""

    opened = _open(rec_id, "before TikTok reported a final status: check the TikTok app")
    if opened is None:
        return
    rec, account = opened
    now = clock.now()
    if rec.track_deadline is not None and now >= rec.track_deadline:
        fail(
            rec.id,
            "tracking_timeout",
            f"TikTok did not report a final status within {TRACK_DEADLINE_S // 3600} "
            "hours; it may still appear: check the TikTok app",
        )
        return
    poll = track_poll_s(settings, account)
    try:
        data = adapter_for(settings, account).fetch_status(account.access_token, rec.publish_id)
    except httpx.HTTPError as exc:
        raise RetryLater(
            f"tiktok status read failed: {type(exc).__name__}", delay_s=poll, count_attempt=False
        ) from exc
    except NetworkError as exc:
        if exc.fail_type == "retriable":
            raise RetryLater(
                f"tiktok: {exc.code}", delay_s=max(poll, exc.retry_after_s or 0.0), count_attempt=False
            ) from None
        _mark_reauth(account, exc)
        fail(rec.id, exc.code or "internal", exc.reason)
        return
    status = apply_status(rec.id, data)
    if status not in TIKTOK_FINAL:
        raise RetryLater(f"tiktok: {status}", delay_s=poll, count_attempt=False)


# ---------------------------------------------------------------------------------------------- upload
def upload(rec_id: str, settings: Settings) -> None:
    """The `tiktok.upload` job: send a FILE_UPLOAD video's bytes to the upload URL stored with its publishId.

    Crash safe: TikTok publishes nothing before the last byte, and each run first reads the publication's status
    (`uploaded_bytes`) and resumes at that chunk — after a `kill -9` mid-upload the restarted worker sends what is
    missing. An upload URL that died (403: older than 1 h; 404: the task is gone) cannot be used again and a new
    init would give another publishId than the one answered: the record ends FAILED `upload_failed`, saying to
    publish again. Other failures are retried (SOCIALPUB_RETRY_MAX_ATTEMPTS, then FAILED `upload_failed`)."""
    # deferred: backend.services.media costs ~30 ms of start-up (-X importtime), paid only where it is used
    from backend.services import media as media_service

    opened = _open(rec_id, "before the video was uploaded: nothing was published", upload=True)
    if opened is None:
        return
    rec, account = opened
    adapter = adapter_for(settings, account)
    url = str((rec.media_urls or [""])[0])
    row = Media.get_or_none((Media.workspace == rec.workspace_id) & (Media.key == media_service.key_of(url)))
    mime = row.mime_type if row is not None else "video/mp4"
    try:
        data = adapter.load(MediaRef(url=url, kind="video", mime=mime))
    except NetworkError as exc:
        fail(
            rec.id,
            "upload_failed",
            f"the video could not be read to upload it to TikTok ({exc.reason}): nothing was published",
        )
        return
    try:  # where TikTok's copy stands: resume there (0 for a first run)
        progress = adapter.fetch_status(account.access_token, rec.publish_id)
    except NetworkError as exc:
        if exc.fail_type == "retriable":
            raise RetryLater(
                f"tiktok status read before the upload: {exc.code}", delay_s=exc.retry_after_s
            ) from None
        _mark_reauth(account, exc)
        fail(rec.id, exc.code or "upload_failed", exc.reason)
        return
    if (
        str(progress.get("status") or "") != TikTokStatus.PROCESSING_UPLOAD
    ):  # the last chunk was in before a crash
        _uploaded(rec.id)
        apply_status(rec.id, progress)
        return
    start = int(progress.get("uploaded_bytes") or 0)
    try:
        adapter.upload_video(rec.upload_url, data, mime, start=start)
    except NetworkError as exc:
        if exc.http_status in (403, 404):
            fail(
                rec.id,
                "upload_failed",
                f"{exc.reason.split('; it will')[0]}: TikTok's upload URL is valid for one "
                "hour and this publishId cannot take the video any more — nothing was "
                "published; publish the video again",
            )
        elif exc.fail_type == "retriable":
            raise RetryLater(exc.reason, delay_s=exc.retry_after_s) from None
        else:
            fail(rec.id, "upload_failed", f"{exc.reason}: nothing was published")
        return
    _uploaded(rec.id)


def _uploaded(rec_id: str) -> None:
    with tx():
        TikTokPublish.update(upload_url=None, updated_at=clock.now()).where(
            TikTokPublish.id == rec_id
        ).execute()


def give_up_upload(rec_id: str, error: str) -> None:
    """The upload job ran out of attempts (or died on an unexpected error): the publication cannot complete."""
    log.error("tiktok publication %s: upload abandoned: %s", rec_id, error)
    fail(
        rec_id,
        "upload_failed",
        "the upload of the video to TikTok kept failing (details are in the server log "
        f"under {rec_id}): nothing was published; publish the video again",
    )
    _uploaded(rec_id)


def give_up(rec_id: str, error: str) -> None:
    """The tracking job died on an unexpected error: the record must not stay in a processing status."""
    log.error("tiktok publication %s: tracking stopped on an internal error: %s", rec_id, error)
    fail(
        rec_id,
        "internal",
        f"tracking stopped on an internal error (details are in the server log under {rec_id}); "
        "check the TikTok app",
    )
