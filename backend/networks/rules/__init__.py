"""Per-network rules: limits, validation (spec 7 per-target codes) and what each network receives
(spec 4.4 rules 4-7). Pure code, no I/O. Each network's rules are its package's rules.py, found through the
registry:

    from backend.networks.rules import rules_for, validate_target
    codes = validate_target("tiktok", content, media, options)     # [] when the target can receive it
    payload = build_payload("tiktok", content, media, options)     # exactly what the network gets

`options` is the post's options in the wire form (`{"<network>": {…}}`, as POST /v1/posts takes them, or
already parsed models): each network reads its own, parsed with its options model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from backend.networks.base import MediaRef, Payload
from backend.networks.registry import find, get
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


def rules_for(platform: str) -> NetworkRules | None:
    """The rules of a registered network, None for an unknown name."""
    network = find(platform)
    return network.network_rules() if network is not None else None


def own_options(platform: str, options: Mapping[str, Any] | None) -> Any:
    """The network's own options (`options.<platform>`) as its options model, None when not given. Raises
    pydantic's ValidationError for a value the model refuses (the API checks them before: a 400)."""
    value = (options or {}).get(platform)
    if value is None:
        return None
    model = get(platform).options_model()
    if model is None or isinstance(value, model):
        return value
    return model.model_validate(value)


def validate_target(
    platform: str, content: str, media: Sequence[MediaRef], options: Mapping[str, Any] | None = None
) -> list[str]:
    """Per-target codes for one network; ['invalid_target'] for an unknown network."""
    rules = rules_for(platform)
    if rules is None:
        return ["invalid_target"]
    return rules.check(content, media, own_options(platform, options))


def build_payload(
    platform: str, content: str, media: Sequence[MediaRef], options: Mapping[str, Any] | None = None
) -> Payload:
    return get(platform).network_rules().payload(content, media, own_options(platform, options))


__all__ = [
    "CONTENT_REQUIRED",
    "CONTENT_TOO_LONG",
    "MAX_CONTENT",
    "MEDIA_REQUIRED",
    "MEDIA_UNSUPPORTED",
    "TITLE_TOO_LONG",
    "VIDEO_OUT_OF_RANGE",
    "VIDEO_REQUIRED",
    "NetworkRules",
    "VideoLimits",
    "build_payload",
    "own_options",
    "rules_for",
    "validate_target",
]
