"""Threads API publishing adapter (fidelity table: docs.md). Built on Facebook's package: the Graph calling
convention (access_token parameter), the error envelope and its classification, the listing walk.

text: container {media_type TEXT, text}; image: {media_type IMAGE, image_url, text}; video: {media_type VIDEO,
video_url, text} (Threads downloads every media from its URL: TH-R13); carousel: one container per item
(is_carousel_item), each followed to FINISHED, then the parent {media_type CAROUSEL, children, text}. Each container
is saved as the attempt's progress at once. Then: status (`GET /{container}?fields=id,status,error_message`) until
FINISHED -> `threads_publishing_limit` (at its quota: a wait, not a failure) -> `threads_publish {creation_id}` ->
the permalink. What is not ready yet comes back pending with a tracking ref; check_status follows it to `ready` and
complete() publishes (an attempt of its own). A container PUBLISHED is looked up in the user's threads, never
published again; an early publish answered `24/4279009` is pending, not failed (TH-R9). find_existing pages
`GET /{user}/threads`, which lists a thread once threads_publish answered.
"""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.base import NetworkError, Publication, PublishOutcome, encode_ref
from backend.networks.facebook.containers import ContainerFlow
from backend.networks.facebook.graph import GraphClient, find_in_listing, versioned
from backend.networks.factory import AdapterContext
from backend.networks.threads import NETWORK
from backend.networks.threads.lifecycle import DEFAULT

PLATFORM = NETWORK.name
LABEL = NETWORK.label
DEFAULT_QUOTA = 250  # TH-R12, when the answer does not say
NOT_READY = "24/4279009"  # threads_publish before the container is FINISHED (TH-R9)
# TH-R10's error_message values, in words a user can act on
CONTAINER_ERRORS: dict[str, str] = {
    "FAILED_DOWNLOADING_VIDEO": "Threads could not download the video from its URL: check that it is public",
    "FAILED_PROCESSING_AUDIO": "Threads could not process the video's audio",
    "FAILED_PROCESSING_VIDEO": "Threads could not process the video",
    "INVALID_ASPEC_RATIO": "Threads refused the media's aspect ratio",
    "INVALID_BIT_RATE": "Threads refused the video's bit rate",
    "INVALID_DURATION": "Threads refused the video's duration (at most 5 minutes)",
    "INVALID_FRAME_RATE": "Threads refused the video's frame rate (23 to 60 fps)",
    "INVALID_AUDIO_CHANNELS": "Threads refused the video's audio channels",
    "INVALID_AUDIO_CHANNEL_LAYOUT": "Threads refused the video's audio channel layout",
}


class ThreadsAdapter(ContainerFlow):
    platform = PLATFORM
    LABEL = NETWORK.label
    CAPTION = "text"
    LIMIT_CODE = "threads_publishing_limit"
    NOT_READY = NOT_READY

    def __init__(self, client: httpx.Client, base_url: str = f"https://graph.threads.net/{DEFAULT}") -> None:
        self.graph = GraphClient(client, LABEL)
        self.base = base_url.rstrip("/")

    # --- API calls -----------------------------------------------------------------------------------
    def create_container(self, pub: Publication, params: dict[str, Any], media: Any = None) -> str:
        body = self.graph.post(
            f"{self.base}/{pub.account.external_account_id}/threads", pub.account.access_token, params
        )
        return str(body["id"])

    def container_status(self, pub: Publication, container: str) -> tuple[str, str]:
        body = self.graph.get(
            f"{self.base}/{container}", pub.account.access_token, {"fields": "id,status,error_message"}
        )
        return str(body.get("status") or ""), str(body.get("error_message") or "")

    def publishing_limit(self, pub: Publication) -> tuple[int, int]:
        body = self.graph.get(
            f"{self.base}/{pub.account.external_account_id}/threads_publishing_limit",
            pub.account.access_token,
            {"fields": "quota_usage,config"},
        )
        row = (body.get("data") or [{}])[0]
        total = (row.get("config") or {}).get("quota_total")
        return int(row.get("quota_usage") or 0), int(total or DEFAULT_QUOTA)

    def publish_call(self, pub: Publication, container: str) -> str:
        """threads_publish {creation_id}."""
        body = self.graph.post(
            f"{self.base}/{pub.account.external_account_id}/threads_publish",
            pub.account.access_token,
            {"creation_id": container},
        )
        return str(body["id"])

    def permalink(self, pub: Publication, thread_id: str) -> str | None:
        try:
            body = self.graph.get(
                f"{self.base}/{thread_id}", pub.account.access_token, {"fields": "permalink"}
            )
        except NetworkError:
            return None
        link = body.get("permalink")
        return link if isinstance(link, str) else None

    # --- state machine -------------------------------------------------------------------------------
    @staticmethod
    def _item_params(m: Any, *, carousel_item: bool) -> dict[str, Any]:
        params: dict[str, Any] = (
            {"media_type": "VIDEO", "video_url": m.url}
            if m.kind == "video"
            else {"media_type": "IMAGE", "image_url": m.url}
        )
        if carousel_item:
            params["is_carousel_item"] = True
        return params

    def failed_container(self, detail: str, ref: str) -> PublishOutcome:
        words = CONTAINER_ERRORS.get(detail, "Threads could not process the post's media")
        return PublishOutcome.failed(
            "permanent",
            f"{words} ({detail})" if detail else words,
            network_code=f"ERROR/{detail}" if detail else "ERROR",
            network_status="ERROR",
            tracking_ref=ref,
        )

    def publish(self, pub: Publication) -> PublishOutcome:
        """Containers created (each saved as the attempt's progress at once: an interrupted attempt's successor
        continues from them, `pub.resume`, while Threads still has them — 24 h), then _advance."""
        p = pub.payload
        try:
            resumed = self.resumable(pub)
            if resumed is not None:
                return self.advance(pub, resumed, publish=True)
            if p.kind == "carousel":
                children = [
                    self.create_container(pub, self._item_params(m, carousel_item=True)) for m in p.media
                ]
                pub.saved(encode_ref(children=children))
                return self.advance(pub, {"children": children}, publish=True)
            if p.media:
                params = self._item_params(p.media[0], carousel_item=False)
            else:
                params = {"media_type": "TEXT"}
            params["text"] = p.text or None
            container = self.create_container(pub, params)
            pub.saved(encode_ref(container=container))
            return self.advance(pub, {"container": container}, publish=True)
        except NetworkError as e:
            if e.code == NOT_READY:  # a container Threads has not made available yet: try again shortly
                return PublishOutcome.failed(
                    "retriable",
                    "Threads has not made the post's container available yet; it will be retried",
                    retry_after_s=30.0,
                    network_code=NOT_READY,
                )
            return e.outcome()

    def listed(self, pub: Publication) -> PublishOutcome | None:
        """Pages the user's threads (`GET /{user}/threads`, newest first) back to the attempt's start, matching the
        text (TH-R14)."""
        return find_in_listing(
            self.graph,
            f"{self.base}/{pub.account.external_account_id}/threads",
            pub,
            network=LABEL,
            fields="id,text,timestamp,permalink",
            text="text",
            created="timestamp",
            link="permalink",
        )


def make_adapter(ctx: AdapterContext) -> ThreadsAdapter:
    """The registry's factory: the API host with the configured version (SOCIALPUB_THREADS_VERSION)."""
    version = str(getattr(ctx.settings, "version", None) or DEFAULT)
    return ThreadsAdapter(ctx.client, versioned(ctx.host("api"), version))
