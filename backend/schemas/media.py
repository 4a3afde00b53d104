"""Ingested media (spec 2.3, 4.3) and the media library listing (GET /v1/media, an extension)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from backend.schemas.common import MEDIA_CURSOR, CamelModel, CamelOut, Timestamp


def _exactly_one_schema(schema: dict[str, Any]) -> None:
    """The document says what the validator enforces: exactly one of the two, each a string (null is refused)."""
    for name in ("url", "base64"):
        prop = schema["properties"][name]
        prop.pop("anyOf", None)
        prop.pop("default", None)
        prop["type"] = "string"
    schema["properties"]["base64"]["minLength"] = 1  # an empty file is answered 400 unsupported_media_type
    schema["properties"]["url"].update({"format": "uri", "maxLength": 4096, "minLength": 1})
    schema["oneOf"] = [{"required": ["url"]}, {"required": ["base64"]}]


class MediaCreate(CamelModel):
    """Exactly one of `url` or `base64`: both or neither is 400 `validation_error`."""

    model_config = ConfigDict(json_schema_extra=_exactly_one_schema)

    url: str | None = Field(
        default=None,
        min_length=1,
        max_length=4096,
        description="public http(s) address of the file; no redirect is followed",
    )
    base64: str | None = Field(default=None, description="the file in base64 (whole body at most 30 MB)")

    @model_validator(mode="after")
    def _exactly_one(self) -> MediaCreate:
        if (self.url is None) == (self.base64 is None):
            raise ValueError("give exactly one of url or base64")
        for name in ("url", "base64"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null: leave it out")
        return self


class MediaOut(CamelOut):
    """Image: type, url, key, width, height, bytes. Video: type, url, key, bytes, mimeType (what the probe read at
    ingestion is in the library item: GET /v1/media)."""

    type: Literal["image", "video"]
    url: str = Field(json_schema_extra={"format": "uri"})
    key: str
    width: int | None = None
    height: int | None = None
    bytes: int
    mime_type: str | None = None


class MediaItem(CamelOut):
    id: str
    type: Literal["image", "video"]
    url: str
    key: str
    width: int | None
    height: int | None
    bytes: int
    mime_type: str
    origin: Literal["upload", "url", "generated"]
    sha256: str = Field(
        description="extension: SHA-256 (hex) of the stored bytes (an image is stored re-encoded, "
        "so this differs from the uploaded file's)",
        json_schema_extra={"pattern": "^[0-9a-f]{64}$"},
    )
    source_sha256: str | None = Field(
        default=None,
        description="extension: SHA-256 (hex) of the bytes as they were sent (an upload's, a URL's); "
        "null for a generated file or one ingested before it was recorded",
        json_schema_extra={"pattern": "^[0-9a-f]{64}$"},
    )
    duration_sec: float | None = Field(
        default=None, description="extension: a video's duration in seconds, as probed at ingestion"
    )
    frame_rate: float | None = Field(default=None, description="extension: a video's frames a second")
    video_codec: str | None = Field(
        default=None, description="extension: a video's codec (h264, hevc, vp9, …)"
    )
    audio_codec: str | None = Field(
        default=None, description="extension: a video's audio codec (aac, opus, …)"
    )
    created_at: Timestamp
    expires_at: Timestamp | None = Field(description="when the file will be deleted; null: no limit (held)")


class MediaList(CamelOut):
    items: list[MediaItem]
    next_cursor: str | None = Field(
        json_schema_extra={"pattern": MEDIA_CURSOR},
        description="pass as `cursor` to get the next (older) page; null at the end",
    )


class MediaDeleted(CamelOut):
    ok: bool = True
    key: str
