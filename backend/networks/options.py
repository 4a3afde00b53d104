"""Per-network options of POST /v1/posts: defined with the wire format in backend.schemas.options, re-exported
here for the network rules."""

from backend.schemas.options import (
    TIKTOK_PRIVACY_LEVELS,
    YOUTUBE_TAGS_MAX,
    PostOptions,
    TikTokOptions,
    TikTokPostMode,
    TikTokPrivacyLevel,
    WireModel,
    YouTubeOptions,
    YouTubePrivacyStatus,
    youtube_tags_length,
)

__all__ = [
    "TIKTOK_PRIVACY_LEVELS",
    "YOUTUBE_TAGS_MAX",
    "PostOptions",
    "TikTokOptions",
    "TikTokPostMode",
    "TikTokPrivacyLevel",
    "WireModel",
    "YouTubeOptions",
    "YouTubePrivacyStatus",
    "youtube_tags_length",
]
