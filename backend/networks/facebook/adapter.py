"""Facebook Pages adapter (NETWORKS.md section 3; fidelity table: docs.md): /{page}/feed for text,
/{page}/photos for an image, graph-video /{page}/videos for a video, the file sent as multipart `source` (issue 17
item 4: no public media URL needed; the whole file in memory, media are at most 128 MB) — or, when the adapter is
built with media_by_url (SOCIALPUB_MEDIA_BY_URL), its URL as `url` / `file_url` for Facebook to fetch; the
permalink read back from the object.

Text and photos are published at once; find_existing reads /{page}/published_posts, which lists a post as soon as
the call answered (LISTING_DELAY_S 0). A video is known by its VIDEO id (what /videos answers, what the target
stores and what reconciliation compares): it is pending while Facebook processes it, followed by
GET /{video}?fields=status (`status.video_status` ready / error) to succeeded or failed; find_existing reads the
Page's videos (/{page}/videos, matching the description), and a video not listed there within
VIDEO_LISTING_WINDOW_S of the attempt is "not yet conclusive", never absent."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx

from backend import clock
from backend.networks.base import (
    MediaRef,
    NetworkError,
    Publication,
    PublishOutcome,
    TargetWarning,
    decode_ref,
    encode_ref,
    never_ready,
)
from backend.networks.facebook import NETWORK
from backend.networks.facebook.graph import GraphClient, find_in_listing, versioned
from backend.networks.facebook.lifecycle import DEFAULT
from backend.networks.factory import AdapterContext
from backend.networks.media_loader import MediaLoader

PLATFORM = NETWORK.name
LISTING_DELAY_S = NETWORK.listing_delay_s
# how long after an upload the Page's videos may still miss it (its upload or processing not over): belief — no
# page says when a video appears in /{page}/videos; the tracking deadline bounds a video's processing here
VIDEO_LISTING_WINDOW_S = NETWORK.track_deadline_s
VIDEO_FIELDS = "id,description,created_time,permalink_url,status"
DEVELOPMENT_MODE = "facebook_development_mode"
DEVELOPMENT_MODE_MESSAGE = (
    "posted, but the Meta app is in development mode: only the people with a role on the app see this post. "
    "Switch the app to Live in the App Dashboard (a privacy-policy URL is required), then set "
    "SOCIALPUB_FACEBOOK_APP_MODE=live"
)


def with_app_mode(outcome: PublishOutcome, app_mode: str) -> PublishOutcome:
    """A post that went through on a development-mode app (SOCIALPUB_FACEBOOK_APP_MODE, default development: every
    new Meta app) carries the warning that the public does not see it (FB-R18)."""
    if (
        app_mode == "live"
        or not outcome.succeeded
        or any(w.code == DEVELOPMENT_MODE for w in outcome.warnings)
    ):
        return outcome
    return replace(
        outcome, warnings=(*outcome.warnings, TargetWarning(DEVELOPMENT_MODE, DEVELOPMENT_MODE_MESSAGE))
    )


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
        app_mode: str = "development",
    ) -> None:
        self.graph = GraphClient(client, "Facebook")
        self.app_mode = app_mode  # SOCIALPUB_FACEBOOK_APP_MODE: development (a new app) or live
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

    def _photo(self, page: str, token: str, media: MediaRef, params: dict[str, Any]) -> dict[str, Any]:
        """POST /{page}/photos: the file as multipart `source`, or its `url` (media_by_url)."""
        if self.media_by_url:
            return self.graph.post(f"{self.base}/{page}/photos", token, {"url": media.url, **params})
        return self.graph.post(f"{self.base}/{page}/photos", token, params, files=self._source(media))

    def _multi_photo(self, pub: Publication) -> str:
        """Every photo uploaded unpublished (published=false: not a post, never shown), each id saved as the
        attempt's progress at once; then the one publication, /feed with attached_media. An interrupted attempt's
        photos (pub.resume) are attached, not uploaded again."""
        p, page, token = pub.payload, pub.account.external_account_id, pub.account.access_token
        photos: list[str] = list(decode_ref(pub.resume).get("photos") or []) if pub.resume else []
        for media in p.media[len(photos) :]:
            body = self._photo(page, token, media, {"published": False})
            photos.append(str(body["id"]))
            pub.saved(encode_ref(photos=photos))
        attached = [{"media_fbid": photo} for photo in photos]
        body = self.graph.post(
            f"{self.base}/{page}/feed", token, {"message": p.text or None, "attached_media": attached}
        )
        return str(body["id"])

    def publish(self, pub: Publication) -> PublishOutcome:
        return with_app_mode(self._publish(pub), self.app_mode)

    def _publish(self, pub: Publication) -> PublishOutcome:
        p, page, token = pub.payload, pub.account.external_account_id, pub.account.access_token
        try:
            if p.kind == "carousel":
                post_id = self._multi_photo(pub)
            elif p.kind == "image":
                body = self._photo(page, token, p.media[0], {"caption": p.text or None})
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
                return self.check_status(pub, str(body["id"]))  # the video id: followed until processed
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
        return with_app_mode(self._check_status(pub, ref), self.app_mode)

    def _check_status(self, pub: Publication, ref: str) -> PublishOutcome:
        """A video (ref: its id) as Facebook's processing stands: GET /{video}?fields=status,permalink_url."""
        try:
            body = self.graph.get(
                f"{self.base}/{ref}", pub.account.access_token, {"fields": "status,permalink_url"}
            )
        except NetworkError as e:
            return e.outcome(tracking_ref=ref)
        return self._video_outcome({**body, "id": ref})

    @staticmethod
    def _video_outcome(video: dict[str, Any]) -> PublishOutcome:
        """A video's outcome from its `status` (VideoStatus): `video_status` ready (or the publishing phase
        complete) -> published; error (or a phase in error) -> failed permanent with Facebook's words; else pending."""
        ref = str(video["id"])
        status = _object(video.get("status"))
        word = str(status.get("video_status") or "")
        phases = {
            name: _object(status.get(name))
            for name in ("uploading_phase", "processing_phase", "publishing_phase")
        }
        failed = [p for p in phases.values() if p.get("status") == "error"]
        if word == "error" or failed:
            errors = [e for p in failed for e in (p.get("errors") or []) if isinstance(e, dict)]
            words = "; ".join(str(e.get("message")) for e in errors if e.get("message"))
            return PublishOutcome.failed(
                "permanent",
                "Facebook could not process the video"
                + (f": {words}" if words else "")
                + ": check the file (MP4/MOV, H.264) and post it again",
                network_status="error",
                tracking_ref=ref,
            )
        if word == "ready" or phases["publishing_phase"].get("status") == "complete":
            link = video.get("permalink_url")
            if isinstance(link, str) and link.startswith("/"):
                link = "https://www.facebook.com" + link
            return PublishOutcome.published(
                ref, link if isinstance(link, str) else None, network_status="ready"
            )
        return PublishOutcome.pending(ref, network_status=word or "processing")

    def complete(self, pub: Publication, ref: str) -> PublishOutcome:
        return never_ready(PLATFORM)

    def find_existing(self, pub: Publication) -> PublishOutcome | None:
        found = self._find_existing(pub)
        return with_app_mode(found, self.app_mode) if found is not None else None

    def _find_existing(self, pub: Publication) -> PublishOutcome | None:
        """Pages /{page}/published_posts back to the attempt's start, matching the message; a video, the Page's
        videos (/{page}/videos), matching the description."""
        if pub.payload.kind == "video":
            return self._find_video(pub)
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

    def _find_video(self, pub: Publication) -> PublishOutcome | None:
        found = find_in_listing(
            self.graph,
            f"{self.base}/{pub.account.external_account_id}/videos",
            pub,
            network="Facebook",
            fields=VIDEO_FIELDS,
            text="description",
            created="created_time",
            link="permalink_url",
            found=self._video_outcome,
        )
        if found is not None or pub.attempted_at is None:
            return found
        age = (clock.now() - pub.attempted_at).total_seconds()
        if age < VIDEO_LISTING_WINDOW_S:  # an upload still under way may not be listed yet
            return PublishOutcome.failed(
                "retriable",
                "the video of an earlier attempt is not among the Page's videos yet; Facebook may still be "
                "receiving or processing it: it will be checked again before any new upload",
                retry_after_s=60.0,
                ambiguous=True,
            )
        return None


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
        app_mode=str(getattr(ctx.settings, "app_mode", None) or "development"),
    )


def _object(value: object) -> dict[str, Any]:
    """A JSON object of Facebook's answer, or {} where the field is absent or not an object."""
    return value if isinstance(value, dict) else {}
