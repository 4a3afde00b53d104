"""Instagram Graph API content publishing adapter (NETWORKS.md section 2; fidelity table: docs.md).

image: container {image_url, caption} (Meta fetches images: they need a public URL); video: {media_type REELS,
upload_type resumable, caption, share_to_feed}, then the file POSTed to rupload (`Authorization: OAuth`, `offset`,
`file_size`) — no public URL needed — or {video_url} when SOCIALPUB_MEDIA_BY_URL names instagram; a container is
saved as the attempt's progress once its bytes are sent;
carousel: one container per item (is_carousel_item), every child polled FINISHED, then the parent
{media_type CAROUSEL, children, caption}. Then: poll status_code until FINISHED -> check
content_publishing_limit -> media_publish {creation_id} -> GET permalink. Whatever is not ready yet comes
back as pending with a tracking ref; check_status resumes the same state machine up to FINISHED (`ready`)
and complete() makes the media_publish call (an attempt of its own). A container already PUBLISHED is looked
up, never published again. find_existing pages /{ig-user}/media, which lists a media as soon as
media_publish answered: absence is conclusive at once (LISTING_DELAY_S 0).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from backend.networks.base import (
    NetworkError,
    Publication,
    PublishOutcome,
    encode_ref,
)
from backend.networks.facebook.containers import ContainerFlow
from backend.networks.facebook.graph import IG_SUBCODES, GraphClient, find_in_listing, versioned
from backend.networks.facebook.lifecycle import DEFAULT
from backend.networks.factory import AdapterContext
from backend.networks.instagram import NETWORK
from backend.networks.media_loader import MediaLoader

PLATFORM = NETWORK.name
LISTING_DELAY_S = NETWORK.listing_delay_s  # /{ig-user}/media lists a media once media_publish answered


class InstagramAdapter(ContainerFlow):
    platform = PLATFORM
    LABEL = "Instagram"
    CAPTION = "caption"
    LIMIT_CODE = "content_publishing_limit"

    def __init__(
        self,
        client: httpx.Client,
        base_url: str = f"https://graph.facebook.com/{DEFAULT}",
        *,
        upload_base: str = "https://rupload.facebook.com",
        version: str = DEFAULT,
        media_loader: MediaLoader | None = None,
        media_by_url: bool = False,
    ) -> None:
        self.graph = GraphClient(client, "Instagram")
        self.base = base_url.rstrip("/")
        self.upload_base = upload_base.rstrip("/")
        self.version = version
        self.media_loader = media_loader
        self.media_by_url = (
            media_by_url  # videos by video_url (SOCIALPUB_MEDIA_BY_URL) instead of their bytes
        )

    # --- API calls -----------------------------------------------------------------------------------
    def create_container(self, pub: Publication, params: dict[str, Any], media: Any = None) -> str:
        """A container; a video's (upload_type resumable) gets its file POSTed to rupload before this returns."""
        body = self.graph.post(
            f"{self.base}/{pub.account.external_account_id}/media", pub.account.access_token, params
        )
        container = str(body["id"])
        if params.get("upload_type") == "resumable":
            self.upload(pub, container, media)
        return container

    def upload(self, pub: Publication, container: str, media: Any) -> None:
        """The video's bytes to rupload's ig-api-upload/<version>/<container>, in one POST from offset 0 (resuming
        a cut upload at an offset is not documented: a failed upload starts over with a new container)."""
        if self.media_loader is None:
            raise NetworkError(
                "permanent", "no media loader configured for Instagram uploads", code="no_loader"
            )
        data = self.media_loader(media)
        if not data:
            raise NetworkError("permanent", f"the media {media.url} is empty", code="media_empty")
        url = f"{self.upload_base}/ig-api-upload/{self.version}/{container}"
        body = self.graph.upload(url, pub.account.access_token, data)
        if body.get("success") is not True:
            raise NetworkError(
                "retriable",
                f"Instagram did not confirm the video upload ({body.get('message') or body}); "
                "it will be retried with a new container",
                code="upload_unconfirmed",
            )

    def container_status(self, pub: Publication, container: str) -> tuple[str, str]:
        body = self.graph.get(
            f"{self.base}/{container}", pub.account.access_token, {"fields": "status_code,status"}
        )
        return str(body.get("status_code") or ""), str(body.get("status") or "")

    def publishing_limit(self, pub: Publication) -> tuple[int, int]:
        body = self.graph.get(
            f"{self.base}/{pub.account.external_account_id}/content_publishing_limit",
            pub.account.access_token,
            {"fields": "config,quota_usage"},
        )
        row = (body.get("data") or [{}])[0]
        return int(row.get("quota_usage") or 0), int((row.get("config") or {}).get("quota_total") or 50)

    def publish_call(self, pub: Publication, container: str) -> str:
        """media_publish {creation_id}."""
        body = self.graph.post(
            f"{self.base}/{pub.account.external_account_id}/media_publish",
            pub.account.access_token,
            {"creation_id": container},
        )
        return str(body["id"])

    def permalink(self, pub: Publication, media_id: str) -> str | None:
        try:
            body = self.graph.get(
                f"{self.base}/{media_id}",
                pub.account.access_token,
                {"fields": "permalink,media_product_type"},
            )
        except NetworkError:
            return None
        link = body.get("permalink")
        return link if isinstance(link, str) else None

    # --- state machine -------------------------------------------------------------------------------
    def _item_params(self, m: Any, *, carousel_item: bool) -> dict[str, Any]:
        if m.kind == "video":
            source = {"video_url": m.url} if self.media_by_url else {"upload_type": "resumable"}
            return {
                "media_type": "VIDEO" if carousel_item else "REELS",
                **source,
                **({"is_carousel_item": True} if carousel_item else {}),
            }
        return {"image_url": m.url, **({"is_carousel_item": True} if carousel_item else {})}

    def failed_container(self, detail: str, ref: str) -> PublishOutcome:
        m = re.search(r"\b(2207\d{3})\b", detail)
        sub = int(m.group(1)) if m else None
        ftype, words = IG_SUBCODES.get(sub or 0, ("permanent", "Instagram could not process the media"))
        return PublishOutcome.failed(
            ftype,
            f"{words} ({detail})" if detail else words,
            network_code=f"ERROR/{sub}" if sub else "ERROR",
            network_status="ERROR",
            tracking_ref=ref,
        )

    def publish(self, pub: Publication) -> PublishOutcome:
        """Containers created (each saved as the attempt's progress at once: an interrupted attempt's successor
        continues from them, `pub.resume`, while Instagram still has them — they expire after 24 h), then
        _advance: their states, and media_publish once FINISHED."""
        p = pub.payload
        try:
            resumed = self.resumable(pub)
            if resumed is not None:
                return self.advance(pub, resumed, publish=True)
            if p.kind == "carousel":
                children = [
                    self.create_container(pub, self._item_params(m, carousel_item=True), m) for m in p.media
                ]
                pub.saved(encode_ref(children=children))
                return self.advance(pub, {"children": children}, publish=True)
            if not p.media:
                return PublishOutcome.failed("permanent", "Instagram needs at least one image or video")
            params = self._item_params(p.media[0], carousel_item=False)
            params["caption"] = p.text or None
            if p.kind == "video":
                params["share_to_feed"] = bool(p.options.get("share_to_feed", True))
            container = self.create_container(pub, params, p.media[0])
            pub.saved(encode_ref(container=container))
            return self.advance(pub, {"container": container}, publish=True)
        except NetworkError as e:
            return e.outcome()

    def listed(self, pub: Publication) -> PublishOutcome | None:
        """Pages /{ig-user}/media back to the attempt's start, matching the caption."""
        return find_in_listing(
            self.graph,
            f"{self.base}/{pub.account.external_account_id}/media",
            pub,
            network="Instagram",
            fields="id,caption,timestamp,permalink",
            text="caption",
            created="timestamp",
            link="permalink",
        )


def make_adapter(ctx: AdapterContext) -> InstagramAdapter:
    """The registry's factory: the API host with the configured Graph API version (SOCIALPUB_GRAPH_API_VERSION), the
    rupload host for videos' bytes (the API host when none is given)."""
    version = str(getattr(ctx.settings, "graph_version", None) or DEFAULT)
    return InstagramAdapter(
        ctx.client,
        versioned(ctx.host("api"), version),
        upload_base=ctx.host("upload"),
        version=version,
        media_loader=ctx.media_loader,
        media_by_url=ctx.media_by_url,
    )
