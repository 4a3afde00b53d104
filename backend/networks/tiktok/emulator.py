"""TikTok Content Posting API emulator (NETWORKS.md section 1): envelope {data, error{code,message,log_id}},
creator_info, video/inbox/photo init with PULL_FROM_URL, video/inbox init with FILE_UPLOAD (an upload_url on
the emulator's own host, chunks PUT there in order with Content-Range; the publication proceeds once every byte
arrived, and the item's data["received"] records their size and sha256), status fetch as a function of time,
cancel, the Display API video list, per-user init rate limit (6/min), 5 pending drafts / 24 h, a daily post cap."""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import httpx

from backend.networks.sandbox.core import (
    Emulator,
    Gate,
    Request,
    SandboxConfig,
    b62,
    b64url,
    digits,
    exclusive,
    gate,
    get_item,
    new_item,
    page_at,
    update_item,
    utf16_len,
)
from backend.networks.sandbox.credentials import authenticate
from backend.networks.sandbox.oauth import install
from backend.networks.sandbox.store import SandboxAccount, SandboxItem
from backend.networks.tiktok import emulator_errors
from backend.networks.tiktok.emulator_oauth import TikTokOAuth, api_auth_message, envelope, err

PLATFORM = "tiktok"
INIT_PER_MINUTE = 6
PENDING_DRAFTS_PER_DAY = 5
PHOTO_MAX = 35
# FILE_UPLOAD (the media transfer guide): chunks of 5-64 MB, the last one up to 128 MB, 1-1000 chunks in order,
# total_chunk_count = video_size // chunk_size, a file under 5 MB in one piece, 4 GB at most, the upload URL valid
# for an hour. Module constants: tests lower the chunk bounds (with the adapter's) to send a small file in chunks.
MB = 1024 * 1024
MIN_CHUNK_BYTES = 5 * MB
MAX_CHUNK_BYTES = 64 * MB
MAX_LAST_CHUNK_BYTES = 128 * MB
MAX_CHUNKS = 1000
MAX_VIDEO_BYTES = 4 * 1024 * MB
UPLOAD_URL_TTL_S = 3600
UPLOAD_MIMES = ("video/mp4", "video/quicktime", "video/webm")
UPLOAD_PATH = "/upload/video/"
CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+)$")


