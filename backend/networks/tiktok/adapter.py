"""TikTok Content Posting API adapter (NETWORKS.md section 1).

publish: DIRECT_POST video -> /v2/post/publish/video/init/; MEDIA_UPLOAD video -> /inbox/video/init/;
photos (1-35) -> /content/init/ (DIRECT_POST or MEDIA_UPLOAD). A video goes by FILE_UPLOAD (issue 17 item 4: no
public media URL needed): init with video_size / chunk_size / total_chunk_count, then each chunk PUT to the
answered upload_url with Content-Range (chunk_plan: TikTok's 5-64 MB rule; a failed chunk is sent again, at most
CHUNK_ATTEMPTS times); the whole file is loaded in memory first (media are at most 128 MB). PULL_FROM_URL with
video_url when the adapter is built with media_by_url (SOCIALPUB_MEDIA_BY_URL), and always for photos: TikTok
offers nothing else for them. Returns pending with the publish_id; check_status reads /status/fetch/: SEND_TO_USER_INBOX -> inbox_delivered, PUBLISH_COMPLETE ->
published. find_existing pages the creator's public posts (Display API /v2/video/list/) — drafts cannot
be seen there: find_existing raises Unverifiable for them. The list shows a direct post only once TikTok has
processed it (and, on the real network, moderated it: public posts only), so a post whose init reached TikTok
is absent from it for a while: absence is conclusive only LISTING_DELAY_S after the init was over (the engine
waits until then before publishing again).
The dedicated endpoints (issue 7) call creator_info / init_photo / init_video / fetch_status directly.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import httpx

from backend import clock
from backend.networks.base import (
    MAX_LISTING_PAGES,
    PAGES_WITHOUT_WINDOW,
    FailType,
    MediaRef,
    NetworkError,
    Publication,
    PublishOutcome,
    TargetDraft,
    TargetWarning,
    Unverifiable,
    check_failed,
    decode_ref,
    encode_ref,
    never_ready,
)
from backend.networks.choices import AccountChoices, FieldChoice
from backend.networks.factory import AdapterContext
from backend.networks.http import json_or_none, send
from backend.networks.media_loader import MediaLoader
from backend.networks.tiktok import NETWORK
from backend.networks.tiktok.options import CONSENT
from backend.outbound.retry_after import retry_after_s

PLATFORM = NETWORK.name
MB = 1024 * 1024
# FILE_UPLOAD chunking (NETWORKS.md section 1, media transfer guide): chunks of 5-64 MB, the last one taking the
# remainder (so < 2 chunks, <= 128 MB), 1-1000 chunks; a file under 5 MB goes whole. Module constants: tests lower
# them (with the emulator's own) to exercise several chunks with a small file.
CHUNK_SIZE = 10 * MB
MIN_CHUNK_SIZE = 5 * MB
CHUNK_ATTEMPTS = 3  # tries of one chunk (a 5xx or a cut connection sends it again)
CHUNK_RETRY_WAIT_S = 1.0  # before a chunk's next try (times the try's number)
UPLOAD_MIMES = ("video/mp4", "video/quicktime", "video/webm")
# How long after an accepted init the direct post may still be missing from /v2/video/list/ (NETWORKS.md:
# processing < 30 s for 512 MB, so about 4 min for the 4 GB maximum; moderation usually < 1 min). Moderation
# "sometimes" takes hours: a post held that long is not covered (SOCIALPUB_LISTING_DELAY_S raises the bound).
LISTING_DELAY_S = NETWORK.listing_delay_s  # 600 s: the registry entry's
RATE_WINDOW_S = 60.0
DAY_S = 86400.0

# error / fail_reason code -> (fail type, plain words, default wait in seconds)
CODES: dict[str, tuple[FailType, str, float | None]] = {
    "rate_limit_exceeded": (
        "retriable",
        "TikTok's rate limit was reached (about 6 publications a minute per "
        "account); it will be retried after a minute",
        RATE_WINDOW_S,
    ),
    "internal_error": ("retriable", "TikTok had an internal error; it will be retried", None),
    "internal": ("retriable", "TikTok had an internal error while processing; it will be retried", None),
    "spam_risk_too_many_posts": (
        "retriable",
        "the account reached TikTok's daily post cap; retry tomorrow",
        DAY_S,
    ),
    "spam_risk_too_many_pending_share": (
        "retriable",
        "the account has too many pending drafts at TikTok (5 a "
        "day): publish or delete drafts in the TikTok app, then retry",
        DAY_S,
    ),
    "spam_risk_too_many_pending_shares": (
        "retriable",
        "the account has too many pending drafts at TikTok: "
        "publish or delete drafts in the TikTok app, then retry",
        DAY_S,
    ),
    "reached_active_user_cap": (
        "retriable",
        "the app reached TikTok's daily active-user cap; retry tomorrow",
        DAY_S,
    ),
    "video_pull_failed": (
        "retriable",
        "TikTok could not download the video from the media URL; check that it "
        "opens (media URLs must stay reachable for an hour) and retry",
        None,
    ),
    "photo_pull_failed": (
        "retriable",
        "TikTok could not download an image from the media URL; check that it opens and retry",
        None,
    ),
    "file_format_check_failed": (
        "permanent",
        "TikTok refused the file format: use H.264 MP4/MOV/WebM video or JPEG/WebP images",
        None,
    ),
    "duration_check_failed": (
        "permanent",
        "TikTok refused the video duration (3 s to 10 min through the API)",
        None,
    ),
    "frame_rate_check_failed": ("permanent", "TikTok refused the frame rate (23-60 fps)", None),
    "picture_size_check_failed": (
        "permanent",
        "TikTok refused the picture size (at most 1080p, 20 MB)",
        None,
    ),
    "publish_cancelled": ("permanent", "the publication was cancelled", None),
    "auth_removed": ("permanent", "the TikTok account revoked access during the upload: reconnect it", None),
    "spam_risk_user_banned_from_posting": ("permanent", "TikTok has banned this account from posting", None),
    "spam_risk_text": ("permanent", "TikTok refused the text as spam: change it", None),
    "spam_risk": ("permanent", "TikTok refused the post as spam risk", None),
    "access_token_invalid": (
        "permanent",
        "the TikTok access token is invalid or expired: reconnect the account",
        None,
    ),
    "scope_not_authorized": (
        "permanent",
        "the TikTok account did not grant the publishing permission: reconnect it and allow posting",
        None,
    ),
    "scope_permission_missed": (
        "permanent",
        "the TikTok account did not grant a permission this call needs: reconnect it and allow it",
        None,
    ),
    "invalid_file_upload": ("permanent", "TikTok refused the uploaded file", None),
    "url_ownership_unverified": (
        "permanent",
        "the media URL's domain is not verified for the TikTok app: host the media through POST /v1/media",
        None,
    ),
    "privacy_level_option_mismatch": (
        "permanent",
        "the privacy level is not offered by this TikTok account: choose one of its privacy options",
        None,
    ),
    "unaudited_client_can_only_post_to_private_accounts": (
        "permanent",
        "the TikTok app is not audited yet: it can post only as SELF_ONLY to private accounts",
        None,
    ),
    "app_version_check_failed": (
        "permanent",
        "the creator's TikTok app is too old for drafts (31.8 or later needed): update the app",
        None,
    ),
    "invalid_publish_id": ("permanent", "TikTok does not know this publish id", None),
    "token_not_authorized_for_specified_publish_id": (
        "permanent",
        "this publish id belongs to another TikTok account: read it with the account that created it",
        None,
    ),
    "publish_not_cancellable": ("permanent", "the publication can no longer be cancelled", None),
    "invalid_param": ("permanent", "TikTok refused a parameter", None),
    "invalid_params": ("permanent", "TikTok refused a parameter", None),
}


# the codes that mean the account's authorisation is gone (reconnect it): the account turns needs_reauth
AUTH_CODES = frozenset(
    {"access_token_invalid", "scope_not_authorized", "scope_permission_missed", "auth_removed"}
)
# a scope the call needs was not granted (tiktok-api-v2-error-handling)
SCOPE_CODES = frozenset({"scope_not_authorized", "scope_permission_missed"})
UNAUDITED_CODE = "unaudited_client_can_only_post_to_private_accounts"
PRIVACY_REQUIRED = "privacy_level_required_for_target"
BRANDED_PRIVATE = "branded_content_cannot_be_private"
SELF_ONLY_WARNING = "tiktok_self_only"


def self_only_warning() -> TargetWarning:
    """A direct post an unaudited app made: TikTok took it as SELF_ONLY, the only privacy it allows such an app
    (content-sharing-guidelines): it went through, but only the creator sees it."""
    return TargetWarning(
        SELF_ONLY_WARNING,
        "posted on TikTok as 'Only me' (SELF_ONLY): only you see it. The TikTok app is not audited, and TikTok "
        "lets an unaudited app post only privately. To show it to others, change its privacy in the TikTok app; "
        "for later posts, have TikTok audit the app (https://developers.tiktok.com/doc/content-sharing-guidelines) "
        "and set SOCIALPUB_TIKTOK_AUDITED=true",
    )


def classify(
    code: str, message: str = "", http_status: int | None = None, retry_after: float | None = None
) -> NetworkError:
    ftype: FailType
    words: str
    wait: float | None
    known = CODES.get(code)
    if known is not None:
        ftype, words, wait = known
    else:
        retriable = http_status is not None and (http_status >= 500 or http_status == 429)
        ftype, words, wait = (
            ("retriable" if retriable else "permanent"),
            f"TikTok refused the request ({code})",
            None,
        )
    if ftype == "permanent" and message and code.startswith("invalid_param"):
        words = f"{words}: {message}"
    return NetworkError(
        ftype,
        words,
        code=code,
        retry_after_s=retry_after if retry_after is not None else wait,
        http_status=http_status,
        auth_refused=code in AUTH_CODES,
        wait=wait is not None or (ftype == "retriable" and http_status == 429),  # its rate limits and caps
    )


def chunk_plan(size: int) -> tuple[int, int]:
    """(chunk_size, total_chunk_count) for a file of `size` bytes: one piece under MIN_CHUNK_SIZE or under
    CHUNK_SIZE; else size // CHUNK_SIZE chunks of CHUNK_SIZE, the last one also taking the remainder."""
    if size < max(MIN_CHUNK_SIZE, CHUNK_SIZE):
        return size, 1
    return CHUNK_SIZE, size // CHUNK_SIZE


