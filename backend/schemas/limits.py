"""Per-network bounds of a post (spec 4.4 rules 4-7, spec 8), stated once for the backend's rules
(backend/networks/rules) and for the front end, which may import only the schemas: the compose screen counts
characters against these numbers and checks a post before sending it.

Pure data, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.schemas.posts import MAX_CONTENT


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
