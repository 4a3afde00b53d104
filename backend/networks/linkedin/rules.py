"""LinkedIn: commentary <= 3000 characters as sent (escaped in LinkedIn's "little text" format); one image, one video, or 2-10 images as a PDF document (one square page
per image, built server side by backend.networks.linkedin.pdf)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.linkedin import NETWORK
from backend.networks.rules.common import (
    CAROUSEL_MAX,
    CAROUSEL_MIN,
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    NetworkRules,
    VideoLimits,
    check_videos,
    visual_media,
)
from backend.schemas.text import ESCAPED_RESERVED, has_visible_text

PLATFORM = NETWORK.name
MAX_TEXT = NETWORK.limits.max_text
DOCUMENT_TITLE_MAX = 100
# learn.microsoft.com/linkedin/marketing/community-management/shares/videos-api (docs/networks.md, "Video rules")
VIDEO = VideoLimits(min_s=3, max_s=30 * 60, max_bytes=500 * 1024 * 1024, min_aspect=1 / 2.4, max_aspect=2.4)


_LITTLE = re.compile("([" + re.escape(ESCAPED_RESERVED) + "])")  # the `escaped` text unit's characters


def escape_commentary(text: str) -> str:
    """The commentary as sent: LinkedIn's "little text" format, its reserved characters backslash-escaped."""
    return _LITTLE.sub(r"\\\1", text)


def validate(content: str, media: Sequence[MediaRef], options: None) -> list[str]:
    codes: list[str] = []
    # the limit applies to the string sent (belief, the strictest reading: docs.md's fidelity table)
    if len(escape_commentary(content)) > MAX_TEXT:
        codes.append(CONTENT_TOO_LONG)
    if not has_visible_text(content) and not media:  # whitespace or invisible characters only: no text
        codes.append(CONTENT_REQUIRED)
    kind, chosen = visual_media(media)
    return codes + (check_videos(chosen, VIDEO) if kind == "video" else [])


def document_title(content: str) -> str:
    first = next((line.strip() for line in content.splitlines() if has_visible_text(line)), "")
    return (first[:DOCUMENT_TITLE_MAX].rstrip()) or "Carousel"


def build(content: str, media: Sequence[MediaRef], options: None) -> Payload:
    kind, chosen = visual_media(media)
    opts = {"visibility": "PUBLIC"}
    if kind == "carousel":
        return Payload(PLATFORM, "document", content, document_title(content), chosen, opts)
    return Payload(PLATFORM, kind, content, None, chosen, opts)  # type: ignore[arg-type]  # kind is one of Payload's literal kinds, chosen above from the media


RULES = NetworkRules(
    PLATFORM, MAX_TEXT, 0, CAROUSEL_MAX, (CAROUSEL_MIN, CAROUSEL_MAX), validate, build, video=VIDEO
)
