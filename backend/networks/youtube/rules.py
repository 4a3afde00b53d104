"""YouTube (Shorts): one video required. Title = first line of the text (100 characters; options.youtube.title
overrides it), description = the whole text (5000 bytes UTF-8). YouTube refuses '<' and '>' in both: they
are replaced with the look-alikes '‹' '›'. Privacy public by default; containsSyntheticMedia forced true
when the video was produced by our own generations."""

from __future__ import annotations

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.rules.common import (
    CONTENT_TOO_LONG,
    TITLE_TOO_LONG,
    VIDEO_REQUIRED,
    NetworkRules,
    VideoLimits,
    check_videos,
    videos,
)
from backend.networks.youtube import NETWORK
from backend.networks.youtube.options import YouTubeOptions
from backend.schemas.text import has_visible_text

PLATFORM = NETWORK.name
_LIMITS = NETWORK.limits
assert _LIMITS.title_max is not None and _LIMITS.description_max_bytes is not None
MAX_TEXT = _LIMITS.max_text
TITLE_MAX = _LIMITS.title_max
DESCRIPTION_MAX_BYTES = _LIMITS.description_max_bytes
DEFAULT_TITLE = "Untitled video"
# a Short: square or vertical, at most 3 minutes (support.google.com/youtube/answer/15424877; docs/networks.md)
VIDEO = VideoLimits(max_s=180, max_aspect=1.0)
CATEGORY_PEOPLE_AND_BLOGS = "22"


def _clean(text: str) -> str:
    return text.replace("<", "‹").replace(">", "›")


def first_line(content: str) -> str:
    return next((line.strip() for line in content.splitlines() if has_visible_text(line)), "")


def title_for(content: str, opts: YouTubeOptions) -> str:
    if opts.title is not None and opts.title.strip():
        return _clean(opts.title.strip())
    line = first_line(content)
    return _clean(line[:TITLE_MAX].rstrip()) or DEFAULT_TITLE


def validate(content: str, media: Sequence[MediaRef], options: YouTubeOptions | None) -> list[str]:
    codes: list[str] = []
    if len(content) > MAX_TEXT or len(_clean(content).encode("utf-8")) > DESCRIPTION_MAX_BYTES:
        codes.append(CONTENT_TOO_LONG)
    if not videos(media):
        codes.append(VIDEO_REQUIRED)
    codes += check_videos(videos(media)[:1], VIDEO)
    opts = options
    if opts is not None and opts.title is not None and len(opts.title.strip()) > TITLE_MAX:
        codes.append(TITLE_TOO_LONG)
    return codes


def build(content: str, media: Sequence[MediaRef], options: YouTubeOptions | None) -> Payload:
    opts = options or YouTubeOptions()
    chosen = tuple(videos(media)[:1])
    synthetic = bool(opts.contains_synthetic_media) or any(m.generated for m in chosen)
    o = {
        "privacy_status": opts.privacy_status,
        "made_for_kids": bool(opts.made_for_kids),
        "tags": list(opts.tags or []),
        "contains_synthetic_media": synthetic,
        "category_id": CATEGORY_PEOPLE_AND_BLOGS,
    }
    return Payload(PLATFORM, "video", _clean(content), title_for(content, opts), chosen, o)


def explain(code: str, content: str, media: Sequence[MediaRef]) -> str | None:
    if code == CONTENT_TOO_LONG and len(content) <= MAX_TEXT:
        return f"{PLATFORM} takes a description of at most 5,000 bytes (UTF-8): shorten the text"
    if code == VIDEO_REQUIRED:
        return f"{PLATFORM} publishes videos only (Shorts): put a video in mediaUrls (no text-only, no image)"
    if code == TITLE_TOO_LONG:
        return f"the {PLATFORM} title is at most {TITLE_MAX} characters"
    return None


def forced_options(media: Sequence[MediaRef]) -> dict[str, object]:
    """A video produced by our own generations declares synthetic media, whatever the post asked."""
    if any(m.generated and m.kind == "video" for m in media):
        return {"containsSyntheticMedia": True}
    return {}


RULES = NetworkRules(
    PLATFORM,
    MAX_TEXT,
    1,
    1,
    None,
    validate,
    build,
    explain=explain,
    forced_options=forced_options,
    video=VIDEO,
)
