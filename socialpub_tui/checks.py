"""What a post's targets would refuse, checked before anything is sent: the compose screen shows these next to
each target while the user types. The numbers come from the wire-format schemas (`NETWORK_LIMITS`, the same
constants the backend's network rules read); the codes and the sense are those of the API's `invalid_targets`
details (spec 7), so a problem found here reads like the one the server would answer. The server checks again:
a rule not known here (a media format, a privacy level the account does not offer) comes back as a 400, shown
at the same place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from backend.schemas.common import utf16_len
from backend.schemas.limits import NETWORK_LIMITS, has_visible_text

IMAGE_SUFFIXES = (
    ".jpg",
    ".jpeg",
    ".png",
    ".webp",
    ".gif",
    ".heic",
    ".heif",
    ".avif",
    ".bmp",
    ".tif",
    ".tiff",
)
VIDEO_SUFFIXES = (".mp4", ".mov", ".m4v", ".webm")


@dataclass(frozen=True)
class Problem:
    code: str
    message: str


def media_kind(url: str) -> str | None:
    """`image` or `video` from a media URL's file name (the media host names its files by type); None if unsure."""
    path = url.split("?", 1)[0].lower()
    if path.endswith(VIDEO_SUFFIXES):
        return "video"
    if path.endswith(IMAGE_SUFFIXES):
        return "image"
    return None


def text_length(platform: str, content: str) -> int:
    """The text's length as the network counts it (TikTok: UTF-16 code units)."""
    limits = NETWORK_LIMITS.get(platform)
    return utf16_len(content) if limits is not None and limits.utf16 else len(content)


def counter(platform: str, content: str) -> tuple[int, int]:
    """(characters used, the network's bound) for the live counter."""
    return text_length(platform, content), NETWORK_LIMITS[platform].max_text


def _youtube_description_bytes(content: str) -> int:
    # YouTube refuses '<' and '>': the backend sends the look-alikes '‹' '›' (3 bytes each in UTF-8)
    return len(content.replace("<", "‹").replace(">", "›").encode("utf-8"))


def check_target(
    platform: str, content: str, media: Sequence[str | None], options: dict[str, Any] | None = None
) -> list[Problem]:
    """The problems `platform` would answer (worded to stand next to the target's name) for this text, these media (each `image`, `video` or None when
    unknown) and these options (the wire form: `{"youtube": {"title": …}}`). [] when it can receive the post."""
    limits = NETWORK_LIMITS.get(platform)
    if limits is None:
        return [Problem("invalid_target", f"{platform} is not a network socialpub publishes to")]
    problems: list[Problem] = []
    n = text_length(platform, content)
    if n > limits.max_text:
        problems.append(
            Problem(
                "content_too_long_for_target",
                f"at most {limits.max_text:,} characters here; the text has {n:,}",
            )
        )
    elif limits.description_max_bytes and _youtube_description_bytes(content) > limits.description_max_bytes:
        problems.append(
            Problem(
                "content_too_long_for_target",
                f"the description is at most {limits.description_max_bytes:,} bytes (UTF-8): "
                "shorten the text",
            )
        )
    if limits.text_or_media and not has_visible_text(content) and not media:
        problems.append(Problem("content_required_for_target", "nothing to publish: give a text or a media"))
    if limits.media_required and not media:
        problems.append(Problem("media_required_for_target", "needs an image or a video"))
        return problems
    known = all(kind is not None for kind in media)
    videos = [kind for kind in media if kind == "video"]
    if limits.video_required and known and not videos:
        problems.append(Problem("video_required_for_target", "publishes videos only (Shorts): add a video"))
    if limits.photo_title_max and media and known and not videos and n > limits.photo_title_max:
        problems.append(
            Problem(
                "title_too_long_for_target",
                f"a photo post takes the text as its title: at most "
                f"{limits.photo_title_max} characters; the text has {n}",
            )
        )
    title = ((options or {}).get(platform) or {}).get("title")
    if limits.title_max and isinstance(title, str) and len(title.strip()) > limits.title_max:
        problems.append(
            Problem(
                "title_too_long_for_target",
                f"the title is at most {limits.title_max} characters; it has {len(title.strip())}",
            )
        )
    return problems
