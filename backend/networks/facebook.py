"""Facebook Pages adapter (NETWORKS.md section 3): /{page}/feed for text, /{page}/photos with url for an
image, graph-video /{page}/videos with file_url for a video; the permalink read back from the object.
Published at once (no asynchronous step); find_existing reads /{page}/published_posts."""

from __future__ import annotations

import httpx

from backend.networks.base import (
    MAX_LISTING_PAGES,
    PAGES_WITHOUT_WINDOW,
    NetworkError,
    Publication,
    PublishOutcome,
    check_failed,
)
from backend.networks.graph import GraphClient

PLATFORM = "facebook"


class FacebookAdapter:
    platform = PLATFORM

    def __init__(self, client: httpx.Client, base_url: str = "https://graph.facebook.com/v21.0",
                 video_base_url: str = "https://graph-video.facebook.com/v21.0") -> None:
        self.graph = GraphClient(client, "Facebook")
        self.base = base_url.rstrip("/")
        self.video_base = video_base_url.rstrip("/")

    def _permalink(self, token: str, object_id: str) -> str | None:
        try:
            body = self.graph.get(f"{self.base}/{object_id}", token, {"fields": "permalink_url"})
        except NetworkError:
            return None
        link = body.get("permalink_url")
        if isinstance(link, str) and link.startswith("/"):
            link = "https://www.facebook.com" + link
        return link if isinstance(link, str) else None

    def publish(self, pub: Publication) -> PublishOutcome:
        p, page, token = pub.payload, pub.account.external_account_id, pub.account.access_token
        try:
            if p.kind == "image":
                body = self.graph.post(f"{self.base}/{page}/photos", token,
                                       {"url": p.media[0].url, "caption": p.text or None})
                post_id = str(body.get("post_id") or body["id"])
            elif p.kind == "video":
                body = self.graph.post(f"{self.video_base}/{page}/videos", token,
                                       {"file_url": p.media[0].url, "description": p.text or None})
                post_id = str(body["id"])
            else:
                body = self.graph.post(f"{self.base}/{page}/feed", token, {"message": p.text})
                post_id = str(body["id"])
        except NetworkError as e:
            return e.outcome()
        except KeyError:
            return PublishOutcome.failed("retriable", "Facebook answered without a post id; it will be checked "
                                         "and retried", ambiguous=True)
        return PublishOutcome.published(post_id, self._permalink(token, post_id))

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        return PublishOutcome.published(ref, self._permalink(pub.account.access_token, ref))

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """Pages /{page}/published_posts (newest first, `paging.cursors.after`) back to the attempt's start."""
        page, token = pub.account.external_account_id, pub.account.access_token
        since = pub.not_before()
        expected = pub.payload.text.strip()
        params: dict[str, object] = {"fields": "id,message,created_time,permalink_url", "limit": 100}
        try:
            for _ in range(MAX_LISTING_PAGES if since is not None else PAGES_WITHOUT_WINDOW):
                body = self.graph.get(f"{self.base}/{page}/published_posts", token, params)
                posts = body.get("data") or []
                for post in posts:
                    if since is not None and _fb_time(post.get("created_time")) < since.timestamp():
                        return None  # older than the window: everything after is too
                    if (post.get("message") or "").strip() == expected:
                        return PublishOutcome.published(str(post["id"]), post.get("permalink_url"))
                paging = body.get("paging") or {}
                after = (paging.get("cursors") or {}).get("after")
                if not posts or not after or not paging.get("next"):
                    return None
                params = {**params, "after": after}
        except NetworkError as e:
            return check_failed("Facebook", e)
        return None


def _fb_time(value: object) -> float:
    from datetime import datetime

    try:
        return datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return 0.0