def chunk_ranges(size: int) -> list[tuple[int, int]]:
    """The (first, last) byte of each chunk of chunk_plan(size)."""
    chunk, count = chunk_plan(size)
    return [(i * chunk, size - 1 if i == count - 1 else (i + 1) * chunk - 1) for i in range(count)]


class TikTokAdapter:
    platform = PLATFORM

    def __init__(
        self,
        client: httpx.Client,
        base_url: str = "https://open.tiktokapis.com",
        *,
        media_loader: MediaLoader | None = None,
        media_by_url: bool = False,
        audited: bool = False,
    ) -> None:
        self.client = client
        self.base = base_url.rstrip("/")
        self.media_loader = media_loader
        self.media_by_url = media_by_url  # videos too by PULL_FROM_URL (SOCIALPUB_MEDIA_BY_URL)
        # whether TikTok audited the app (SOCIALPUB_TIKTOK_AUDITED): an unaudited one direct-posts only SELF_ONLY
        # to private accounts (content-sharing-guidelines; docs.md rule unaudited-self-only)
        self.audited = audited

    # --- the API, one method per endpoint -------------------------------------------------------
    def _call(
        self,
        token: str,
        path: str,
        body: dict[str, Any] | None,
        *,
        write: bool = False,
        query: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        resp = send(
            self.client,
            "POST",
            self.base + path,
            network="TikTok",
            write=write,
            params=query,
            json=body if body is not None else {},
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=UTF-8"},
        )
        payload = json_or_none(resp)
        error = (payload or {}).get("error") if isinstance(payload, dict) else None
        code = (error or {}).get("code") if isinstance(error, dict) else None
        if code == "ok" and resp.status_code < 400:
            data = payload.get("data")
            return data if isinstance(data, dict) else {}
        if code is None:
            code = "internal_error" if resp.status_code >= 500 else f"http_{resp.status_code}"
        raise classify(code, str((error or {}).get("message") or ""), resp.status_code, retry_after_s(resp))

    def creator_info(self, token: str) -> dict[str, Any]:
        return self._call(token, "/v2/post/publish/creator_info/query/", None)

    def init_video(
        self,
        token: str,
        *,
        video_url: str,
        post_mode: str = "DIRECT_POST",
        title: str | None = None,
        privacy_level: str | None = None,
        disable_comment: bool | None = None,
        disable_duet: bool | None = None,
        disable_stitch: bool | None = None,
        video_cover_timestamp_ms: int | None = None,
        is_aigc: bool | None = None,
        brand_content_toggle: bool | None = None,
        brand_organic_toggle: bool | None = None,
    ) -> str:
        """A video TikTok pulls from `video_url` (PULL_FROM_URL): its publish_id."""
        data = self._init_video(
            token,
            {"source": "PULL_FROM_URL", "video_url": video_url},
            post_mode,
            title=title,
            privacy_level=privacy_level,
            disable_comment=disable_comment,
            disable_duet=disable_duet,
            disable_stitch=disable_stitch,
            video_cover_timestamp_ms=video_cover_timestamp_ms,
            is_aigc=is_aigc,
            brand_content_toggle=brand_content_toggle,
            brand_organic_toggle=brand_organic_toggle,
        )
        return str(data["publish_id"])

    def init_video_upload(
        self, token: str, *, video_size: int, post_mode: str = "DIRECT_POST", **post_info: Any
    ) -> tuple[str, str]:
        """A video sent by FILE_UPLOAD (sizes of chunk_plan): (publish_id, upload_url)."""
        chunk, count = chunk_plan(video_size)
        data = self._init_video(
            token,
            {
                "source": "FILE_UPLOAD",
                "video_size": video_size,
                "chunk_size": chunk,
                "total_chunk_count": count,
            },
            post_mode,
            **post_info,
        )
        if not data.get("upload_url"):
            raise NetworkError(
                "retriable",
                "TikTok accepted the upload without an upload URL; it will be retried",
                code="no_upload_url",
            )
        return str(data["publish_id"]), str(data["upload_url"])

    def upload_video(self, upload_url: str, data: bytes, mime: str = "video/mp4", *, start: int = 0) -> None:
        """PUT each chunk of chunk_ranges to upload_url in order (206: more expected, 201: complete), from the chunk
        that holds byte `start` (a resumed upload: TikTok's status `uploaded_bytes`). A 5xx or a cut connection
        sends the chunk again (CHUNK_ATTEMPTS in all); anything else ends the upload."""
        ctype = mime if mime in UPLOAD_MIMES else "video/mp4"
        ranges = chunk_ranges(len(data))
        for n, (first, last) in enumerate(ranges, 1):
            if last < start:
                continue
            self._put_chunk(
                upload_url, data[first : last + 1], first, last, len(data), ctype, final=n == len(ranges)
            )

    def load(self, media: MediaRef) -> bytes:
        """The bytes of a media to upload (the adapter's media loader)."""
        return self._load(media)

    def _put_chunk(
        self, upload_url: str, chunk: bytes, first: int, last: int, total: int, ctype: str, *, final: bool
    ) -> None:
        where = f"bytes {first}-{last}/{total}"
        cut = False  # a try was cut after sending: the final chunk may have completed the upload
        for attempt in range(1, CHUNK_ATTEMPTS + 1):
            if attempt > 1 and CHUNK_RETRY_WAIT_S > 0:
                time.sleep(CHUNK_RETRY_WAIT_S * (attempt - 1))
            try:
                resp = send(
                    self.client,
                    "PUT",
                    upload_url,
                    network="TikTok",
                    write=True,
                    content=chunk,
                    headers={"Content-Type": ctype, "Content-Range": where},
                )
            except NetworkError as e:
                cut = cut or e.ambiguous
                continue
            if resp.status_code in (200, 201, 206):
                return
            if resp.status_code >= 500:
                continue
            payload = json_or_none(resp)
            error = payload.get("error") if isinstance(payload, dict) else None
            code = str(error.get("code") or "") if isinstance(error, dict) else ""
            words = {
                403: "the upload URL expired",
                404: "TikTok lost the upload task",
                416: "TikTok expected another byte range",
            }.get(resp.status_code, "TikTok refused the chunk")
            ftype: FailType = "permanent" if resp.status_code == 400 else "retriable"
            raise NetworkError(
                ftype,
                f"the upload of the video to TikTok failed: {words} (HTTP "
                f"{resp.status_code} at {where})" + ("; it will be retried" if ftype == "retriable" else ""),
                code=code or f"http_{resp.status_code}",
                http_status=resp.status_code,
                ambiguous=final and cut,
            )
        raise NetworkError(
            "retriable",
            f"the upload of the video to TikTok kept failing at {where}; it will be retried",
            code="upload_failed",
            ambiguous=final and cut,
        )

    def _init_video(
        self,
        token: str,
        source: dict[str, Any],
        post_mode: str,
        *,
        title: str | None = None,
        privacy_level: str | None = None,
        disable_comment: bool | None = None,
        disable_duet: bool | None = None,
        disable_stitch: bool | None = None,
        video_cover_timestamp_ms: int | None = None,
        is_aigc: bool | None = None,
        brand_content_toggle: bool | None = None,
        brand_organic_toggle: bool | None = None,
    ) -> dict[str, Any]:
        if post_mode == "MEDIA_UPLOAD":  # inbox: source only; the caption is typed in the app
            data = self._call(
                token, "/v2/post/publish/inbox/video/init/", {"source_info": source}, write=True
            )
        else:
            info = {
                "title": title,
                "privacy_level": privacy_level,
                "disable_comment": disable_comment,
                "disable_duet": disable_duet,
                "disable_stitch": disable_stitch,
                "video_cover_timestamp_ms": video_cover_timestamp_ms,
                "is_aigc": is_aigc,
                # the commercial content disclosure, always sent on a direct post (off unless the creator said so)
                "brand_content_toggle": bool(brand_content_toggle),
                "brand_organic_toggle": bool(brand_organic_toggle),
            }
            body = {"post_info": {k: v for k, v in info.items() if v is not None}, "source_info": source}
            data = self._call(token, "/v2/post/publish/video/init/", body, write=True)
        return data

    def init_photo(
        self,
        token: str,
        *,
        image_urls: list[str],
        post_mode: str = "DIRECT_POST",
        title: str | None = None,
        description: str | None = None,
        privacy_level: str | None = None,
        disable_comment: bool | None = None,
        auto_add_music: bool | None = None,
        cover_index: int = 0,
        brand_content_toggle: bool | None = None,
        brand_organic_toggle: bool | None = None,
    ) -> str:
        info: dict[str, Any] = {"title": title, "description": description}
        if post_mode == "DIRECT_POST":
            info.update(
                privacy_level=privacy_level,
                disable_comment=disable_comment,
                auto_add_music=auto_add_music,
                brand_content_toggle=bool(brand_content_toggle),
                brand_organic_toggle=bool(brand_organic_toggle),
            )
        body = {
            "post_info": {k: v for k, v in info.items() if v is not None},
            "source_info": {
                "source": "PULL_FROM_URL",
                "photo_cover_index": cover_index,
                "photo_images": list(image_urls),
            },
            "post_mode": post_mode,
            "media_type": "PHOTO",
        }
        return str(self._call(token, "/v2/post/publish/content/init/", body, write=True)["publish_id"])

    def fetch_status(self, token: str, publish_id: str) -> dict[str, Any]:
        return self._call(token, "/v2/post/publish/status/fetch/", {"publish_id": publish_id})

    def cancel(self, token: str, publish_id: str) -> None:
        self._call(token, "/v2/post/publish/cancel/", {"publish_id": publish_id}, write=True)

    def list_videos(self, token: str, max_count: int = 20) -> list[dict[str, Any]]:
        return self.list_videos_page(token, max_count=max_count)[0]

    def list_videos_page(
        self, token: str, *, cursor: int | None = None, max_count: int = 20
    ) -> tuple[list[dict[str, Any]], int | None, bool]:
        """One page of the creator's public posts, newest first: (videos, next cursor, has_more)."""
        body: dict[str, Any] = {"max_count": max_count}
        if cursor is not None:
            body["cursor"] = cursor
        data = self._call(
            token,
            "/v2/video/list/",
            body,
            query={"fields": "id,title,video_description,create_time,share_url"},
        )
        nxt = data.get("cursor")
        return (
            list(data.get("videos") or []),
            int(nxt) if isinstance(nxt, int) else None,
            bool(data.get("has_more")),
        )

    # --- the adapter protocol -------------------------------------------------------------------
    def _load(self, media: MediaRef) -> bytes:
        if self.media_loader is None:
            raise NetworkError("permanent", "no media loader configured for TikTok uploads", code="no_loader")
        data = self.media_loader(media)
        if not data:
            raise NetworkError("permanent", f"the media {media.url} is empty", code="media_empty")
        return data

    def _direct_post_info(self, pub: Publication) -> dict[str, Any]:
        """What a direct post sends besides its media, from the creator's choice and creator_info (read before
        every direct post: its caps stop the attempt). Never a privacy of socialpub's choosing: the creator's
        (options.privacy_level) must be one creator_info offers; an unaudited app may post only SELF_ONLY to a
        private account. Interactions stay off unless the creator turned them on, and off where creator_info
        says the creator disabled them. Raises NetworkError (permanent, nothing sent) for a refused choice."""
        p, opts = pub.payload, pub.payload.options
        info = self.creator_info(pub.account.access_token)
        offered = [str(x) for x in info.get("privacy_level_options") or []]
        chosen = opts.get("privacy_level")
        branded = bool(opts.get("brand_content_toggle"))
        problem = privacy_problem(chosen, offered, audited=self.audited, branded=branded)
        if problem is not None:
            raise NetworkError("permanent", problem[1], code=problem[0])
        limit = info.get("max_video_post_duration_sec")
        seconds = p.media[0].duration_s if p.kind == "video" and p.media else None
        if isinstance(limit, int | float) and seconds is not None and seconds > float(limit):
            raise NetworkError(
                "permanent",
                f"the video lasts {seconds:.0f} s; this TikTok account may post at most {limit:.0f} s",
                code="duration_check_failed",
            )
        out: dict[str, Any] = {
            "privacy_level": chosen,
            "disable_comment": off(opts.get("disable_comment"), info.get("comment_disabled")),
            # commercial content disclosure: off unless the creator said so, always sent (the API marks it required)
            "brand_content_toggle": branded,
            "brand_organic_toggle": bool(opts.get("brand_organic_toggle")),
        }
        if p.kind == "video":
            out["disable_duet"] = off(opts.get("disable_duet"), info.get("duet_disabled"))
            out["disable_stitch"] = off(opts.get("disable_stitch"), info.get("stitch_disabled"))
        return out

    def _resumed(self, pub: Publication) -> PublishOutcome | None:
        """An interrupted attempt's publish id (pub.resume) TikTok still has: its upload finished from the byte
        TikTok reports (FILE_UPLOAD), or what TikTok says of it once uploaded; None to start over (none saved,
        unknown to TikTok, or failed)."""
        state = decode_ref(pub.resume) if pub.resume else {}
        publish_id = str(state.get("publish_id") or "")
        if not publish_id:
            return None
        try:
            data = self.fetch_status(pub.account.access_token, publish_id)
        except NetworkError as e:
            if e.fail_type == "permanent":  # TikTok does not know it (any more)
                return None
            raise
        status = str(data.get("status") or "")
        if status == "FAILED":
            return None
        if status == "PROCESSING_UPLOAD" and state.get("upload_url"):
            media = pub.payload.media[0]
            self.upload_video(
                str(state["upload_url"]),
                self._load(media),
                (media.mime or "").split(";")[0].strip().lower(),
                start=int(data.get("uploaded_bytes") or 0),
            )
            return PublishOutcome.pending(publish_id, network_status="PROCESSING_UPLOAD")
        return self.outcome_of(pub, publish_id, data)

    def publish(self, pub: Publication) -> PublishOutcome:
        """The init (its publish id, and upload URL, saved as the attempt's progress at once: an interrupted
        attempt's successor continues it, `pub.resume`, rather than opening another), then the upload."""
        p, opts, token = pub.payload, pub.payload.options, pub.account.access_token
        mode = str(opts.get("post_mode") or "DIRECT_POST")
        try:
            resumed = self._resumed(pub)
            if resumed is not None:
                return resumed
            direct = self._direct_post_info(pub) if mode == "DIRECT_POST" else {}
            if p.kind == "video":
                info: dict[str, Any] = {
                    "post_mode": mode,
                    "title": p.text or None,
                    "privacy_level": direct.get("privacy_level"),
                    "disable_comment": direct.get("disable_comment"),
                    "disable_duet": direct.get("disable_duet"),
                    "disable_stitch": direct.get("disable_stitch"),
                    "brand_content_toggle": direct.get("brand_content_toggle"),
                    "brand_organic_toggle": direct.get("brand_organic_toggle"),
                    "is_aigc": opts.get("is_aigc"),
                }
                if self.media_by_url:
                    publish_id = self.init_video(token, video_url=p.media[0].url, **info)
                    pub.saved(encode_ref(publish_id=publish_id))
                else:
                    data = self._load(p.media[0])
                    publish_id, upload_url = self.init_video_upload(token, video_size=len(data), **info)
                    pub.saved(encode_ref(publish_id=publish_id, upload_url=upload_url))
                    # nothing is published before the last byte: a failed upload is retried as a whole
                    self.upload_video(upload_url, data, (p.media[0].mime or "").split(";")[0].strip().lower())
                    return PublishOutcome.pending(publish_id, network_status="PROCESSING_UPLOAD")
            else:
                publish_id = self.init_photo(
                    token,
                    image_urls=[m.url for m in p.media],
                    post_mode=mode,
                    title=p.title or None,
                    description=p.text or None,
                    privacy_level=direct.get("privacy_level"),
                    disable_comment=direct.get("disable_comment"),
                    auto_add_music=opts.get("auto_add_music"),
                    brand_content_toggle=direct.get("brand_content_toggle"),
                    brand_organic_toggle=direct.get("brand_organic_toggle"),
                )
                pub.saved(encode_ref(publish_id=publish_id))
        except NetworkError as e:
            return e.outcome()
        return PublishOutcome.pending(publish_id, network_status="PROCESSING_DOWNLOAD")

    def outcome_of(self, pub: Publication, publish_id: str, data: dict[str, Any]) -> PublishOutcome:
        status = str(data.get("status") or "")
        if status == "SEND_TO_USER_INBOX":
            return PublishOutcome(
                state="inbox_delivered",
                external_post_id=publish_id,
                tracking_ref=publish_id,
                network_status=status,
            )
        if status == "PUBLISH_COMPLETE":
            ids = data.get("publicaly_available_post_id") or data.get("publicly_available_post_id") or []
            if ids:
                post_id = str(ids[0])
                url = self.post_url(pub, post_id)
                return PublishOutcome.published(post_id, url, tracking_ref=publish_id, network_status=status)
            unaudited_private = not self.audited and pub.payload.options.get("privacy_level") == "SELF_ONLY"
            return PublishOutcome.published(
                publish_id,
                None,
                tracking_ref=publish_id,
                network_status=status,
                warnings=(self_only_warning(),) if unaudited_private else (),
            )
        if status == "FAILED":
            reason = str(data.get("fail_reason") or "internal")
            return classify(reason).outcome(tracking_ref=publish_id, network_status=status)
        return PublishOutcome.pending(publish_id, network_status=status or "PROCESSING_DOWNLOAD")

    def post_url(self, pub: Publication, post_id: str) -> str | None:
        if not pub.account.username:
            return None
        kind = "video" if pub.payload.kind == "video" else "photo"
        return f"https://www.tiktok.com/@{pub.account.username}/{kind}/{post_id}"

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        try:
            data = self.fetch_status(pub.account.access_token, ref)
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)
        return self.outcome_of(pub, ref, data)

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        return never_ready(PLATFORM)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """Whether an interrupted attempt published the target. First the attempt's own publish id (saved as
        soon as the init answered, `pub.resume`): /status/fetch/ tells its fate whatever the privacy. Without
        one, only the listing is left (/v2/video/list/), which shows PUBLIC posts only and needs video.list:
        for any other post (SELF_ONLY, friends, followers, a photo post, a draft) or without the scope, absence
        from it proves nothing — Unverifiable (the target ends saying to check the account), never "absent". The
        listing matches the description, skipping the posts other targets hold (`pub.held_elsewhere`)."""
        p = pub.payload
        if p.options.get("post_mode") == "MEDIA_UPLOAD":
            raise Unverifiable("TikTok offers no way to list the drafts in a creator's inbox")
        publish_id = str((decode_ref(pub.resume) if pub.resume else {}).get("publish_id") or "")
        if publish_id:
            try:
                data = self.fetch_status(pub.account.access_token, publish_id)
            except NetworkError as e:
                if e.fail_type != "permanent" or e.auth_refused:
                    return check_failed("TikTok", e)
                data = {}  # TikTok no longer knows it: the listing below, under its own conditions
            status = str(data.get("status") or "")
            if status and status not in ("FAILED", "PROCESSING_UPLOAD"):
                return self.outcome_of(pub, publish_id, data)
            if status in ("FAILED", "PROCESSING_UPLOAD"):
                return None  # nothing published: publish continues the upload (pub.resume) or starts over
        if p.kind != "video" or p.options.get("privacy_level") != "PUBLIC_TO_EVERYONE":
            raise Unverifiable(
                "TikTok lists only public videos, and this post was not one: check the TikTok account"
            )
        expected = (p.text or "").strip()
        since = pub.not_before()
        cursor: int | None = None
        try:
            for _ in range(MAX_LISTING_PAGES if since is not None else PAGES_WITHOUT_WINDOW):
                videos, cursor, more = self.list_videos_page(pub.account.access_token, cursor=cursor)
                for v in videos:
                    if since is not None and int(v.get("create_time") or 0) < since.timestamp():
                        return None
                    post_id = str(v.get("id"))
                    created = int(v.get("create_time") or 0)
                    if post_id in pub.held_elsewhere or (
                        created and pub.made_later(datetime.fromtimestamp(created, UTC))
                    ):
                        continue  # another target's post, whatever its description
                    if str(v.get("video_description") or "").strip() == expected:
                        return PublishOutcome.published(
                            post_id,
                            v.get("share_url") or self.post_url(pub, post_id),
                            network_status="PUBLISH_COMPLETE",
                            listed_at=datetime.fromtimestamp(created, UTC) if created else clock.now(),
                        )
                if not more:
                    return None
        except NetworkError as e:
            if e.code in SCOPE_CODES:
                raise Unverifiable(
                    "the TikTok account did not grant video.list (the listing of its public posts): "
                    "check the TikTok account"
                ) from e
            return check_failed("TikTok", e)
        return None


