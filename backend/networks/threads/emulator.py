"""Threads API emulator (fidelity table: docs.md), built on the Graph emulator (Facebook's package): containers
`POST /{user}/threads` (TEXT, IMAGE, VIDEO, carousel items, CAROUSEL of 2-20 finished items; text at most 500
characters counted as Threads counts), their status `GET /{container}?fields=id,status,error_message` (IN_PROGRESS ->
FINISHED with time, ERROR with an error_message and HTTP 200 for fail-permanent, EXPIRED after 24 h, PUBLISHED),
`POST /{user}/threads_publish` (an unfinished container: 400 code 24 / 4279009; the rolling 24 h limit: 400 code 9),
`GET /{user}/threads_publishing_limit`, `GET /{user}/threads` (the user's threads, newest first), a thread's
permalink. Only the version v1.0 is served."""

from __future__ import annotations

import unicodedata
from datetime import timedelta
from typing import Any

import httpx

from backend.networks.facebook.emulator_errors import GRAPH, graph_fault
from backend.networks.facebook.emulator_graph import GraphEmulator, fb_time
from backend.networks.facebook.emulator_oauth import graph_error
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
from backend.networks.sandbox.store import SandboxAccount, SandboxItem
from backend.networks.threads.emulator_oauth import ThreadsOAuth
from backend.networks.threads.lifecycle import DEFAULT, LIFECYCLE

# Threads' own counting, written apart from the product's (backend.schemas.text): an emulator that counted with the
# product's code would agree with its bugs. TH-R11: "Text posts are limited to 500 characters." "Emojis are counted
# as the number of UTF-8 bytes." TH-R8: a carousel of "at least 2 and up to 20" items.
MAX_TEXT = 500
CAROUSEL = (2, 20)


def _emoji(ch: str) -> bool:
    cp = ord(ch)
    return (
        cp > 0xFFFF
        or ch in "\u200d\ufe0e\ufe0f\u20e3"
        or (cp >= 0x2000 and unicodedata.category(ch) == "So")
        or 0x1F1E6 <= cp <= 0x1F1FF
    )


def text_length(text: str) -> int:
    return sum(len(ch.encode("utf-8")) if _emoji(ch) else 1 for ch in text)


PLATFORM = "threads"
DAILY_POSTS = 250  # TH-R12; the configuration's `daily_posts` (SOCIALPUB_SANDBOX_THREADS_DAILY_POSTS)
CONTAINER_TTL_S = 86400
WEB = "https://www.threads.net"

FAULT_LIST = [
    graph_fault("1", 500, "retry", "An unknown error occurred", transient=True),
    graph_fault("2", 503, "retry", "Service temporarily unavailable", transient=True),
    graph_fault("4", 400, "wait", "(#4) Application request limit reached", transient=True),
    graph_fault(
        "9", 400, "wait", "(#9) The user reached the Threads publishing limit (250 posts in 24 hours)"
    ),
    graph_fault("24/4279009", 400, "retry", "The requested resource does not exist"),
    graph_fault("100/33", 400, "permanent", "Unsupported request: the object does not exist"),
    graph_fault("190/463", 400, "reauth", "Error validating access token: Session has expired.", extra=True),
]
FAULTS = {f.code: f for f in FAULT_LIST}
ERROR_ENDPOINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "publish": (("POST",), GRAPH + r"/\d+/threads/?$"),
    "threads_publish": (("POST",), GRAPH + r"/\d+/threads_publish/?$"),
    "status": (("GET",), GRAPH + r"/\d+/?$"),
    "list": (("GET",), GRAPH + r"/\d+/threads/?$"),
}


def th_error(status: int, code: int, message: str, *, subcode: int | None = None) -> httpx.Response:
    """The Threads API's error body: Graph's envelope, `type` THApiException for its own refusals."""
    resp = graph_error(status, code, message, subcode=subcode, transient=False)
    body = resp.json()
    body["error"]["type"] = "THApiException"
    return json_response(status, body)