PUBLIC_ACCOUNT_PRIVACY = ("PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY")
PRIVATE_ACCOUNT_PRIVACY = ("FOLLOWER_OF_CREATOR", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY")
DAILY_POSTS = (
    15  # the daily cap of direct posts; the configuration's `daily_posts` (SOCIALPUB_SANDBOX_TIKTOK_…)
)


class TikTokEmulator(Emulator):
    platform = PLATFORM
    HOSTS = {"api": "https://open.tiktokapis.sandbox.invalid"}
    OAUTH = TikTokOAuth
    FAULTS = emulator_errors.FAULTS
    ERROR_ENDPOINTS = emulator_errors.ERROR_ENDPOINTS
    SERVE_ENDPOINTS = (
        ("authorize", "/v2/auth/authorize/"),
        ("token", "/v2/oauth/token/"),
        ("revoke", "/v2/oauth/revoke/"),
    )

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return "-000" + b64url(28), "act." + b62(60)

    @classmethod
    def privacy_options(cls, private: bool) -> tuple[str, ...]:
        return PRIVATE_ACCOUNT_PRIVACY if private else PUBLIC_ACCOUNT_PRIVACY

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        self.route("POST", r"/v2/post/publish/creator_info/query", self.creator_info)
        self.route("POST", r"/v2/post/publish/video/init", self.video_init)
        self.route("POST", r"/v2/post/publish/inbox/video/init", self.inbox_video_init)
        self.route("POST", r"/v2/post/publish/content/init", self.content_init)
        self.route("POST", r"/v2/post/publish/status/fetch", self.status_fetch)
        self.route("POST", r"/v2/post/publish/cancel", self.cancel)
        self.route("POST", r"/v2/video/list", self.video_list)
        install(self)
        self.route("PUT", r"/upload/video", self.upload_chunk)
        self._hashers: dict[str, Any] = {}  # publish_id -> sha256 of the bytes received so far (in process)
        self._hash_guard = threading.Lock()

    # --- helpers ---------------------------------------------------------------------------------
    def _auth(self, request: Request, scope: str | None = None) -> SandboxAccount | httpx.Response:
        """The account the call's token speaks for, or TikTok's refusal. scope: the scope the endpoint needs
        ("a or b": either), checked against an OAuth grant's (a sandbox account's own token holds them all)."""
        auth = authenticate(request.bearer(), PLATFORM)
        acc = auth.account
        if acc is None or auth.problem:
            return err(401, "access_token_invalid", api_auth_message(auth.problem))
        if (
            scope and auth.grant is not None and not set(scope.split(" or ")) & set(auth.grant.scopes or [])
        ):  # an OAuth grant's scopes
            return err(
                401,
                "scope_not_authorized",
                f"The user did not authorize the scope required for completing this request ({scope}).",
            )
        if isinstance(request.json, ValueError) or (request.content and not isinstance(request.json, dict)):
            return err(400, "invalid_params", "The request body is not valid JSON.")
        return acc

    def _limits(self, acc: SandboxAccount, mode: str) -> httpx.Response | None:
        g = gate(acc)
        if g == Gate.RETRIABLE:
            return err(500, "internal_error", "Something went wrong. Please try again later.")
        if g == Gate.RATE:
            return err(429, "rate_limit_exceeded", "The API rate limit was exceeded. Please try again later.")
        if not self.config.limits:
            return None
        if self.count_since(acc, ("publish",), 60, limit=INIT_PER_MINUTE) >= INIT_PER_MINUTE:
            return err(
                429,
                "rate_limit_exceeded",
                f"Too many publish requests: {INIT_PER_MINUTE} per minute per user.",
            )
        if mode == "MEDIA_UPLOAD":
            if (
                self.count_since(
                    acc, ("publish",), 86400, mode_suffix="MEDIA_UPLOAD", limit=PENDING_DRAFTS_PER_DAY
                )
                >= PENDING_DRAFTS_PER_DAY
            ):
                return err(
                    403,
                    "spam_risk_too_many_pending_share",
                    "The user has too many pending shares; drafts must be posted or deleted in the app.",
                )
        elif self.count_since(
            acc, ("publish",), 86400, mode_suffix="DIRECT_POST", limit=self.option("daily_posts", DAILY_POSTS)
        ) >= self.option("daily_posts", DAILY_POSTS):
            return err(403, "spam_risk_too_many_posts", "The user has reached the daily post cap.")
        return None

    def _privacy(self, acc: SandboxAccount, post_info: dict[str, Any]) -> httpx.Response | None:
        """A direct post's privacy (content-posting-api-reference-direct-post): an unaudited app posts only
        SELF_ONLY to a private account (403 unaudited_client_can_only_post_to_private_accounts); the level must
        be given and among the creator's options (403 privacy_level_option_mismatch)."""
        level = post_info.get("privacy_level")
        options = list(acc.privacy_level_options or [])
        if not self.config.app(PLATFORM).audited and (
            "PUBLIC_TO_EVERYONE" in options or level != "SELF_ONLY"
        ):
            return err(
                403,
                "unaudited_client_can_only_post_to_private_accounts",
                "Unaudited clients can only post to a private account.",
            )
        if not level or level not in options:
            return err(
                403,
                "privacy_level_option_mismatch",
                "privacy_level is not specified or not among the options in privacy_level_options.",
            )
        return None

    def _disclosure(self, post_info: dict[str, Any]) -> httpx.Response | None:
        """A direct post's commercial content disclosure (content-posting-api-reference-direct-post: post_info
        `brand_content_toggle` marked required, `brand_organic_toggle`; content-sharing-guidelines: branded content
        is never SELF_ONLY). Refused when the toggle is missing or branded content is SELF_ONLY (400 invalid_param:
        belief, the strictest reading — TikTok documents no code for either)."""
        branded = post_info.get("brand_content_toggle")
        if not isinstance(branded, bool):
            return err(400, "invalid_param", "post_info.brand_content_toggle is required (true or false).")
        if not isinstance(post_info.get("brand_organic_toggle", False), bool):
            return err(400, "invalid_param", "post_info.brand_organic_toggle must be true or false.")
        if branded and post_info.get("privacy_level") == "SELF_ONLY":
            return err(400, "invalid_param", "Branded content cannot be posted with privacy_level SELF_ONLY.")
        return None

    def _url_ok(self, url: Any) -> bool:
        """https, as at the real network; our own media host counts as the app's verified URL prefix even
        on plain http (the embedded default serves media on http://127.0.0.1)."""
        if not isinstance(url, str) or len(url) >= 2048:
            return False
        return url.startswith("https://") or any(url.startswith(p) for p in self.config.verified_url_prefixes)

    def _create(
        self,
        acc: SandboxAccount,
        prefix: str,
        mode: str,
        *,
        text: str,
        title: str,
        media: list[str],
        data: dict[str, Any],
        photo: bool,
        upload_origin: str | None = None,
    ) -> httpx.Response:
        publish_id = f"{prefix}~v2.{digits(19)}"
        post_id = digits(19, "7")
        kind_path = "photo" if photo else "video"
        outcome = "ok"
        if acc.behaviour == "fail-permanent":
            outcome = "picture_size_check_failed" if photo else "file_format_check_failed"
        answer = {"publish_id": publish_id}
        state = ""
        if upload_origin is not None:  # FILE_UPLOAD: nothing proceeds before the last byte
            token = b64url(32)
            expires = (self.now() + timedelta(seconds=UPLOAD_URL_TTL_S)).timestamp()
            data = {
                **data,
                "upload": {**data["upload"], "token": token, "expires_at": expires, "received": 0},
            }
            answer["upload_url"] = (
                f"{upload_origin}{UPLOAD_PATH}?upload_id={quote(publish_id, safe='')}&upload_token={token}"
            )
            state = "uploading"
        new_item(
            PLATFORM,
            acc,
            "publish",
            publish_id,
            processing_s=self.processing_s(acc, 1.0 if not photo else 0.5),
            mode=mode,
            text=text,
            title=title,
            media=media,
            data=data,
            outcome=outcome,
            post_id=post_id,
            url=f"https://www.tiktok.com/@{acc.username}/{kind_path}/{post_id}",
            state=state,
        )
        return envelope(200, answer)

    def _upload_plan(self, source: dict[str, Any]) -> dict[str, int] | httpx.Response:
        """FILE_UPLOAD's sizes checked as TikTok checks them (media transfer guide)."""
        size, chunk, count = (
            source.get("video_size"),
            source.get("chunk_size"),
            source.get("total_chunk_count"),
        )
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (size, chunk, count)):
            return err(
                400,
                "invalid_params",
                "source_info: video_size, chunk_size and total_chunk_count are "
                "required positive integers for FILE_UPLOAD.",
            )
        assert isinstance(size, int) and isinstance(chunk, int) and isinstance(count, int)
        if size > MAX_VIDEO_BYTES:
            return err(400, "invalid_params", "source_info.video_size exceeds 4 GB.")
        if size < MIN_CHUNK_BYTES:
            if chunk != size or count != 1:
                return err(
                    400,
                    "invalid_params",
                    "A video under 5 MB must be uploaded whole: chunk_size = "
                    "video_size and total_chunk_count = 1.",
                )
        else:
            if not MIN_CHUNK_BYTES <= chunk <= min(MAX_CHUNK_BYTES, size):
                return err(
                    400,
                    "invalid_params",
                    "source_info.chunk_size must be 5 MB to 64 MB (and at most video_size).",
                )
            if count != size // chunk or count > MAX_CHUNKS:
                return err(
                    400,
                    "invalid_params",
                    "source_info.total_chunk_count must be video_size / chunk_size "
                    f"rounded down ({size // chunk}), at most {MAX_CHUNKS}.",
                )
            if size - (count - 1) * chunk > MAX_LAST_CHUNK_BYTES:
                return err(400, "invalid_params", "The last chunk would exceed 128 MB.")
        return {"video_size": size, "chunk_size": chunk, "total_chunk_count": count}

    def listing_delay_s(self, behaviour: str = "ok") -> float:
        """The video list shows a direct post once it is processed (a photo post takes half a video's time)."""
        return self.processing_for(behaviour, 1.0)

    # --- endpoints -------------------------------------------------------------------------------
    def creator_info(self, request: Request) -> httpx.Response:
        acc = self._auth(request, "video.publish")
        if isinstance(acc, httpx.Response):
            return acc
        private = "PUBLIC_TO_EVERYONE" not in (acc.privacy_level_options or [])
        return envelope(
            200,
            {
                "creator_avatar_url": f"https://p16-sign.tiktokcdn.sandbox.invalid/{acc.username}.jpeg",
                "creator_username": acc.username,
                "creator_nickname": acc.display_name,
                "privacy_level_options": list(acc.privacy_level_options or []),
                "comment_disabled": False,
                # "true if the creator account is private" (query-creator-info)
                "duet_disabled": private,
                "stitch_disabled": private,
                "max_video_post_duration_sec": 600,
            },
        )

    def _video(self, request: Request, mode: str) -> httpx.Response:
        acc = self._auth(request, "video.publish" if mode == "DIRECT_POST" else "video.upload")
        if isinstance(acc, httpx.Response):
            return acc
        body = request.json or {}
        source = body.get("source_info") or {}
        post_info = body.get("post_info") or {}
        upload: dict[str, int] | httpx.Response | None = None
        if source.get("source") == "FILE_UPLOAD":
            upload = self._upload_plan(source)
            if isinstance(upload, httpx.Response):
                return upload
        elif source.get("source") != "PULL_FROM_URL":
            return err(400, "invalid_params", "source_info.source must be PULL_FROM_URL or FILE_UPLOAD.")
        elif not self._url_ok(source.get("video_url")):
            return err(400, "invalid_params", "source_info.video_url must be an https URL.")
        if mode == "DIRECT_POST":
            bad = self._privacy(acc, post_info) or self._disclosure(post_info)
            if bad:
                return bad
            if utf16_len(str(post_info.get("title") or "")) > 2200:
                return err(400, "invalid_params", "post_info.title exceeds 2200 UTF-16 characters.")
        elif post_info:
            return err(400, "invalid_params", "post_info is not accepted by the inbox upload endpoint.")
        how = "file" if upload is not None else "url"
        prefix = f"v_pub_{how}" if mode == "DIRECT_POST" else f"v_inbox_{how}"
        data: dict[str, Any] = {"post_info": post_info}
        origin = None
        if upload is not None:
            data["upload"] = upload
            port = f":{request.url.port}" if request.url.port else ""
            origin = f"{request.url.scheme}://{request.url.host}{port}"  # the emulator's own host
        with exclusive(acc):  # the caps' check and the publish counted against them: atomic
            return self._limits(acc, mode) or self._create(
                acc,
                prefix,
                "VIDEO:" + mode,
                text=str(post_info.get("title") or ""),
                title="",
                media=[source["video_url"]] if upload is None else [],
                data=data,
                photo=False,
                upload_origin=origin,
            )

    def video_init(self, request: Request) -> httpx.Response:
        return self._video(request, "DIRECT_POST")

    def inbox_video_init(self, request: Request) -> httpx.Response:
        return self._video(request, "MEDIA_UPLOAD")

    def content_init(self, request: Request) -> httpx.Response:
        body = request.json if isinstance(request.json, dict) else {}
        mode = body.get("post_mode")
        acc = self._auth(request, "video.publish" if mode == "DIRECT_POST" else "video.upload")
        if isinstance(acc, httpx.Response):
            return acc
        if body.get("media_type") != "PHOTO":
            return err(400, "invalid_params", "media_type must be PHOTO.")
        if mode not in ("DIRECT_POST", "MEDIA_UPLOAD"):
            return err(400, "invalid_params", "post_mode must be DIRECT_POST or MEDIA_UPLOAD.")
        post_info = body.get("post_info") or {}
        source = body.get("source_info") or {}
        images = source.get("photo_images")
        if source.get("source") != "PULL_FROM_URL":
            return err(400, "invalid_params", "source_info.source must be PULL_FROM_URL for photos.")
        if (
            not isinstance(images, list)
            or not 1 <= len(images) <= PHOTO_MAX
            or not all(map(self._url_ok, images))
        ):
            return err(400, "invalid_params", f"source_info.photo_images: 1 to {PHOTO_MAX} https URLs.")
        cover = source.get("photo_cover_index")
        if not isinstance(cover, int) or not 0 <= cover < len(images):
            return err(
                400,
                "invalid_params",
                "source_info.photo_cover_index is required and must index photo_images.",
            )
        if utf16_len(str(post_info.get("title") or "")) > 90:
            return err(400, "invalid_params", "post_info.title exceeds 90 UTF-16 characters.")
        if utf16_len(str(post_info.get("description") or "")) > 4000:
            return err(400, "invalid_params", "post_info.description exceeds 4000 UTF-16 characters.")
        if mode == "DIRECT_POST":
            bad = self._privacy(acc, post_info) or self._disclosure(post_info)
            if bad:
                return bad
        prefix = "p_pub_url" if mode == "DIRECT_POST" else "p_inbox_url"
        with exclusive(acc):  # the caps' check and the publish counted against them: atomic
            return self._limits(acc, mode) or self._create(
                acc,
                prefix,
                "PHOTO:" + mode,
                text=str(post_info.get("description") or ""),
                title=str(post_info.get("title") or ""),
                media=list(images),
                data={"post_info": post_info, "photo_cover_index": cover},
                photo=True,
            )

    def _owned(self, request: Request) -> tuple[SandboxAccount, SandboxItem] | httpx.Response:
        acc = self._auth(request, "video.upload or video.publish")
        if isinstance(acc, httpx.Response):
            return acc
        publish_id = (request.json or {}).get("publish_id")
        item = get_item(str(publish_id), PLATFORM)
        if item is None:
            return err(400, "invalid_publish_id", "The publish_id does not exist.")
        if item.account_id != acc.id:
            return err(
                400,
                "token_not_authorized_for_specified_publish_id",
                "The access token is not authorized for this publish_id.",
            )
        return acc, item

    @staticmethod
    def is_public(item: SandboxItem) -> bool:
        """Posted for everyone: what TikTok gives a post id for and lists (get-video-status, video-list)."""
        info = (item.data or {}).get("post_info") or {}
        return item.mode.endswith("DIRECT_POST") and info.get("privacy_level") == "PUBLIC_TO_EVERYONE"

    def public_ids(self, item: SandboxItem) -> list[int]:
        """ "post_id is returned only if the post is published for public viewership" (get-video-status)."""
        return [int(item.post_id)] if self.is_public(item) and item.post_id is not None else []

    def status_of(self, item: SandboxItem) -> dict[str, Any]:
        draft = item.mode.endswith("MEDIA_UPLOAD")
        if item.state == "cancelled":
            return {"status": "FAILED", "fail_reason": "publish_cancelled"}
        upload = (item.data or {}).get("upload")
        if isinstance(upload, dict):  # FILE_UPLOAD: the bytes arrive, then processing starts
            if item.state == "uploading" or not self.ready(item):
                return {"status": "PROCESSING_UPLOAD", "uploaded_bytes": int(upload.get("received") or 0)}
            done = {"uploaded_bytes": int(upload["video_size"])}
            if item.outcome != "ok":
                return {"status": "FAILED", "fail_reason": item.outcome, **done}
            if draft:
                return {"status": "SEND_TO_USER_INBOX", **done}
            return {
                "status": "PUBLISH_COMPLETE",
                "publicaly_available_post_id": self.public_ids(item),
                **done,
            }
        # PULL_FROM_URL: the emulator downloads nothing, so it reports no `downloaded_bytes` (it used to invent
        # 4 MB a file: "9,642,224 bytes" for three 33 KB photos)
        if not self.ready(item):
            return {"status": "PROCESSING_DOWNLOAD"}
        if item.outcome != "ok":
            return {"status": "FAILED", "fail_reason": item.outcome}
        if draft:
            return {"status": "SEND_TO_USER_INBOX"}
        return {"status": "PUBLISH_COMPLETE", "publicaly_available_post_id": self.public_ids(item)}

    def status_fetch(self, request: Request) -> httpx.Response:
        owned = self._owned(request)
        if isinstance(owned, httpx.Response):
            return owned
        return envelope(200, self.status_of(owned[1]))

    def cancel(self, request: Request) -> httpx.Response:
        owned = self._owned(request)
        if isinstance(owned, httpx.Response):
            return owned
        item = owned[1]
        if (self.ready(item) and item.state != "uploading") or item.state == "cancelled":
            return err(400, "publish_not_cancellable", "The publish is no longer cancellable.")
        update_item(item.id, state="cancelled")
        return envelope(200, {})

    def upload_chunk(self, request: Request) -> httpx.Response:
        """PUT upload_url (FILE_UPLOAD): one chunk, in order, with Content-Type and Content-Range. 206 more
        expected, 201 complete; 400 bad headers, 403 URL expired, 404 no such task, 416 a range that is not the
        next chunk (wrong order, overlap, wrong size or total)."""
        publish_id = str(request.query.get("upload_id") or "")
        item = get_item(publish_id, PLATFORM) if publish_id else None
        plan = (item.data or {}).get("upload") if item is not None else None
        if (
            item is None
            or not isinstance(plan, dict)
            or item.state == "cancelled"
            or not hmac.compare_digest(
                str(request.query.get("upload_token") or ""), str(plan.get("token") or "")
            )
        ):
            return err(404, "invalid_params", "The upload task does not exist.")
        if self.now().timestamp() > float(plan["expires_at"]):
            return err(403, "invalid_params", "The upload URL expired (valid for one hour).")
        ctype = request.header("content-type").split(";")[0].strip().lower()
        if ctype not in UPLOAD_MIMES:
            return err(400, "invalid_params", f"Content-Type must be one of {', '.join(UPLOAD_MIMES)}.")
        m = CONTENT_RANGE.match(request.header("content-range").strip())
        if m is None:
            return err(400, "invalid_params", "Content-Range must be 'bytes FIRST-LAST/TOTAL'.")
        first, last, total = (int(g) for g in m.groups())
        if last < first or last - first + 1 != len(request.content):
            return err(400, "invalid_params", "Content-Range does not match the chunk's length.")
        size, chunk, count = int(plan["video_size"]), int(plan["chunk_size"]), int(plan["total_chunk_count"])
        received = int(plan.get("received") or 0)
        if item.state != "uploading" or total != size or first != received:
            return err(
                416, "invalid_params", f"Expected bytes {received}-…/{size}: chunks go in order, once each."
            )
        final = received // chunk >= count - 1
        expected = size - received if final else chunk
        if len(request.content) != expected:
            return err(
                416,
                "invalid_params",
                f"This chunk must hold {expected} bytes "
                f"({'the rest of the file' if final else 'chunk_size'}).",
            )
        with self._hash_guard:
            if first == 0:
                self._hashers[publish_id] = hashlib.sha256()
            hasher = self._hashers.get(publish_id)  # None after a restart mid-upload: the digest is not known
            if hasher is not None:
                hasher.update(request.content)
            if final:
                self._hashers.pop(publish_id, None)
        if first == 0 and not _looks_like_video(request.content):
            plan = {**plan, "not_a_video": True}
        plan = {**plan, "received": received + len(request.content)}
        data = {**(item.data or {}), "upload": plan}
        if not final:
            update_item(item.id, data=data)
            return envelope(206, {})
        data["received"] = {"bytes": size, "sha256": hasher.hexdigest() if hasher is not None else None}
        fields: dict[str, Any] = {
            "data": data,
            "state": "",
            "started_at": self.now(),
        }  # processing starts now
        if plan.get("not_a_video") and item.outcome == "ok":
            fields["outcome"] = "file_format_check_failed"
        update_item(item.id, **fields)
        return envelope(201, {})

    def video_list(self, request: Request) -> httpx.Response:
        """Display API (scope video.list): the creator's public posts, newest first, `max_count` (<= 20) a page;
        `cursor` from the previous answer, `has_more` while there are older ones. Public posts only: a post for
        friends, followers or only the creator is never listed (tiktok-api-v2-video-list)."""
        acc = self._auth(request, "video.list")
        if isinstance(acc, httpx.Response):
            return acc
        body = request.json if isinstance(request.json, dict) else {}
        try:
            max_count = max(1, min(20, int(body.get("max_count") or 20)))
            cursor = max(0, int(body.get("cursor") or 0))
        except (TypeError, ValueError):
            return err(400, "invalid_params", "max_count and cursor must be integers.")
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == acc.id)
            & (SandboxItem.kind == "publish")
            & SandboxItem.mode.endswith("DIRECT_POST")
        )
        rows, more = page_at(query, cursor, max_count)
        videos = [
            {
                "id": it.post_id,
                "title": it.title or it.text[:150],
                "video_description": it.text,
                "create_time": int(it.created_at.timestamp()),
                "share_url": it.url,
            }
            for it in rows
            if it.mode.startswith("VIDEO")
            and self.is_public(it)
            and self.status_of(it).get("status") == "PUBLISH_COMPLETE"
        ]
        return envelope(200, {"videos": videos, "cursor": cursor + len(rows), "has_more": more})

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        """A row of `list_published`, or None while the item is not (yet) a publication."""
        if item.kind != "publish":
            return None
        status = self.status_of(item)["status"]
        if status not in ("PUBLISH_COMPLETE", "SEND_TO_USER_INBOX"):
            return None
        draft = status == "SEND_TO_USER_INBOX"
        return {
            "external_id": item.id if draft else item.post_id,
            "url": None if draft else item.url,
            "status": "inbox" if draft else "published",
            "kind": item.mode.split(":")[0].lower(),
            "text": item.text,
            "title": item.title,
            "media": list(item.media or []),
        }


def _looks_like_video(head: bytes) -> bool:
    """MP4 / MOV (an ISO-BMFF `ftyp` box first) or WebM (EBML): what TikTok accepts."""
    return head[4:8] == b"ftyp" or head.startswith(b"\x1a\x45\xdf\xa3")
