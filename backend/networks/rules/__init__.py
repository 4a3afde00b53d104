"""Per-network rules: limits, validation (spec 7 per-target codes) and what each network receives
(spec 4.4 rules 4-7). Pure code, no I/O.

    from backend.networks.rules import RULES, validate_target
    codes = RULES["tiktok"].validate(content, media, options)     # [] when the target can receive it
    payload = RULES["tiktok"].build(content, media, options)      # exactly what the network gets
"""

from __future__ import annotations

from collections.abc import Sequence

from backend.networks.base import MediaRef, Payload
from backend.networks.options import PostOptions
from backend.networks.rules import facebook, instagram, linkedin, tiktok, youtube
from backend.networks.rules.common import (
    CONTENT_REQUIRED,
    CONTENT_TOO_LONG,
    MAX_CONTENT,
    MEDIA_REQUIRED,
    MEDIA_UNSUPPORTED,
    TITLE_TOO_LONG,
    VIDEO_OUT_OF_RANGE,
    VIDEO_REQUIRED,
    NetworkRules,
    VideoLimits,
)

RULES: dict[str, NetworkRules] = {
    "facebook": facebook.RULES,
    "instagram": instagram.RULES,
    "linkedin": linkedin.RULES,
    "tiktok": tiktok.RULES,
    "youtube": youtube.RULES,
}


def validate_target(
    platform: str, content: str, media: Sequence[MediaRef], options: PostOptions | None = None
) -> list[str]:
    """Per-target codes for one network; ['invalid_target'] for an unknown network."""
    rules = RULES.get(platform)
    if rules is None:
        return ["invalid_target"]
    return rules.check(content, media, options)


def build_payload(
    platform: str, content: str, media: Sequence[MediaRef], options: PostOptions | None = None
) -> Payload:
    return RULES[platform].payload(content, media, options)


__all__ = [
    "CONTENT_REQUIRED",
    "CONTENT_TOO_LONG",
    "MAX_CONTENT",
    "MEDIA_REQUIRED",
    "MEDIA_UNSUPPORTED",
    "RULES",
    "TITLE_TOO_LONG",
    "VIDEO_OUT_OF_RANGE",
    "VIDEO_REQUIRED",
    "NetworkRules",
    "VideoLimits",
    "build_payload",
    "validate_target",
]
