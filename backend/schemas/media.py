"""Ingested media (spec 2.3, 4.3) and the media library listing (GET /v1/media, an extension)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from backend.schemas.common import CamelModel, CamelOut


class MediaCreate(CamelModel):
    url: str | None = Field(default=None, max_length=4096,
                            description="public http(s) address of the file; no redirect is followed")
    base64: str | None = Field(default=None, description="the file in base64 (whole body at most 30 MB)")

    @model_validator(mode="after")
    def _exactly_one(self) -> MediaCreate:
        if (self.url is None) == (self.base64 is None):
            raise ValueError("give exactly one of url or base64")
        return self


class MediaOut(CamelOut):
    """Image: type, url, key, width, height, bytes. Video: type, url, key, bytes, mimeType."""

    type: Literal["image", "video"]
    url: str
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
    created_at: str
    expires_at: str | None = Field(description="when the file will be deleted; null: no limit (held)")


class MediaList(CamelOut):
    items: list[MediaItem]
    next_cursor: str | None = None


class MediaDeleted(CamelOut):
    ok: bool = True
    key: str
