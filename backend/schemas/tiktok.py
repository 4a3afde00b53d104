"""Dedicated TikTok publishing (spec 2.6, 3.5, 4.6): bodies of /v1/publish/tiktok/*. Pure pydantic (the client
imports it). Length rules count UTF-16 code units, as TikTok does (an emoji counts 2)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator

from backend.schemas.common import CamelModel, CamelOut, Timestamp
from backend.schemas.text import utf16_len


class TikTokStatus(StrEnum):
    """A dedicated TikTok publication's status: TikTok's own names (spec 3.5), plus INITIATING, which only the
    store holds while the init call is under way (the wire never shows it)."""

    INITIATING = "INITIATING"
    PROCESSING_UPLOAD = "PROCESSING_UPLOAD"
    PROCESSING_DOWNLOAD = "PROCESSING_DOWNLOAD"
    SEND_TO_USER_INBOX = "SEND_TO_USER_INBOX"
    PUBLISH_COMPLETE = "PUBLISH_COMPLETE"
    FAILED = "FAILED"


TIKTOK_PROCESSING: tuple[TikTokStatus, ...] = (
    TikTokStatus.PROCESSING_UPLOAD,
    TikTokStatus.PROCESSING_DOWNLOAD,
)
"""TikTok is still working on the publication: its status is polled."""
TIKTOK_FINAL: tuple[TikTokStatus, ...] = (
    TikTokStatus.SEND_TO_USER_INBOX,
    TikTokStatus.PUBLISH_COMPLETE,
    TikTokStatus.FAILED,
)
"""TikTok's terminal statuses: the publication never changes again."""


TikTokStatusValue = Literal[
    TikTokStatus.PROCESSING_UPLOAD,
    TikTokStatus.PROCESSING_DOWNLOAD,
    TikTokStatus.SEND_TO_USER_INBOX,
    TikTokStatus.PUBLISH_COMPLETE,
    TikTokStatus.FAILED,
]
"""What the wire shows of a TikTok publication: never INITIATING (it reads as PROCESSING_UPLOAD)."""

