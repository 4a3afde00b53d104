"""What one Mastodon instance accepts, read from its `GET /api/v2/instance` (public, Mastodon 4.0+;
docs.joinmastodon.org/methods/instance/ and /entities/Instance/, read 2026-11-28). Instances differ (forks such as
glitch-soc or Hometown raise `max_characters`), so nothing here is assumed of an instance that says otherwise; a
field the instance does not report takes upstream Mastodon's value (the documented default), except
`description_limit`, reported from 4.4 on and 1,500 before (MediaAttachment::MAX_DESCRIPTION_LENGTH)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from backend.networks.mastodon.text import URL_PLACEHOLDER_CHARS

# upstream Mastodon's configuration, as the Instance entity's example documents it
MAX_CHARACTERS = 500
MAX_MEDIA_ATTACHMENTS = 4
IMAGE_SIZE_LIMIT = 16_777_216
IMAGE_MATRIX_LIMIT = 33_177_600
VIDEO_SIZE_LIMIT = 103_809_024
VIDEO_FRAME_RATE_LIMIT = 120
VIDEO_MATRIX_LIMIT = 8_294_400
DESCRIPTION_LIMIT = 1_500


class NotAnInstance(ValueError):
    """The answer is not a Mastodon (4.0+) instance's description: connecting to it is refused with this reason."""


@dataclass(frozen=True)
class InstanceLimits:
    domain: str
    version: str
    max_characters: int = MAX_CHARACTERS
    characters_reserved_per_url: int = URL_PLACEHOLDER_CHARS
    max_media_attachments: int = MAX_MEDIA_ATTACHMENTS
    supported_mime_types: frozenset[str] = frozenset()  # empty: the instance did not say, not checked
    image_size_limit: int = IMAGE_SIZE_LIMIT
    image_matrix_limit: int = IMAGE_MATRIX_LIMIT
    video_size_limit: int = VIDEO_SIZE_LIMIT
    video_frame_rate_limit: int = VIDEO_FRAME_RATE_LIMIT
    video_matrix_limit: int = VIDEO_MATRIX_LIMIT
    description_limit: int = DESCRIPTION_LIMIT
    api_version: int | None = None  # api_versions.mastodon (4.3+), None before

    def to_dict(self) -> dict[str, Any]:
        """The cached form (per instance), read back by `from_cache`."""
        out: dict[str, Any] = dict(self.__dict__)
        out["supported_mime_types"] = sorted(self.supported_mime_types)
        return out

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> InstanceLimits:
        fields = dict(data)
        fields["supported_mime_types"] = frozenset(fields.get("supported_mime_types") or ())
        return cls(**fields)


def _positive_int(section: dict[str, Any], key: str, default: int) -> int:
    value = section.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise NotAnInstance(f"the instance reports {key} = {value!r}: not a positive whole number")
    return value


def _section(body: dict[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key)
    return value if isinstance(value, dict) else {}


def parse_instance(body: Any) -> InstanceLimits:
    """The limits of an instance from its /api/v2/instance answer; NotAnInstance when it is not one."""
    if not isinstance(body, dict) or not isinstance(body.get("domain"), str) or not body["domain"]:
        raise NotAnInstance("the server's /api/v2/instance is not a Mastodon instance's (no domain)")
    config = body.get("configuration")
    if not isinstance(config, dict):
        raise NotAnInstance("the server's /api/v2/instance has no configuration: not Mastodon 4.0 or later")
    statuses = _section(config, "statuses")
    media = _section(config, "media_attachments")
    mimes = media.get("supported_mime_types") or []
    api_versions = _section(body, "api_versions")
    api_version = api_versions.get("mastodon")
    return InstanceLimits(
        domain=body["domain"],
        version=str(body.get("version") or ""),
        max_characters=_positive_int(statuses, "max_characters", MAX_CHARACTERS),
        characters_reserved_per_url=_positive_int(
            statuses, "characters_reserved_per_url", URL_PLACEHOLDER_CHARS
        ),
        max_media_attachments=_positive_int(statuses, "max_media_attachments", MAX_MEDIA_ATTACHMENTS),
        supported_mime_types=frozenset(m for m in mimes if isinstance(m, str)),
        image_size_limit=_positive_int(media, "image_size_limit", IMAGE_SIZE_LIMIT),
        image_matrix_limit=_positive_int(media, "image_matrix_limit", IMAGE_MATRIX_LIMIT),
        video_size_limit=_positive_int(media, "video_size_limit", VIDEO_SIZE_LIMIT),
        video_frame_rate_limit=_positive_int(media, "video_frame_rate_limit", VIDEO_FRAME_RATE_LIMIT),
        video_matrix_limit=_positive_int(media, "video_matrix_limit", VIDEO_MATRIX_LIMIT),
        description_limit=_positive_int(media, "description_limit", DESCRIPTION_LIMIT),
        api_version=api_version
        if isinstance(api_version, int) and not isinstance(api_version, bool)
        else None,
    )