def off(wanted: Any, disabled_by_creator: Any) -> bool:
    """An interaction's disable_* flag: off (True) unless the creator turned it on (False), and always off where
    the creator's settings disable it (creator_info) — TikTok's UX rules: nothing on by default."""
    return True if disabled_by_creator or wanted is None else bool(wanted)


def privacy_problem(
    chosen: Any, offered: list[str], *, audited: bool, branded: bool = False
) -> tuple[str, str] | None:
    """(code, reason) when a direct post's privacy cannot be sent: none chosen (TikTok's UX rules: the creator
    chooses, nothing pre-selected), an unaudited app and a public account or a privacy other than SELF_ONLY,
    a privacy the account does not offer, or branded content (`branded`: brand_content_toggle) as SELF_ONLY
    (content-sharing-guidelines: branded content is public or friends only). None: send it."""
    options = ", ".join(offered) or "none"
    if not audited and "PUBLIC_TO_EVERYONE" in offered:
        return (
            UNAUDITED_CODE,
            "the TikTok app is not audited: TikTok accepts its direct posts only to private accounts, as "
            "SELF_ONLY (Only me); make the TikTok account private or post as a draft (postMode MEDIA_UPLOAD)",
        )
    if not chosen:
        allowed = ", ".join(allowed_privacy(offered, audited=audited)) or "none"
        return (
            PRIVACY_REQUIRED,
            f"choose who can see this TikTok post (privacy_level): one of {allowed}"
            + (
                ""
                if audited
                else f" (the account offers {options}; an unaudited app posts only as SELF_ONLY)"
            ),
        )
    if not audited and chosen != "SELF_ONLY":
        return (
            UNAUDITED_CODE,
            f"the TikTok app is not audited: TikTok accepts its direct posts only as SELF_ONLY (Only me), not "
            f"{chosen}; choose SELF_ONLY or post as a draft (postMode MEDIA_UPLOAD)",
        )
    if chosen not in offered:
        return (
            "privacy_level_option_mismatch",
            f"privacy_level {chosen} is not offered by this TikTok account: one of {options}",
        )
    if branded and chosen == "SELF_ONLY":
        why = (
            "; an unaudited TikTok app posts only as SELF_ONLY, so it cannot post branded content"
            if not audited
            else ": choose who can see it among the other levels, or turn branded content off"
        )
        return (
            BRANDED_PRIVATE,
            f"branded content (a paid partnership) cannot be posted as SELF_ONLY (Only me){why}",
        )
    return None


