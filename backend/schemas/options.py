"""Request-side per-network options of POST /v1/posts (`options.tiktok`, `options.youtube`): part of the wire
format, so they live with the schemas (the API and the client import them without importing the networks).

camelCase on the wire, snake_case in Python, unknown fields refused (`extra='forbid'`), each value of its field's JSON
type (`strict`, as the request bodies that embed them: backend/schemas/common.py CamelModel).
The posts API embeds `PostOptions` in its request schema; the network rules read it (backend.networks.options
re-exports these names).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

TikTokPostMode = Literal["DIRECT_POST", "MEDIA_UPLOAD"]
TikTokPrivacyLevel = Literal[
    "PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"
]
YouTubePrivacyStatus = Literal["public", "private", "unlisted"]

TIKTOK_PRIVACY_LEVELS: tuple[str, ...] = (
    "PUBLIC_TO_EVERYONE",
    "MUTUAL_FOLLOW_FRIENDS",
    "FOLLOWER_OF_CREATOR",
    "SELF_ONLY",
)
YOUTUBE_TAGS_MAX = 500


def youtube_tags_length(tags: list[str]) -> int:
    """Length of a tag list the way YouTube counts it against its 500-character cap:
    the commas between tags count, and a tag containing a space counts as quoted (+2)."""
    total = 0
    for tag in tags:
        total += len(tag) + (2 if " " in tag else 0)
    return total + max(0, len(tags) - 1)


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, alias_generator=to_camel, strict=True)

    def wire(self) -> dict:
        return self.model_dump(by_alias=True, exclude_none=True)


class TikTokOptions(WireModel):
    """`options.tiktok`. In MEDIA_UPLOAD the privacy and interaction settings are accepted and ignored."""

    post_mode: TikTokPostMode = Field(
        default="DIRECT_POST", description="MEDIA_UPLOAD puts the content in the creator's drafts"
    )
    privacy_level: TikTokPrivacyLevel | None = None
    disable_comment: bool | None = None
    disable_duet: bool | None = None
    disable_stitch: bool | None = None
    auto_add_music: bool | None = None


class YouTubeOptions(WireModel):
    """`options.youtube`."""

    privacy_status: YouTubePrivacyStatus = "public"
    made_for_kids: bool | None = None
    title: str | None = Field(
        default=None, description="overrides the first line of the text; 100 characters"
    )
    tags: list[str] | None = Field(
        default=None, description="500 characters cumulated, counted as YouTube does"
    )
    contains_synthetic_media: bool | None = None

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        if tags is None:
            return None
        cleaned = [t.strip() for t in tags]
        for t in cleaned:
            if not t:
                raise ValueError("a YouTube tag cannot be empty")
            if "<" in t or ">" in t or "," in t:
                raise ValueError("a YouTube tag cannot contain '<', '>' or ','")
        used = youtube_tags_length(cleaned)
        if used > YOUTUBE_TAGS_MAX:
            raise ValueError(
                f"YouTube tags total {used} characters counted as YouTube does (commas between tags count, "
                f"a tag with a space counts 2 more for its quotes); the limit is {YOUTUBE_TAGS_MAX}"
            )
        return cleaned


class PostOptions(WireModel):
    """`options` of POST /v1/posts. Other networks' settings are not settable yet (spec 9.4)."""

    tiktok: TikTokOptions | None = None
    youtube: YouTubeOptions | None = None
