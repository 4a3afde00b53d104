"""Instagram (professional account): one image, one reel, or a carousel of 2-10 items; media required."""

from __future__ import annotations

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.instagram import NETWORK
from backend.networks.rules.common import (
    CAROUSEL_MAX,
    CAROUSEL_MIN,
    CONTENT_TOO_LONG,
    MAX_CONTENT,
    MEDIA_REQUIRED,
    MEDIA_UNSUPPORTED,
    NetworkRules,
    VideoLimits,
    check_videos,
)

PLATFORM = NETWORK.name
MAX_TEXT = NETWORK.limits.max_text
IMAGE_MIMES = frozenset({"image/jpeg"})  # Instagram takes JPEG only; our media host converts to JPEG
VIDEO_MIMES = frozenset({"video/mp4", "video/quicktime"})
# reels (and a carousel's videos): developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/
# ig-user/media, "Reel specifications" (docs/networks.md, "Video rules")
VIDEO = VideoLimits(
    min_s=3,
    max_s=15 * 60,
    max_bytes=300 * 1000 * 1000,
    max_width=1920,
    min_aspect=0.01,
    max_aspect=10.0,
    min_fps=23,
    max_fps=60,
    codecs=frozenset({"h264", "hevc"}),
)


def validate(content: str, media: Sequence[MediaRef], options: None) -> list[str]:
    codes: list[str] = []
    if len(content) > min(MAX_TEXT, MAX_CONTENT):
        codes.append(CONTENT_TOO_LONG)
    if not media:
        codes.append(MEDIA_REQUIRED)
    for m in media[:CAROUSEL_MAX]:
        allowed = IMAGE_MIMES if m.kind == "image" else VIDEO_MIMES
        if m.mime and m.mime.split(";")[0].strip().lower() not in allowed:
            codes.append(MEDIA_UNSUPPORTED)
            break
    return codes + check_videos(media[:CAROUSEL_MAX], VIDEO)


def pulls_media(media: Sequence[MediaRef], by_url: bool) -> bool:
    """Images only by URL (`image_url`: Meta fetches them); videos by bytes (resumable upload to rupload), or by
    `video_url` when SOCIALPUB_MEDIA_BY_URL names instagram."""
    return any(m.kind == "image" or by_url for m in media)


def build(content: str, media: Sequence[MediaRef], options: None) -> Payload:
    items = tuple(media[:CAROUSEL_MAX])
    if len(items) >= CAROUSEL_MIN:
        return Payload(PLATFORM, "carousel", content, None, items)
    if not items:  # refused by validate; built for completeness
        return Payload(PLATFORM, "text", content, None, ())
    only = items[0]
    opts = {"share_to_feed": True} if only.kind == "video" else {}
    return Payload(PLATFORM, only.kind, content, None, items, opts)


RULES = NetworkRules(
    PLATFORM,
    MAX_TEXT,
    1,
    CAROUSEL_MAX,
    (CAROUSEL_MIN, CAROUSEL_MAX),
    validate,
    build,
    pulls_media=pulls_media,
    pull_reason="Instagram fetches images from their URL (only videos can be sent as bytes)",
    video=VIDEO,
)