class ThreadsEmulator(GraphEmulator):
    platform = PLATFORM
    HOSTS = {"api": "https://graph.threads.sandbox.invalid"}
    SERVED_HOSTS = ("https://threads.sandbox.invalid",)
    OAUTH = ThreadsOAuth
    FAULTS = FAULTS
    ERROR_ENDPOINTS = ERROR_ENDPOINTS
    SERVE_ENDPOINTS = (
        ("authorize", "/oauth/authorize"),
        ("token", "POST /oauth/access_token"),
        ("long_lived", "/access_token?grant_type=th_exchange_token"),
        ("refresh", "/refresh_access_token?grant_type=th_refresh_token"),
    )

    @classmethod
    def new_identity(cls, name: str) -> tuple[str, str]:
        return "2" + digits(16, "5"), "THAA" + b62(150)

    def __init__(self, config: SandboxConfig) -> None:
        super().__init__(config)
        self.route("POST", r"/(?P<user>me|\d+)/threads", self.create_container)
        self.route("POST", r"/(?P<user>me|\d+)/threads_publish", self.threads_publish)
        self.route("GET", r"/(?P<user>me|\d+)/threads", self.list_threads)
        self.route("GET", r"/(?P<user>me|\d+)/threads_publishing_limit", self.publishing_limit)
        self.route("GET", r"/(?P<obj>\d+)", self.get_object)

    def version_refusal(self, version: str) -> httpx.Response | None:
        """Only v1.0 exists (TH-R16); another number is refused (a belief: no page gives the words)."""
        if LIFECYCLE.find(version) is not None:
            return None
        return th_error(400, 100, f"Unsupported version {version}: the Threads API version is {DEFAULT}")

    def _owner(self, user: str, acc: SandboxAccount) -> str:
        return acc.external_id if user == "me" else user

    def auth_for(
        self, request: Request, user: str, needs: str | None = None
    ) -> SandboxAccount | httpx.Response:
        acc = self.auth(request, None if user == "me" else user, needs=needs)
        return acc

    def container_status(self, item: SandboxItem) -> tuple[str, str]:
        if item.state == "published":
            return "PUBLISHED", ""
        if (self.now() - item.created_at) > timedelta(seconds=CONTAINER_TTL_S):
            return "EXPIRED", ""
        if not self.ready(item):
            return "IN_PROGRESS", ""
        if item.outcome != "ok":
            return "ERROR", str(item.outcome)
        return "FINISHED", ""

    @staticmethod
    def _url(value: Any) -> str | None:
        return value if isinstance(value, str) and value.startswith(("https://", "http://")) else None

    def create_container(self, request: Request, user: str) -> httpx.Response:
        acc = self.auth_for(request, user, needs="threads_content_publish")
        if isinstance(acc, httpx.Response):
            return acc
        p = request.params
        media_type = str(p.get("media_type") or "").upper()
        text = str(p.get("text") or "")
        is_item = str(p.get("is_carousel_item", "false")).lower() == "true"
        if text_length(text) > MAX_TEXT:
            return th_error(400, 100, f"(#100) The text is limited to {MAX_TEXT} characters.")
        children: list[str] = []
        media: list[str] = []
        processing = 0.0
        if media_type == "TEXT":
            if not text:
                return th_error(400, 100, "(#100) The parameter text is required for a TEXT post.")
            if is_item:
                return th_error(400, 100, "(#100) A carousel item must be an IMAGE or a VIDEO.")
        elif media_type == "IMAGE":
            url = self._url(p.get("image_url"))
            if url is None:
                return th_error(400, 100, "(#100) The parameter image_url is required.")
            media, processing = [url], self.processing_s(acc, 0.2)
        elif media_type == "VIDEO":
            url = self._url(p.get("video_url"))
            if url is None:
                return th_error(400, 100, "(#100) The parameter video_url is required.")
            media, processing = [url], self.processing_s(acc)
        elif media_type == "CAROUSEL":
            if is_item:
                return th_error(400, 100, "(#100) A carousel cannot be a carousel item.")
            children = [c for c in str(p.get("children") or "").split(",") if c]
            low, high = CAROUSEL
            if not low <= len(children) <= high:
                return th_error(
                    400, 100, f"(#100) A carousel needs at least {low} and at most {high} children."
                )
            for cid in children:
                child = get_item(cid, PLATFORM)
                if child is None or child.account_id != acc.id or not child.mode.endswith(":item"):
                    return th_error(400, 100, f"(#100) Invalid carousel child {cid}", subcode=33)
                if self.container_status(child)[0] != "FINISHED":
                    return th_error(400, 24, "The requested resource does not exist", subcode=4279009)
        else:
            return th_error(
                400,
                100,
                f"(#100) Unknown media_type {media_type or '(none)'}: TEXT, IMAGE, VIDEO or CAROUSEL",
            )
        outcome = "ok"
        if acc.behaviour == "fail-permanent" and media_type in ("IMAGE", "VIDEO"):
            outcome = "FAILED_PROCESSING_VIDEO" if media_type == "VIDEO" else "UNKNOWN"
        if media and self.unfetchable(media[0]) is not None:
            # TH-R13: Threads downloads the media from the public internet; one on this machine or a private network
            # fails the container (status ERROR, HTTP 200): FAILED_DOWNLOADING_VIDEO (T6); an image's download error
            # is not in T6's list, so UNKNOWN (a belief)
            outcome = "FAILED_DOWNLOADING_VIDEO" if media_type == "VIDEO" else "UNKNOWN"
        cid = digits(17, "1")
        new_item(
            PLATFORM,
            acc,
            "container",
            cid,
            processing_s=processing,
            mode=f"{media_type}:item" if is_item else media_type,
            text=text,
            media=media,
            data={"children": children},
            outcome=outcome,
        )
        return json_response(200, {"id": cid})

    def threads_publish(self, request: Request, user: str) -> httpx.Response:
        acc = self.auth_for(request, user, needs="threads_content_publish")
        if isinstance(acc, httpx.Response):
            return acc
        cid = str(request.params.get("creation_id") or "")
        item = get_item(cid, PLATFORM)
        if item is None or item.kind != "container" or item.account_id != acc.id:
            return th_error(400, 100, f"(#100) Invalid creation_id {cid}", subcode=33)
        if item.mode.endswith(":item"):
            return th_error(400, 100, "(#100) A carousel item cannot be published alone")
        status, _ = self.container_status(item)
        if status == "PUBLISHED":
            return th_error(400, 100, "(#100) This container has already been published")
        if status in ("EXPIRED", "ERROR"):
            return th_error(400, 24, "The requested resource does not exist", subcode=4279009)
        if status != "FINISHED":  # TH-R9: too early
            return graph_error(
                400, 24, "The requested resource does not exist", subcode=4279009, transient=False
            )
        blocked = self.behaviour_error(acc)
        if blocked:
            return blocked
        cap = self.option("daily_posts", DAILY_POSTS)
        thread_id = digits(17, "1")
        code = b64url(11)
        media = list(item.media or [])
        for child_id in (item.data or {}).get("children", []):
            child = get_item(child_id)
            media.extend(child.media if child else [])
        with exclusive(acc):  # the limit's check and the thread counted against it: atomic
            fresh = get_item(item.id, PLATFORM)
            if fresh is not None and fresh.state == "published":
                return th_error(400, 100, "(#100) This container has already been published")
            if self.config.limits and self.count_since(acc, ("thread",), 86400, limit=cap) >= cap:
                return graph_error(
                    400, 9, f"(#9) The user reached the Threads publishing limit ({cap} posts in 24 hours)"
                )
            update_item(item.id, state="published", post_id=thread_id)
            new_item(
                PLATFORM,
                acc,
                "thread",
                thread_id,
                mode=item.mode,
                text=item.text,
                media=media,
                data={"container": item.id, "shortcode": code},
                url=f"{WEB}/@{acc.username}/post/{code}",
            )
        return json_response(200, {"id": thread_id})

    def get_object(self, request: Request, obj: str) -> httpx.Response:
        acc = self.auth(request, needs="threads_basic")
        if isinstance(acc, httpx.Response):
            return acc
        item = get_item(obj, PLATFORM)
        if item is None or item.account_id != acc.id:
            return th_error(
                400, 100, f"Unsupported get request. Object with ID '{obj}' does not exist", subcode=33
            )
        if item.kind == "container":
            status, message = self.container_status(item)
            body: dict[str, Any] = {"id": obj, "status": status}
            if message:
                body["error_message"] = message
            return json_response(200, body)  # TH-R10: an ERROR container is an HTTP 200 answer
        return json_response(200, self._thread(item, acc))

    def _thread(self, it: SandboxItem, acc: SandboxAccount) -> dict[str, Any]:
        kind = it.mode.split(":")[0] or "TEXT"
        return {
            "id": it.id,
            "media_product_type": "THREADS",
            "media_type": {"TEXT": "TEXT_POST", "CAROUSEL": "CAROUSEL_ALBUM"}.get(kind, kind),
            "text": it.text,
            "timestamp": fb_time(it.created_at),
            "permalink": it.url,
            "username": acc.username,
        }

    def list_threads(self, request: Request, user: str) -> httpx.Response:
        """/{user}/threads: the user's threads, newest first, in pages (`limit`, `after`)."""
        acc = self.auth_for(request, user, needs="threads_basic")
        if isinstance(acc, httpx.Response):
            return acc
        query = SandboxItem.select().where(
            (SandboxItem.platform == PLATFORM)
            & (SandboxItem.account_id == acc.id)
            & (SandboxItem.kind == "thread")
        )
        rows, paging = self.graph_page(request, query, f"/{user}/threads")
        if paging.get("next"):
            paging["next"] = paging["next"].replace(
                "graph.facebook.sandbox.invalid", "graph.threads.sandbox.invalid"
            )
        return json_response(200, {"data": [self._thread(it, acc) for it in rows], "paging": paging})

    def publishing_limit(self, request: Request, user: str) -> httpx.Response:
        acc = self.auth_for(request, user, needs="threads_basic")
        if isinstance(acc, httpx.Response):
            return acc
        total = self.option("daily_posts", DAILY_POSTS) if self.config.limits else 1_000_000
        used = self.count_since(acc, ("thread",), 86400)
        return json_response(
            200, {"data": [{"quota_usage": used, "config": {"quota_total": total, "quota_duration": 86400}}]}
        )

    def describe(self, item: SandboxItem) -> dict[str, Any] | None:
        if item.kind != "thread":
            return None
        kind = item.mode.split(":")[0].lower() or "text"
        return {
            "external_id": item.id,
            "url": item.url,
            "status": "published",
            "kind": kind,
            "text": item.text,
            "title": None,
            "media": list(item.media or []),
        }
