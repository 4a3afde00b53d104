"""Shared pieces of the per-network rules: the NetworkRules record and small pure helpers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from backend.networks.base import MediaRef, Payload
from backend.networks.options import PostOptions

MAX_CONTENT = 63_206  # every target (spec 8)
CAROUSEL_MIN = 2
CAROUSEL_MAX = 10

# per-target codes of spec 7 produced by the rules (channel/duplicate/invalid_target/scheduled/
# media_unreadable are the posts service's business)
CONTENT_TOO_LONG = "content_too_long_for_target"
MEDIA_REQUIRED = "media_required_for_target"
VIDEO_REQUIRED = "video_required_for_target"
TITLE_TOO_LONG = "title_too_long_for_target"
# extensions (spec 7 says the complete list is not shown): refused at the network for sure
CONTENT_REQUIRED = "content_required_for_target"  # neither text nor media: nothing to post
MEDIA_UNSUPPORTED = "media_unsupported_for_target"  # a format the network refuses (e.g. PNG on TikTok)

Validate = Callable[[str, Sequence[MediaRef], PostOptions], list[str]]
Build = Callable[[str, Sequence[MediaRef], PostOptions], Payload]
# (the post's media, whether the network is configured to take media by URL: SOCIALPUB_MEDIA_BY_URL) -> whether the
# live network fetches the media from its URL instead of receiving the bytes
PullsMedia = Callable[[Sequence[MediaRef], bool], bool]


def never_pulls(media: Sequence[MediaRef], by_url: bool) -> bool:
    """The bytes are uploaded (LinkedIn upload URLs, YouTube resumable upload)."""
    return False


def always_pulls(media: Sequence[MediaRef], by_url: bool) -> bool:
    """The network only takes URLs (Instagram's containers)."""
    return bool(media)


def pulls_when_configured(media: Sequence[MediaRef], by_url: bool) -> bool:
    """Bytes by default, the URL when configured (Facebook: multipart source, or url / file_url)."""
    return bool(media) and by_url


@dataclass(frozen=True)
class NetworkRules:
    platform: str
    max_text: int  # characters (TikTok: UTF-16 units)
    min_media: int
    max_media: int
    carousel: tuple[int, int] | None  # images per carousel, None when the network takes one media
    validate: Validate
    build: Build
    # whether the live network fetches the post's media from its URL (Instagram containers, TikTok photos, and
    # Facebook / TikTok videos when configured) instead of receiving the bytes: then the URL must be reachable
    # from the internet. A pure function: the caller says whether the network is configured to take URLs.
    pulls_media: PullsMedia = never_pulls

    def check(self, content: str, media: Sequence[MediaRef], options: PostOptions | None = None) -> list[str]:
        return self.validate(content, media, options or PostOptions())

    def payload(self, content: str, media: Sequence[MediaRef], options: PostOptions | None = None) -> Payload:
        return self.build(content, media, options or PostOptions())


def images(media: Sequence[MediaRef]) -> list[MediaRef]:
    return [m for m in media if m.kind == "image"]


def videos(media: Sequence[MediaRef]) -> list[MediaRef]:
    return [m for m in media if m.kind == "video"]


def dedupe(codes: list[str]) -> list[str]:
    seen: list[str] = []
    for c in codes:
        if c not in seen:
            seen.append(c)
    return seen


def visual_media(media: Sequence[MediaRef]) -> tuple[str, tuple[MediaRef, ...]]:
    """The common choice for tiktok and linkedin: a video wins (the first one, alone: videos cannot be
    mixed into a carousel there); otherwise 1 image, or 2-10 images as a carousel."""
    vids = videos(media)
    if vids:
        return "video", (vids[0],)
    imgs = images(media)[:CAROUSEL_MAX]
    if not imgs:
        return "text", ()
    if len(imgs) == 1:
        return "image", (imgs[0],)
    return "carousel", tuple(imgs)
