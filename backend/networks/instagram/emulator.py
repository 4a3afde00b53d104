"""Instagram Graph API content-publishing emulator (NETWORKS.md section 2): containers that go
IN_PROGRESS -> FINISHED with time (ERROR for fail-permanent, EXPIRED after 24 h), carousels of 2-10
finished children, media_publish with the rolling 24 h publishing limit (code 9 / 2207042),
content_publishing_limit, permalinks, the account's media listing."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import httpx

from backend.networks.facebook.emulator_graph import GraphEmulator, fb_time
from backend.networks.facebook.emulator_oauth import graph_error
from backend.networks.facebook.lifecycle import DEFAULT
from backend.networks.instagram import emulator_errors
from backend.networks.instagram.emulator_oauth import InstagramOAuth
from backend.networks.sandbox.core import (
    Request,
    SandboxConfig,
    b62,
    b64url,
    digits,
    exclusive,
    get_item,
    json_response,
    new_item,
    update_item,
)
from backend.networks.sandbox.oauth import authenticate
from backend.networks.sandbox.store import SandboxAccount, SandboxItem

PLATFORM = "instagram"
DAILY_POSTS = (
    50  # content_publishing_limit; the configuration's `daily_posts` (SOCIALPUB_SANDBOX_INSTAGRAM_…)
)
CONTAINER_TTL_S = 86400
UPLOAD_HOST = (
    "https://rupload.facebook.sandbox.invalid"  # rupload.facebook.com: Reels' bytes (resumable upload)
)
CAPTION_MAX = 2200


def fetch_refused(url: str, why: str) -> httpx.Response:
    """Instagram's refusal of a media URL it cannot fetch (error codes page: 9004 / 2207052, HTTP 400)."""
    return graph_error(
        400,
        9004,
        "Only photo or video can be accepted as media type.",
        subcode=2207052,
        user_title="Media download has failed.",
        user_msg=f"The media could not be fetched from this URI: {url}. Please check the URI and try again "
        f"({why}).",
    )