PostMode = Literal["MEDIA_UPLOAD", "DIRECT_POST"]
PrivacyLevel = Literal["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
DEFAULT_POST_MODE: PostMode = "MEDIA_UPLOAD"  # docs/tiktok.md: nothing goes public without the creator
PHOTO_MAX = 35
PHOTO_TITLE_MAX = 90
PHOTO_DESCRIPTION_MAX = 4000
VIDEO_TITLE_MAX = 2200


def _direct_post_only(*fields: str):  # type: ignore[no-untyped-def]  # returns a pydantic field_validator, whose type pydantic does not export
    """The document says what the service enforces: unless postMode is DIRECT_POST, the DIRECT_POST-only
    settings are absent or null (400 validation_error `direct_post_only` otherwise)."""

    def extra(schema: dict[str, Any]) -> None:
        schema["anyOf"] = [
            {"required": ["postMode"], "properties": {"postMode": {"const": "DIRECT_POST"}}},
            {"properties": {name: {"type": "null"} for name in fields}},
        ]

    return extra


def _max_utf16(value: str | None, limit: int) -> str | None:
    if value is not None and utf16_len(value) > limit:
        raise ValueError(
            f"at most {limit} characters (UTF-16 units, as TikTok counts); this has {utf16_len(value)}"
        )
    return value


class Disclosure(CamelModel):
    """The commercial content disclosure of a direct post (TikTok's content sharing guidelines)."""

    brand_content_toggle: bool | None = Field(
        default=None,
        description="DIRECT_POST only: Branded content — a paid partnership promoting another brand (labelled "
        "'Paid partnership'; cannot be SELF_ONLY); sent as false unless set",
    )
    brand_organic_toggle: bool | None = Field(
        default=None,
        description="DIRECT_POST only: Your brand — the creator promotes their own business (labelled "
        "'Promotional content'); sent as false unless set",
    )


class TikTokPhotoCreate(Disclosure):
    """A photo carousel. privacyLevel, disableComment and autoAddMusic apply to DIRECT_POST only."""

    model_config = ConfigDict(
        json_schema_extra=_direct_post_only(
            "privacyLevel", "disableComment", "autoAddMusic", "brandContentToggle", "brandOrganicToggle"
        )
    )

    image_urls: list[
        Annotated[str, Field(json_schema_extra={"minLength": 1, "maxLength": 2000, "format": "uri"})]
    ] = Field(
        min_length=1,
        max_length=PHOTO_MAX,
        description="1 to 35 files on the media host (POST /v1/media); the first is the cover",
    )
    title: str | None = Field(
        default=None,
        json_schema_extra={"maxLength": PHOTO_TITLE_MAX},
        description="at most 90 characters; pre-filled in a draft",
    )
    description: str | None = Field(
        default=None,
        json_schema_extra={"maxLength": PHOTO_DESCRIPTION_MAX},
        description="at most 4000 characters; pre-filled in a draft",
    )
    post_mode: PostMode | None = Field(
        default=None, description="MEDIA_UPLOAD (draft, the default) or DIRECT_POST"
    )
    channel_id: str | None = Field(
        default=None,
        max_length=100,
        description="a connected tiktok account; default: the oldest connected one",
    )
    privacy_level: PrivacyLevel | None = Field(
        default=None,
        description="DIRECT_POST: required, the creator's choice among the account's privacy options "
        "(creator-info); an unaudited TikTok app may post only SELF_ONLY to a private account",
    )
    disable_comment: bool | None = Field(
        default=None, description="DIRECT_POST only; comments stay off unless set to false"
    )
    auto_add_music: bool | None = Field(default=None, description="DIRECT_POST only")

    @field_validator("image_urls")
    @classmethod
    def _urls(cls, value: list[str]) -> list[str]:
        for url in value:
            if not isinstance(url, str) or not url.strip() or len(url) > 2000:
                raise ValueError("each image URL must be a non-empty string of at most 2000 characters")
        return value

    @field_validator("title")
    @classmethod
    def _title(cls, value: str | None) -> str | None:
        return _max_utf16(value, PHOTO_TITLE_MAX)

    @field_validator("description")
    @classmethod
    def _description(cls, value: str | None) -> str | None:
        return _max_utf16(value, PHOTO_DESCRIPTION_MAX)


class TikTokVideoCreate(Disclosure):
    """A video pulled from the media host. The title is published only in DIRECT_POST."""

    model_config = ConfigDict(
        json_schema_extra=_direct_post_only(
            "privacyLevel",
            "disableComment",
            "disableDuet",
            "disableStitch",
            "brandContentToggle",
            "brandOrganicToggle",
        )
    )

    video_url: str = Field(
        min_length=1,
        max_length=2000,
        json_schema_extra={"format": "uri"},
        description="a file on the media host (POST /v1/media)",
    )
    title: str | None = Field(
        default=None,
        json_schema_extra={"maxLength": VIDEO_TITLE_MAX},
        description="at most 2200 characters; sent in DIRECT_POST only, echoed in MEDIA_UPLOAD",
    )
    post_mode: PostMode | None = Field(
        default=None, description="MEDIA_UPLOAD (draft, the default) or DIRECT_POST"
    )
    channel_id: str | None = Field(
        default=None,
        max_length=100,
        description="a connected tiktok account; default: the oldest connected one",
    )
    privacy_level: PrivacyLevel | None = Field(
        default=None,
        description="DIRECT_POST: required, the creator's choice among the account's privacy options "
        "(creator-info); an unaudited TikTok app may post only SELF_ONLY to a private account",
    )
    disable_comment: bool | None = Field(
        default=None, description="DIRECT_POST only; comments stay off unless set to false"
    )
    disable_duet: bool | None = Field(default=None, description="DIRECT_POST only")
    disable_stitch: bool | None = Field(default=None, description="DIRECT_POST only")

    @field_validator("title")
    @classmethod
    def _title(cls, value: str | None) -> str | None:
        return _max_utf16(value, VIDEO_TITLE_MAX)


class TikTokPhotoOut(CamelOut):
    success: bool
    publish_id: str
    title: str
    description: str
    post_mode: PostMode | None = None
    channel_id: str | None = None


class TikTokVideoOut(CamelOut):
    success: bool
    status: TikTokStatusValue
    publish_id: str
    title: str
    post_mode: PostMode | None = None
    channel_id: str | None = None


class TikTokStatusOut(CamelOut):
    """`status`; `failReason` (TikTok's code) and `failMessage` only on FAILED. The rest is an extension."""

    status: TikTokStatusValue
    fail_reason: str | None = None
    fail_message: str | None = None
    publish_id: str | None = None
    kind: Literal["photo", "video"] | None = None
    post_mode: PostMode | None = None
    channel_id: str | None = None
    downloaded_bytes: int | None = None
    public_post_ids: list[str] | None = None
    updated_at: Timestamp | None = None
