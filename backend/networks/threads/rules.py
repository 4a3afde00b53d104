"""Threads: a text post (TEXT), one image (IMAGE) or video (VIDEO), or a carousel (CAROUSEL) of 2-20 images and
videos mixed; text at most 500 characters, an emoji counted as its UTF-8 bytes; every media downloaded by Threads
from its URL (a public server). Sources: the fidelity table (docs.md)."""

from __future__ import annotations

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.rules.common import (
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    MEDIA_UNSUPPORTED,
    NetworkRules,
    VideoLimits,
    check_videos,
)
from backend.networks.threads import NETWORK
from backend.networks.threads.text import CAROUSEL, MAX_TEXT, text_length
from backend.schemas.text import has_visible_text

PLATFORM = NETWORK.name
MAX_MEDIA = CAROUSEL[1]
IMAGE_MIMES = frozenset({"image/jpeg", "image/png"})  # TH-R13
VIDEO_MIMES = frozenset({"video/mp4", "video/quicktime"})
# TH-R13 (developers.facebook.com/documentation/threads/overview, media specifications)
VIDEO = VideoLimits(
    max_s=5 * 60,
    max_bytes=1024 * 1024 * 1024,
    max_width=1920,
    min_fps=23,
    max_fps=60,
    codecs=frozenset({"h264", "hevc"}),
)


def _mime(m: MediaRef) -> str:
    return (m.mime or "").split(";")[0].strip().lower()


def validate(content: str, media: Sequence[MediaRef], options: None) -> list[str]:
    codes: list[str] = []
    if text_length(content) > MAX_TEXT:
        codes.append(CONTENT_TOO_LONG)
    if not has_visible_text(content) and not media:  # whitespace or invisible characters only: no text
        codes.append(CONTENT_REQUIRED)
    for m in media[:MAX_MEDIA]:
        allowed = IMAGE_MIMES if m.kind == "image" else VIDEO_MIMES
        if _mime(m) and _mime(m) not in allowed:
            codes.append(MEDIA_UNSUPPORTED)
            break
    return codes + check_videos(media[:MAX_MEDIA], VIDEO)


def pulls_media(media: Sequence[MediaRef], by_url: bool) -> bool:
    """Always: Threads downloads images and videos from their URL (TH-R13: no byte upload is documented)."""
    return bool(media)


def build(content: str, media: Sequence[MediaRef], options: None) -> Payload:
    items = tuple(media[:MAX_MEDIA])
    if len(items) >= CAROUSEL[0]:
        return Payload(PLATFORM, "carousel", content, None, items)
    if not items:
        return Payload(PLATFORM, "text", content, None, ())
    return Payload(PLATFORM, items[0].kind, content, None, items)


def explain(code: str, content: str, media: Sequence[MediaRef]) -> str | None:
    if code == CONTENT_TOO_LONG:
        return (
            f"Threads accepts at most {MAX_TEXT} characters, an emoji counting as its UTF-8 bytes (up to 4); "
            f"the text counts {text_length(content)}"
        )
    if code == MEDIA_UNSUPPORTED:
        return "Threads takes JPEG or PNG images and MP4 or MOV videos"
    return None


RULES = NetworkRules(
    PLATFORM,
    MAX_TEXT,
    0,
    MAX_MEDIA,
    CAROUSEL,
    validate,
    build,
    pulls_media=pulls_media,
    pull_reason="Threads downloads every image and video from its URL (it takes no uploaded bytes)",
    text_length=text_length,
    explain=explain,
    video=VIDEO,
)