def allowed_privacy(offered: list[str], *, audited: bool) -> list[str]:
    """The privacy levels a direct post may carry for an account offering `offered` (creator_info): all of them
    for an audited app; for an unaudited one SELF_ONLY on a private account, none on a public one."""
    if audited:
        return list(offered)
    if "PUBLIC_TO_EVERYONE" in offered or "SELF_ONLY" not in offered:
        return []
    return ["SELF_ONLY"]


def target_problems(
    adapter: TikTokAdapter, token: str, draft: TargetDraft
) -> list[tuple[str, str, dict[str, Any]]]:
    """The registry's `target_check`: POST /v1/posts refuses a TikTok direct post now, per target, when TikTok
    would refuse it (or its UX rules forbid it): no privacy chosen, one the account's creator_info does not offer,
    or an unaudited app and a public account or a privacy other than SELF_ONLY (privacy_problem) — with the levels
    the creator may choose (`allowed`). A draft (MEDIA_UPLOAD) carries no privacy: nothing to check. Reads
    creator_info (20 calls a minute per token): its NetworkError / httpx error goes to the caller, which then
    accepts the post and lets the publication check again."""
    options = draft.options
    if options is not None and getattr(options, "post_mode", "DIRECT_POST") == "MEDIA_UPLOAD":
        return []
    offered = [str(x) for x in adapter.creator_info(token).get("privacy_level_options") or []]
    chosen = getattr(options, "privacy_level", None) if options is not None else None
    branded = bool(getattr(options, "brand_content_toggle", None)) if options is not None else False
    problem = privacy_problem(chosen, offered, audited=adapter.audited, branded=branded)
    if problem is None:
        return []
    code, reason = problem
    allowed = allowed_privacy(offered, audited=adapter.audited)
    if branded:  # branded content: never SELF_ONLY
        allowed = [level for level in allowed if level != "SELF_ONLY"]
    return [(code, reason, {"field": "privacyLevel", "allowed": allowed})]


