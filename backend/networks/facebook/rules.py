"""Facebook Page: text; text + one photo or video; or text + 2 to 10 photos in one post (issue 29: unpublished photos
attached to a /feed post, Graph's photo-uploads guide). A video among several media: the first media only (Graph
documents attached_media for photos only)."""

from __future__ import annotations

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.facebook import NETWORK
from backend.networks.rules.common import (
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    NetworkRules,
    VideoLimits,
    check_videos,
    pulls_when_configured,
)
from backend.schemas.text import has_visible_text

PLATFORM = NETWORK.name
MAX_TEXT = NETWORK.limits.max_text
# developers.facebook.com/docs/video-api/guides/publishing: up to 4 hours (docs/networks.md, "Video rules")
VIDEO = VideoLimits(max_s=4 * 3600)
# photos of one multi-photo post: belief (no official number; public clients and the posts API's own cap: 10)
MAX_PHOTOS = 10


def validate(content: str, media: Sequence[MediaRef], options: None) -> list[str]:
    codes: list[str] = []
    if len(content) > MAX_TEXT:
        codes.append(CONTENT_TOO_LONG)
    if not has_visible_text(content) and not media:  # whitespace or invisible characters only: no text
        codes.append(CONTENT_REQUIRED)
    return codes + check_videos(media[:1], VIDEO)


def build(content: str, media: Sequence[MediaRef], options: None) -> Payload:
    if not media:
        return Payload(PLATFORM, "text", content, None, ())
    if len(media) >= 2 and all(m.kind == "image" for m in media):
        return Payload(PLATFORM, "carousel", content, None, tuple(media[:MAX_PHOTOS]))
    first = media[0]
    return Payload(PLATFORM, first.kind, content, None, (first,))


RULES = NetworkRules(
    PLATFORM, MAX_TEXT, 0, 10, None, validate, build, pulls_media=pulls_when_configured, video=VIDEO
)
