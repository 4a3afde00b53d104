"""Per-network bounds of a post (spec 4.4 rules 4-7, spec 8), stated once for the backend's rules
(backend/networks/rules) and for the front end, which may import only the schemas: the compose screen counts
characters against these numbers and checks a post before sending it.

Pure data, no I/O.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from backend.schemas.posts import MAX_CONTENT

# What shows nothing: separators (Zs, Zl, Zp), controls (Cc), format characters (Cf: U+200B zero width space,
# U+200D joiner, U+2060 word joiner, U+FEFF, the bidi marks…), combining marks with nothing to combine with (Mn, Me),
# and the letters and symbols fonts draw blank (Hangul fillers, the braille blank).
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me"})
_BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def has_visible_text(text: str) -> bool:
    """Whether `text` shows anything: a text of whitespace and invisible characters only (U+200B…) is no text —
    a network would publish a post that says nothing (`content_required_for_target` where a text is needed)."""
    return any(
        not ch.isspace()
        and ch not in _BLANK_CHARACTERS
        and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES
        for ch in text
    )


@dataclass(frozen=True)
class NetworkLimits:
    """What one network accepts from a post.

    max_text: characters of the text (`utf16`: counted in UTF-16 code units, as TikTok counts them).
    media_required: refused without an image or video (`media_required_for_target`).
    video_required: refused without a video (`video_required_for_target`; images do not count).
    text_or_media: refused with neither text nor media (`content_required_for_target`).
    photo_title_max: a post without video uses the text as its title, bounded (`title_too_long_for_target`).
    title_max: the `options.<network>.title` bound (`title_too_long_for_target`).
    description_max_bytes: the whole text, UTF-8 bytes (YouTube's description; `content_too_long_for_target`).
    first_media_only: only the first media is published.
    """

    platform: str
    max_text: int
    utf16: bool = False
    media_required: bool = False
    video_required: bool = False
    text_or_media: bool = False
    photo_title_max: int | None = None
    title_max: int | None = None
    description_max_bytes: int | None = None
    first_media_only: bool = False


NETWORK_LIMITS: dict[str, NetworkLimits] = {
    "facebook": NetworkLimits("facebook", MAX_CONTENT, text_or_media=True, first_media_only=True),
    "instagram": NetworkLimits("instagram", 2200, media_required=True),
    "linkedin": NetworkLimits("linkedin", 3000, text_or_media=True),
    "tiktok": NetworkLimits("tiktok", 2200, utf16=True, media_required=True, photo_title_max=90),
    "youtube": NetworkLimits(
        "youtube", MAX_CONTENT, video_required=True, title_max=100, description_max_bytes=5000
    ),
}
