"""Facebook Pages adapter (NETWORKS.md section 3): /{page}/feed for text, /{page}/photos for an image,
graph-video /{page}/videos for a video, the file sent as multipart `source` (issue 17 item 4: no public media URL
needed; the whole file in memory, media are at most 128 MB) — or, when the adapter is built with media_by_url
(SOCIALPUB_MEDIA_BY_URL), its URL as `url` / `file_url` for Facebook to fetch; the permalink read back from the
object.
Published at once (no asynchronous step); find_existing reads /{page}/published_posts, which lists a post as
soon as the call answered: absence is conclusive at once (LISTING_DELAY_S 0; for a video posted by file_url
this is UNCONFIRMED: raise it with SOCIALPUB_LISTING_DELAY_S if the Page lists videos only once processed)."""

from __future__ import annotations

import httpx

from backend.networks.base import (
    MediaRef,
    NetworkError,
    Publication,
    PublishOutcome,
    never_ready,
)
from backend.networks.facebook import NETWORK
from backend.networks.facebook.graph import GraphClient, find_in_listing, versioned
from backend.networks.facebook.lifecycle import DEFAULT
from backend.networks.factory import AdapterContext
from backend.networks.media_loader import MediaLoader

PLATFORM = NETWORK.name
LISTING_DELAY_S = NETWORK.listing_delay_s


class FacebookAdapter:
    platform = PLATFORM

    def __init__(
        self,
        client: httpx.Client,
        base_url: str = f"https://graph.facebook.com/{DEFAULT}",
        video_base_url: str = f"https://graph-video.facebook.com/{DEFAULT}",
        *,
        media_loader: MediaLoader | None = None,
        media_by_url: bool = False,
    ) -> None:
        self.graph = GraphClient(client, "Facebook")
        self.base = base_url.rstrip("/")
        self.video_base = video_base_url.rstrip("/")
        self.media_loader = media_loader
        self.media_by_url = media_by_url  # url / file_url for Facebook to fetch (SOCIALPUB_MEDIA_BY_URL)

    def _source(self, media: MediaRef) -> dict[str, tuple[str, bytes, str]]:
        """The multipart `source` part of a media: its bytes, a file name and its type."""
        if self.media_loader is None:
            raise NetworkError(
                "permanent", "no media loader configured for Facebook uploads", code="no_loader"
            )
        data = self.media_loader(media)
        if not data:
            raise NetworkError("permanent", f"the media {media.url} is empty", code="media_empty")
        default = "video/mp4" if media.kind == "video" else "image/jpeg"
        mime = (media.mime or default).split(";")[0].strip().lower()
        name = media.url.split("?")[0].rstrip("/").rsplit("/", 1)[-1] or (
            "video.mp4" if media.kind == "video" else "image.jpg"
        )
        return {"source": (name, data, mime)}

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
                params = {"caption": p.text or None}
                if self.media_by_url:
                    body = self.graph.post(
                        f"{self.base}/{page}/photos", token, {"url": p.media[0].url, **params}
                    )
                else:
                    body = self.graph.post(
                        f"{self.base}/{page}/photos", token, params, files=self._source(p.media[0])
                    )
                post_id = str(body.get("post_id") or body["id"])
            elif p.kind == "video":
                params = {"description": p.text or None}
                if self.media_by_url:
                    body = self.graph.post(
                        f"{self.video_base}/{page}/videos", token, {"file_url": p.media[0].url, **params}
                    )
                else:
                    body = self.graph.post(
                        f"{self.video_base}/{page}/videos", token, params, files=self._source(p.media[0])
                    )
                post_id = str(body["id"])
            else:
                body = self.graph.post(f"{self.base}/{page}/feed", token, {"message": p.text})
                post_id = str(body["id"])
        except NetworkError as e:
            return e.outcome()
        except KeyError:
            return PublishOutcome.failed(
                "retriable",
                "Facebook answered without a post id; it will be checked and retried",
                ambiguous=True,
            )
        return PublishOutcome.published(post_id, self._permalink(token, post_id))

    def check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        return PublishOutcome.published(ref, self._permalink(pub.account.access_token, ref))

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        return never_ready(PLATFORM)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        """Pages /{page}/published_posts back to the attempt's start, matching the message."""
        return find_in_listing(
            self.graph,
            f"{self.base}/{pub.account.external_account_id}/published_posts",
            pub,
            network="Facebook",
            fields="id,message,created_time,permalink_url",
            text="message",
            created="created_time",
            link="permalink_url",
        )


def make_adapter(ctx: AdapterContext) -> FacebookAdapter:
    """The registry's factory: graph-video's host for videos (the API host when none is given), both with the
    configured Graph API version (SOCIALPUB_GRAPH_API_VERSION)."""
    version = str(getattr(ctx.settings, "graph_version", None) or DEFAULT)
    return FacebookAdapter(
        ctx.client,
        versioned(ctx.host("api"), version),
        versioned(ctx.host("video"), version),
        media_loader=ctx.media_loader,
        media_by_url=ctx.media_by_url,
    )
