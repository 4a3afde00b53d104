"""Facebook Pages Graph API emulator (NETWORKS.md section 3)."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.sandbox.core import (
    Request,
    digits,
    find_by_post_id,
    get_item,
    json_response,
    new_item,
    update_item,
)
from backend.networks.sandbox.graph import GraphEmulator, fb_time, graph_error
from backend.networks.sandbox.store import SandboxItem

PLATFORM = "facebook"


class FacebookEmulator(GraphEmulator):
    platform = PLATFORM

    def __init__(self, config):  # type: ignore[no-untyped-def]
        super().__init__(config)
        self.route("POST", r"/(?P<page>\d+)/feed", self.feed)
        self.route("POST", r"/(?P<page>\d+)/photos", self.photos)
        self.route("POST", r"/(?P<page>\d+)/videos", self.videos)
        self.route("GET", r"/(?P<page>\d+)/(?:published_posts|feed|posts)", self.list_posts)
        self.route("GET", r"/(?P<obj>[\d_]+)", self.get_object)
        self.route("DELETE", r"/(?P<obj>[\d_]+)", self.delete_object)

    def _create(self, request: Request, page: str, mode: str) -> httpx.Response:
        acc = self.auth(request, page)
        if isinstance(acc, httpx.Response):
            return acc
        p = request.params
        if acc.behaviour == "fail-permanent":
            return graph_error(400, 190, "Error validating access token: The session has been invalidated because "
                               "the user changed their password or Facebook has changed the session for security "
                               "reasons.", subcode=460)
        text = str(p.get("message") or p.get("caption") or p.get("description") or "")
        media_url = p.get("url") if mode == "photo" else p.get("file_url") if mode == "video" else None
        if mode == "feed" and not text and not p.get("link"):
            return graph_error(400, 100, "(#100) Invalid parameter: message or link is required")
        if mode != "feed" and not (isinstance(media_url, str) and media_url.startswith(("https://", "http://"))):
            return graph_error(400, 100, f"(#100) Invalid parameter: {'url' if mode == 'photo' else 'file_url'} "
                               "must be a public http(s) URL")
        if str(p.get("published", "true")).lower() == "false" and mode == "feed":
            return graph_error(400, 100, "(#100) Unpublished posts are not emulated by the sandbox")
        blocked = self.behaviour_error(acc)
        if blocked:
            return blocked
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
        new_item(PLATFORM, acc, "post", post_id, mode=mode, text=text, media=[media_url] if media_url else [],
                 data={"link": p.get("link")} if p.get("link") else {}, post_id=obj, url=url)
        return json_response(200, body)

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
            return graph_error(400, 100, f"Unsupported get request. Object with ID '{obj}' does not exist, cannot be "
                               "loaded due to missing permissions, or does not support this operation", subcode=33)
        return json_response(200, {"id": obj, "permalink_url": item.url, "message": item.text,
                                  "created_time": fb_time(item.created_at)})

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
        acc = self.auth(request, page)
        if isinstance(acc, httpx.Response):
            return acc
        query = SandboxItem.select().where((SandboxItem.platform == PLATFORM) & (SandboxItem.account_id == acc.id)
                                           & (SandboxItem.kind == "post") & (SandboxItem.state != "deleted"))
        rows, paging = self.graph_page(request, query, request.url.path.split("/v21.0", 1)[-1])
        data = [{"id": it.id, "message": it.text, "created_time": fb_time(it.created_at), "permalink_url": it.url}
                for it in rows]
        return json_response(200, {"data": data, "paging": paging})

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "post" or item.state == "deleted":
            return None
        ext = item.post_id if item.mode == "video" else item.id  # a video is known by its video id
        return {"external_id": ext, "url": item.url, "status": "published", "kind": item.mode,
                "text": item.text, "title": None, "media": list(item.media or [])}
