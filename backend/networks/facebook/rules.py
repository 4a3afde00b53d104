"""Facebook Page: text, or text + the FIRST media only (spec 4.4 rule 4)."""

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
    first = media[0]
    return Payload(PLATFORM, first.kind, content, None, (first,))


RULES = NetworkRules(
    PLATFORM, MAX_TEXT, 0, 10, None, validate, build, pulls_media=pulls_when_configured, video=VIDEO
)