INTERACTIONS = (
    ("disableComment", "comment_disabled", "Commenting"),
    ("disableDuet", "duet_disabled", "Duet"),
    ("disableStitch", "stitch_disabled", "Stitch"),
)


def account_choices(adapter: TikTokAdapter, token: str) -> AccountChoices:
    """The registry's `choices`: what creator_info says the creator may choose now (content-posting-api-reference-
    query-creator-info; the UX rules of content-sharing-guidelines). privacyLevel: required, among the levels this
    app may post with (allowed_privacy: an unaudited app only SELF_ONLY, and only on a private account) of those
    the account offers; each interaction the creator turned off is locked; branded content (a paid partnership)
    locked where the only level allowed is SELF_ONLY; the longest video; the creator's nickname (shown before posting); the
    consent sentence. Raises NetworkError / httpx errors when TikTok cannot answer."""
    info = adapter.creator_info(token)
    offered = tuple(str(x) for x in info.get("privacy_level_options") or [])
    allowed = tuple(allowed_privacy(list(offered), audited=adapter.audited))
    note = ""
    if not adapter.audited and not allowed:
        note = (
            "the TikTok app is not audited: TikTok accepts its direct posts only to private accounts, as SELF_ONLY "
            "(Only me); make the TikTok account private or post as a draft (postMode MEDIA_UPLOAD)"
        )
    elif allowed != offered:
        note = "the TikTok app is not audited: TikTok accepts its direct posts only as SELF_ONLY (Only me)"
    fields = [FieldChoice("privacyLevel", allowed=allowed, offered=offered, required=True, note=note)]
    for name, flag, what in INTERACTIONS:
        locked = bool(info.get(flag))
        fields.append(
            FieldChoice(
                name,
                locked=locked,
                note=f"{what} is off for this account at TikTok (a private account, or the creator's own setting)"
                if locked
                else "",
            )
        )
    branded_ok = any(level != "SELF_ONLY" for level in allowed)
    fields.append(
        FieldChoice(
            "brandContentToggle",
            locked=not branded_ok,
            note=""
            if branded_ok
            else "branded content cannot be posted as SELF_ONLY (Only me), the only level "
            "this app may post with to this account",
        )
    )
    limits: dict[str, float] = {}
    longest = info.get("max_video_post_duration_sec")
    if isinstance(longest, int | float) and not isinstance(longest, bool):
        limits["maxVideoDurationS"] = float(longest)
    return AccountChoices(
        creator_name=str(info.get("creator_nickname") or "") or None,
        creator_handle=str(info.get("creator_username") or "") or None,
        fields=tuple(fields),
        limits=limits,
        notes=(note,) if note else (),
        consent=CONSENT,
        answer=dict(info),
    )


def make_adapter(ctx: AdapterContext) -> TikTokAdapter:
    """The registry's factory: videos by URL (PULL_FROM_URL) when SOCIALPUB_MEDIA_BY_URL names tiktok."""
    return TikTokAdapter(
        ctx.client,
        ctx.host("api"),
        media_loader=ctx.media_loader,
        media_by_url=ctx.media_by_url,
        audited=ctx.settings.audited if ctx.settings is not None else False,
    )