class InstagramEmulator(GraphEmulator):
    platform = PLATFORM
    HOSTS = {"api": "https://graph.facebook.sandbox.invalid", "upload": UPLOAD_HOST}
    OAUTH = InstagramOAuth
    FAULTS = emulator_errors.FAULTS
    ERROR_ENDPOINTS = emulator_errors.ERROR_ENDPOINTS
    SERVE_ENDPOINTS = (
        ("authorize", f"/{DEFAULT}/dialog/oauth"),
        ("token", f"/{DEFAULT}/oauth/access_token"),
        ("pages", f"/{DEFAULT}/me/accounts?fields=instagram_business_account"),
        ("revoke", f"DELETE /{DEFAULT}/me/permissions"),
    )

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return "178414" + digits(11, "0"), "IGQV" + b62(120)

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        self.route("POST", r"/(?P<user>\d+)/media", self.create_container)
        self.route("POST", r"/(?P<user>\d+)/media_publish", self.media_publish)
        self.route("GET", r"/(?P<user>\d+)/media", self.list_media)
        self.route("GET", r"/(?P<user>\d+)/content_publishing_limit", self.publishing_limit)
        self.route("GET", r"/(?P<obj>\d+)", self.get_object)
        self.route("POST", r"/ig-api-upload/(?P<version>v\d+\.\d+)/(?P<cid>\d+)", self.rupload)

    def _quota_used(self, acc: SandboxAccount, limit: int | None = None) -> int:
        return self.count_since(acc, ("media",), 86400, limit=limit)

    def container_status(self, item: SandboxItem) -> tuple[str, str]:
        if item.state == "published":
            return "PUBLISHED", "Published"
        if (self.now() - item.created_at) > timedelta(seconds=CONTAINER_TTL_S):
            return "EXPIRED", "Expired"
        if (item.data or {}).get("awaiting_upload") or not self.ready(
            item
        ):  # a resumable one waits for bytes
            return "IN_PROGRESS", "In Progress"
        if item.outcome != "ok":
            return "ERROR", f"Error: Media upload has failed with error code {item.outcome}"
        return "FINISHED", "Finished"

    def create_container(self, request: Request, user: str) -> httpx.Response:
        acc = self.auth(request, user, needs="instagram_content_publish")
        if isinstance(acc, httpx.Response):
            return acc
        p = request.params
        media_type = str(p.get("media_type") or "IMAGE").upper()
        caption = str(p.get("caption") or "")
        is_item = str(p.get("is_carousel_item", "false")).lower() == "true"
        if len(caption) > CAPTION_MAX:
            return graph_error(400, 36004, "The caption is too long.", subcode=2207010)
        if is_item and caption:
            return graph_error(400, 100, "(#100) Carousel items cannot have a caption")
        children: list[str] = []
        if media_type == "CAROUSEL":
            children = [c for c in str(p.get("children") or "").split(",") if c]
            if not 2 <= len(children) <= 10:
                return graph_error(400, 100, "The carousel needs 2 to 10 children.", subcode=2207028)
            for cid in children:
                child = get_item(cid, PLATFORM)
                if (
                    child is None
                    or child.account_id != acc.id
                    or child.mode not in ("IMAGE:item", "VIDEO:item")
                ):
                    return graph_error(400, 100, f"(#100) Invalid carousel child {cid}", subcode=2207028)
                if self.container_status(child)[0] != "FINISHED":
                    return graph_error(400, 9007, "Media ID is not available", subcode=2207027)
            media: list[str] = []
            processing = 0.0
        elif media_type in ("IMAGE",):
            url = p.get("image_url")
            if not (isinstance(url, str) and url.startswith(("https://", "http://"))):
                return graph_error(
                    400, 9004, "Only photo or video can be accepted as media type.", subcode=2207052
                )
            if (why := self.unfetchable(url)) is not None:
                return fetch_refused(url, why)
            media, processing = [url], self.processing_s(acc, 0.2)
        elif media_type in ("REELS", "VIDEO", "STORIES"):
            url = p.get("video_url")
            resumable = str(p.get("upload_type") or "") == "resumable"
            if resumable and url:
                return graph_error(400, 100, "(#100) upload_type=resumable takes no video_url")
            if not resumable and not (isinstance(url, str) and url.startswith(("https://", "http://"))):
                return graph_error(400, 9004, "The video URL cannot be fetched.", subcode=2207052)
            if url and (why := self.unfetchable(str(url))) is not None:
                return fetch_refused(str(url), why)
            if media_type == "VIDEO" and not is_item:
                return graph_error(
                    400, 100, "The media type VIDEO is only for carousel items; use REELS.", subcode=2207023
                )
            media, processing = ([url] if url else []), self.processing_s(acc)
        else:
            return graph_error(400, 100, f"Unknown media type {media_type}.", subcode=2207023)
        outcome = "ok"
        if acc.behaviour == "fail-permanent" and media_type != "CAROUSEL":
            outcome = "2207026" if media_type != "IMAGE" else "2207009"
        kind_mode = ("IMAGE" if media_type == "IMAGE" else "VIDEO") + ":item" if is_item else media_type
        cid = digits(17, "1")
        new_item(
            PLATFORM,
            acc,
            "container",
            cid,
            processing_s=processing,
            mode=kind_mode,
            text=caption,
            media=media,
            data={
                "children": children,
                "share_to_feed": p.get("share_to_feed"),
                **({"awaiting_upload": True} if p.get("upload_type") == "resumable" else {}),
            },
            outcome=outcome,
        )
        if p.get("upload_type") == "resumable":
            version = self.version_of(request.url.path) or DEFAULT
            return json_response(200, {"id": cid, "uri": f"{UPLOAD_HOST}/ig-api-upload/{version}/{cid}"})
        return json_response(200, {"id": cid})

    def rupload(self, request: Request, version: str, cid: str) -> httpx.Response:
        """POST rupload …/ig-api-upload/<version>/<container>: a resumable container's video bytes, with
        `Authorization: OAuth <token of the container's owner>`, `offset` (the bytes already received: 0) and
        `file_size` (the whole file's). The container is IN_PROGRESS until they arrive; its processing starts then.
        The refusals' words are a belief (no page gives them), in Graph's envelope."""
        refused = self.version_refusal(version)
        if refused is not None:
            return refused
        scheme, _sp, token = request.header("authorization").partition(" ")
        found = authenticate(token.strip() or None, self.platform) if scheme.lower() == "oauth" else None
        acc = found.account if found is not None and not found.problem else None
        if acc is None:
            return graph_error(401, 190, "Invalid OAuth access token - Cannot parse access token")
        item = get_item(cid, PLATFORM)
        if item is None or item.kind != "container" or item.account_id != acc.id:
            return graph_error(400, 100, f"(#100) No resumable upload session for {cid}", subcode=33)
        if not (item.data or {}).get("awaiting_upload"):
            return graph_error(400, 100, "(#100) The upload of this container is already complete")
        try:
            offset, size = int(request.header("offset")), int(request.header("file_size"))
        except ValueError:
            return graph_error(400, 100, "(#100) The offset and file_size headers are required integers")
        body = request.content
        if offset != 0:
            return graph_error(400, 100, f"(#100) Invalid offset {offset}: 0 bytes were received so far")
        if not body or size != len(body):
            return graph_error(
                400, 100, f"(#100) file_size {size} does not match the {len(body)} bytes received"
            )
        data = {
            **(item.data or {}),
            "awaiting_upload": False,
            "received": {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()},
        }
        update_item(cid, data=data, started_at=self.now())
        return json_response(200, {"success": True, "message": "Upload successful."})

    def media_publish(self, request: Request, user: str) -> httpx.Response:
        acc = self.auth(request, user)
        if isinstance(acc, httpx.Response):
            return acc
        cid = str(request.params.get("creation_id") or "")
        item = get_item(cid, PLATFORM)
        if item is not None and item.kind != "container":
            item = None
        if item is None or item.account_id != acc.id:
            return graph_error(400, 24, "The media with the creation_id was not found.", subcode=2207006)
        if item.mode.endswith(":item"):
            return graph_error(400, 100, "(#100) A carousel item cannot be published alone")
        status, _ = self.container_status(item)
        if status == "PUBLISHED":
            return graph_error(400, 100, "(#100) This container has already been published")
        if status == "EXPIRED":
            return graph_error(400, -2, "The media has expired.", subcode=2207020)
        if status == "ERROR":
            return graph_error(400, -1, "The container failed to upload.", subcode=2207032)
        if status != "FINISHED":
            return graph_error(
                400,
                9007,
                "Media ID is not available",
                subcode=2207027,
                user_msg="The media is not ready for publishing, please wait for a moment",
            )
        blocked = self.behaviour_error(acc)
        if blocked:
            return blocked
        cap = self.option("daily_posts", DAILY_POSTS)
        media_id = digits(17, "1")
        shortcode = b64url(11)
        path = "reel" if item.mode == "REELS" else "p"
        media = list(item.media or [])
        if item.mode == "CAROUSEL":
            for cid_ in (item.data or {}).get("children", []):
                child = get_item(cid_)
                media.extend(child.media if child else [])
        with exclusive(acc):  # the publishing limit's check and the media counted against it: atomic
            fresh = get_item(item.id, PLATFORM)
            if fresh is not None and fresh.state == "published":
                return graph_error(400, 100, "(#100) This container has already been published")
            if self.config.limits and self._quota_used(acc, cap) >= cap:
                return graph_error(
                    400,
                    9,
                    "Application request limit reached",
                    subcode=2207042,
                    user_title="Max posts reached",
                    user_msg="The maximum number of posts that were allowed to be published has "
                    "been reached.",
                )
            update_item(item.id, state="published", post_id=media_id)
            new_item(
                PLATFORM,
                acc,
                "media",
                media_id,
                mode=item.mode,
                text=item.text,
                media=media,
                data={"container": item.id, "shortcode": shortcode},
                url=f"https://www.instagram.com/{path}/{shortcode}/",
            )
        return json_response(200, {"id": media_id})

    def get_object(self, request: Request, obj: str) -> httpx.Response:
        acc = self.auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        item = get_item(obj, PLATFORM)
        if item is None or item.account_id != acc.id:
            return graph_error(
                400, 100, f"Unsupported get request. Object with ID '{obj}' does not exist", subcode=33
            )
        if item.kind == "container":
            code, status = self.container_status(item)
            return json_response(200, {"status_code": code, "status": status, "id": obj})
        product = "REELS" if item.mode == "REELS" else "FEED"
        return json_response(
            200,
            {
                "id": obj,
                "permalink": item.url,
                "media_product_type": product,
                "caption": item.text,
                "timestamp": fb_time(item.created_at),
            },
        )

    def list_media(self, request: Request, user: str) -> httpx.Response:
        """/{ig-user}/media: the account's media, newest first, in pages (`limit`, `after`)."""
        acc = self.auth(request, user, needs="instagram_basic")
        if isinstance(acc, httpx.Response):
            return acc
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == acc.id)
            & (SandboxItem.kind == "media")
        )
        rows, paging = self.graph_page(request, query, f"/{user}/media")
        return json_response(
            200,
            {
                "data": [
                    {
                        "id": it.id,
                        "caption": it.text,
                        "timestamp": fb_time(it.created_at),
                        "permalink": it.url,
                    }
                    for it in rows
                ],
                "paging": paging,
            },
        )

    def publishing_limit(self, request: Request, user: str) -> httpx.Response:
        acc = self.auth(request, user)
        if isinstance(acc, httpx.Response):
            return acc
        total = self.option("daily_posts", DAILY_POSTS) if self.config.limits else 1_000_000
        return json_response(
            200,
            {
                "data": [
                    {
                        "quota_usage": self._quota_used(acc),
                        "config": {"quota_total": total, "quota_duration": 86400},
                    }
                ]
            },
        )

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "media":
            return None
        return {
            "external_id": item.id,
            "url": item.url,
            "status": "published",
            "kind": item.mode.lower(),
            "text": item.text,
            "title": None,
            "media": list(item.media or []),
        }
