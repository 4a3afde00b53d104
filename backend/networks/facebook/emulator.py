"""Facebook Pages Graph API emulator (NETWORKS.md section 3). Photos and videos by URL (`url`, `file_url`) or as
the multipart file `source`, whose size and sha256 the item's data["received"] records."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import httpx

from backend.networks.facebook import emulator_errors
from backend.networks.facebook.emulator_graph import GraphEmulator, fb_time
from backend.networks.facebook.emulator_oauth import graph_error
from backend.networks.facebook.lifecycle import DEFAULT
from backend.networks.sandbox.core import (
    Request,
    SandboxConfig,
    digits,
    find_by_post_id,
    get_item,
    json_response,
    new_item,
    update_item,
)
from backend.networks.sandbox.store import SandboxAccount, SandboxItem

PLATFORM = "facebook"
# belief: no page gives the words of a failed processing (its shape: VideoStatus.processing_phase.errors)
VIDEO_PROCESSING_ERROR = (
    "The video could not be processed: the file is corrupt or its format is not supported."
)
IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")


def multipart(request: Request) -> tuple[dict[str, str], dict[str, tuple[str, str, bytes]]]:
    """A multipart/form-data body: (fields, files name -> (filename, content type, bytes)); ({}, {}) otherwise."""
    ctype = request.header("content-type")
    if not ctype.lower().startswith("multipart/form-data") or "boundary=" not in ctype:
        return {}, {}
    boundary = ctype.split("boundary=", 1)[1].split(";")[0].strip().strip('"').encode()
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, str, bytes]] = {}
    for part in request.content.split(b"--" + boundary)[1:]:
        if part.startswith(b"--"):
            break  # the closing delimiter
        head, _sep, body = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        body = body.removesuffix(b"\r\n")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            name, _colon, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        params = {}
        for item in headers.get("content-disposition", "").split(";")[1:]:
            key, _eq, value = item.strip().partition("=")
            params[key.lower()] = value.strip('"')
        if "name" not in params:
            continue
        if "filename" in params:
            files[params["name"]] = (params["filename"], headers.get("content-type", ""), body)
        else:
            fields[params["name"]] = body.decode("utf-8", "replace")
    return fields, files


class FacebookEmulator(GraphEmulator):
    platform = PLATFORM
    HOSTS = {
        "api": "https://graph.facebook.sandbox.invalid",
        "video": "https://graph-video.facebook.sandbox.invalid",
    }
    FAULTS = emulator_errors.FAULTS
    ERROR_ENDPOINTS = emulator_errors.ERROR_ENDPOINTS
    SERVE_ENDPOINTS = (
        ("authorize", f"/{DEFAULT}/dialog/oauth"),
        ("token", f"/{DEFAULT}/oauth/access_token"),
        ("pages", f"/{DEFAULT}/me/accounts"),
        ("revoke", f"DELETE /{DEFAULT}/me/permissions"),
    )

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        self.route("POST", r"/(?P<page>\d+)/feed", self.feed)
        self.route("POST", r"/(?P<page>\d+)/photos", self.photos)
        self.route("POST", r"/(?P<page>\d+)/videos", self.videos)
        self.route("GET", r"/(?P<page>\d+)/(?:published_posts|feed|posts)", self.list_posts)
        self.route("GET", r"/(?P<page>\d+)/videos", self.list_videos)
        self.route("GET", r"/(?P<obj>[\d_]+)", self.get_object)
        self.route("DELETE", r"/(?P<obj>[\d_]+)", self.delete_object)

    def _create(self, request: Request, page: str, mode: str) -> httpx.Response:
        fields, files = multipart(request)
        request.params.update(
            fields
        )  # a multipart body's fields count as form fields (access_token among them)
        acc = self.auth(request, page, needs="pages_manage_posts")
        if isinstance(acc, httpx.Response):
            return acc
        p = request.params
        source = files.get("source") if mode != "feed" else None
        if (
            acc.behaviour == "fail-permanent" and mode != "video"
        ):  # a video is accepted, then fails processing
            return graph_error(
                400,
                190,
                "Error validating access token: The session has been invalidated because "
                "the user changed their password or Facebook has changed the session for security "
                "reasons.",
                subcode=460,
            )
        text = str(p.get("message") or p.get("caption") or p.get("description") or "")
        media_url = p.get("url") if mode == "photo" else p.get("file_url") if mode == "video" else None
        attached = self._attached(p, acc) if mode == "feed" else []
        if isinstance(attached, httpx.Response):
            return attached
        if mode == "feed" and not text and not p.get("link") and not attached:
            return graph_error(400, 100, "(#100) Invalid parameter: message or link is required")
        if source is not None:  # the file itself, as multipart `source`
            media_url = None
            refused = self._check_source(mode, source[2])
            if refused:
                return refused
        elif mode != "feed" and not (
            isinstance(media_url, str) and media_url.startswith(("https://", "http://"))
        ):
            return graph_error(
                400,
                100,
                f"(#100) Invalid parameter: {'url' if mode == 'photo' else 'file_url'} "
                "(or a multipart source file) must be a public http(s) URL",
            )
        if str(p.get("published", "true")).lower() == "false" and mode == "feed":
            return graph_error(400, 100, "(#100) Unpublished posts are not emulated by the sandbox")
        blocked = self.behaviour_error(acc)
        if blocked:
            return blocked
        if mode == "photo" and str(p.get("published", "true")).lower() == "false":
            return self._unpublished_photo(acc, text, media_url, source)
        post_num = digits(16, "1")
        post_id = f"{page}_{post_num}"
        body: dict[str, Any]
        if mode == "photo":
            obj = digits(16, "1")
            url = f"https://www.facebook.com/photo.php?fbid={obj}"
            body = {"id": obj, "post_id": post_id}
        elif mode == "video":
            obj = digits(16, "1")
            url = f"https://www.facebook.com/{page}/videos/{obj}/"
            body = {"id": obj}
        else:
            obj = None
            url = f"https://www.facebook.com/{page}/posts/{post_num}"
            body = {"id": post_id}
        data: dict[str, Any] = {"link": p.get("link")} if p.get("link") else {}
        if source is not None:
            data["received"] = {
                "bytes": len(source[2]),
                "sha256": hashlib.sha256(source[2]).hexdigest(),
                "filename": source[0],
                "content_type": source[1],
            }
        if mode == "video" and acc.behaviour == "fail-permanent":
            data["processing_error"] = True
        # a Meta app in development mode (a new app; `kind: live` for a Live one): its Page posts are seen only by
        # the people with a role on the app (FB-R18, belief)
        data["visibility"] = "everyone" if self.config.app(PLATFORM).kind == "live" else "app_roles"
        if attached:
            data["attached_media"] = [a.id for a in attached]
            for photo in attached:
                update_item(photo.id, state="attached")
        new_item(
            PLATFORM,
            acc,
            "post",
            post_id,
            processing_s=self.processing_s(acc) if mode == "video" else 0.0,
            mode=mode,
            text=text,
            media=[media_url] if media_url else [m for a in attached for m in (a.media or [])],
            data=data,
            post_id=obj,
            url=url,
        )
        return json_response(200, body)

    def _unpublished_photo(
        self,
        acc: SandboxAccount,
        text: str,
        media_url: str | None,
        source: tuple[str, str, bytes] | None,
    ) -> httpx.Response:
        """POST /{page}/photos published=false: a photo that is no post (not listed, never shown) until a /feed
        post attaches it (attached_media); answers its id alone."""
        obj = digits(16, "1")
        data: dict[str, Any] = {}
        if source is not None:
            data["received"] = {"bytes": len(source[2]), "sha256": hashlib.sha256(source[2]).hexdigest()}
        new_item(
            PLATFORM,
            acc,
            "unpublished_photo",
            obj,
            mode="photo",
            text=text,
            media=[media_url] if media_url else [],
            data=data,
            url=f"https://www.facebook.com/photo.php?fbid={obj}",
        )
        return json_response(200, {"id": obj})

    @staticmethod
    def _attached(p: dict[str, Any], acc: SandboxAccount) -> list[SandboxItem] | httpx.Response:
        """/feed's attached_media — a JSON list of {"media_fbid": id} (or attached_media[i] = one each): every id
        an unpublished photo of this Page not attached yet, else (#100)."""
        raw: Any = p.get("attached_media")
        entries: list[Any] = []
        try:
            if raw is not None:
                entries = json.loads(raw) if isinstance(raw, str) else list(raw)
            indexed = sorted(k for k in p if re.fullmatch(r"attached_media\[\d+\]", str(k)))
            for key in sorted(indexed, key=lambda k: int(k[15:-1])):
                value = p[key]
                entries.append(json.loads(value) if isinstance(value, str) else value)
        except (ValueError, TypeError):
            return graph_error(400, 100, "(#100) param attached_media must be an array of objects")
        out: list[SandboxItem] = []
        for entry in entries:
            fbid = str(entry.get("media_fbid") or "") if isinstance(entry, dict) else ""
            item = get_item(fbid, PLATFORM) if fbid else None
            if (
                item is None
                or item.kind != "unpublished_photo"
                or item.account_id != acc.id
                or item.state == "attached"
            ):
                return graph_error(
                    400,
                    100,
                    f"(#100) param attached_media[{len(out)}] must be an unpublished photo of this Page "
                    "not attached to a post yet",
                )
            out.append(item)
        return out

    @staticmethod
    def _check_source(mode: str, content: bytes) -> httpx.Response | None:
        """A multipart `source` as Facebook refuses it: missing, not an image (photos), not a video (videos)."""
        if not content:
            return graph_error(400, 324, "(#324) Requires upload file")
        if mode == "photo" and not content.startswith(IMAGE_MAGIC) and content[8:12] != b"WEBP":
            return graph_error(400, 324, "(#324) Missing or invalid image file")
        if (
            mode == "video"
            and content[4:8] != b"ftyp"
            and not content.startswith(b"\x1a\x45\xdf\xa3")
            and content[:4] != b"RIFF"
        ):
            return graph_error(
                400, 352, "Sorry, the video file you selected is in a format that we don't support."
            )
        return None

    def feed(self, request: Request, page: str) -> httpx.Response:
        return self._create(request, page, "feed")

    def photos(self, request: Request, page: str) -> httpx.Response:
        return self._create(request, page, "photo")

    def videos(self, request: Request, page: str) -> httpx.Response:
        return self._create(request, page, "video")

    def _find(self, obj: str) -> SandboxItem | None:
        """The item known by `obj`: its own id (a post) or its post_id (a photo's or a video's id)."""
        return get_item(obj, PLATFORM) or find_by_post_id(PLATFORM, obj)

    def get_object(self, request: Request, obj: str) -> httpx.Response:
        acc = self.auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        item = self._find(obj)
        if item is None or item.account_id != acc.id or item.state == "deleted":
            return graph_error(
                400,
                100,
                f"Unsupported get request. Object with ID '{obj}' does not exist, cannot be "
                "loaded due to missing permissions, or does not support this operation",
                subcode=33,
            )
        body: dict[str, Any] = {
            "id": obj,
            "permalink_url": item.url,
            "message": item.text,
            "created_time": fb_time(item.created_at),
        }
        if item.mode == "video":
            body["description"] = item.text
            body["status"] = self.video_status(item)
        return json_response(200, body)

    def video_status(self, item: SandboxItem) -> dict[str, Any]:
        """A video's `status` (VideoStatus: video_status and its phases, as Meta's business SDKs name them and
        its Reels sample reads them): processing until the item's processing time is over, then ready — or
        error (fail-permanent), with the processing phase's errors."""
        uploading = {"status": "complete"}
        if (item.data or {}).get("processing_error"):
            return {
                "video_status": "error",
                "uploading_phase": uploading,
                "processing_phase": {
                    "status": "error",
                    "errors": [{"message": VIDEO_PROCESSING_ERROR}],
                },
                "publishing_phase": {"status": "not_started"},
            }
        if not self.ready(item):
            return {
                "video_status": "processing",
                "uploading_phase": uploading,
                "processing_phase": {"status": "in_progress"},
                "publishing_phase": {"status": "not_started"},
            }
        return {
            "video_status": "ready",
            "uploading_phase": uploading,
            "processing_phase": {"status": "complete"},
            "publishing_phase": {"status": "complete", "publish_status": "published"},
        }

    def visible(self, item: SandboxItem) -> bool:
        """Listed as the Page's post: a video only once processed and published (strictest reading)."""
        return item.mode != "video" or self.video_status(item)["video_status"] == "ready"

    def delete_object(self, request: Request, obj: str) -> httpx.Response:
        acc = self.auth(request)
        if isinstance(acc, httpx.Response):
            return acc
        item = self._find(obj)
        if item is None or item.account_id != acc.id:
            return graph_error(400, 100, f"Object with ID '{obj}' does not exist", subcode=33)
        update_item(item.id, state="deleted")
        return json_response(200, {"success": True})

    def list_posts(self, request: Request, page: str) -> httpx.Response:
        """/{page}/published_posts (also /feed, /posts): the Page's posts, newest first, in pages
        (`limit`, `after` <- `paging.cursors.after`)."""
        acc = self.auth(request, page, needs="pages_read_engagement")
        if isinstance(acc, httpx.Response):
            return acc
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == acc.id)
            & (SandboxItem.kind == "post")
            & (SandboxItem.state != "deleted")
        )
        rows, paging = self.graph_page(request, query, self.path_of(request))
        data = [
            {"id": it.id, "message": it.text, "created_time": fb_time(it.created_at), "permalink_url": it.url}
            for it in rows
            if self.visible(it)
        ]
        return json_response(200, {"data": data, "paging": paging})

    def list_videos(self, request: Request, page: str) -> httpx.Response:
        """/{page}/videos: the Page's videos (their video ids), newest first, in pages, each with its
        description and status — a video is listed once its upload is complete, processing or not."""
        acc = self.auth(request, page, needs="pages_read_engagement")
        if isinstance(acc, httpx.Response):
            return acc
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == acc.id)
            & (SandboxItem.kind == "post")
            & (SandboxItem.mode == "video")
            & (SandboxItem.state != "deleted")
        )
        rows, paging = self.graph_page(request, query, self.path_of(request))
        data = [
            {
                "id": it.post_id,
                "description": it.text,
                "created_time": fb_time(it.created_at),
                "updated_time": fb_time(it.created_at),
                "permalink_url": it.url,
                "status": self.video_status(it),
            }
            for it in rows
        ]
        return json_response(200, {"data": data, "paging": paging})

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "post" or item.state == "deleted" or not self.visible(item):
            return None
        ext = item.post_id if item.mode == "video" else item.id  # a video is known by its video id
        return {
            "external_id": ext,
            "url": item.url,
            "status": "published",
            "kind": item.mode,
            "text": item.text,
            "title": None,
            "media": list(item.media or []),
            "visibility": (item.data or {}).get(
                "visibility", "everyone"
            ),  # app_roles: a development-mode app's
        }
