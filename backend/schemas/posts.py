"""Posts (spec 2.4, 4.4): request and response bodies of /v1/posts. Pure pydantic (the client imports it)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from backend.networks.options import PostOptions
from backend.schemas.common import CamelModel, CamelOut

PostStatus = Literal["scheduled", "processing", "completed", "partial", "failed", "cancelled"]
TargetStatus = Literal["pending", "publishing", "succeeded", "failed", "inbox_delivered"]
MAX_TARGETS = 20
MAX_MEDIA = 10


class TargetRef(CamelModel):
    """A target as an object: the network and, optionally, the exact connected account (`channelId`)."""

    platform: str = Field(max_length=100, description="facebook, instagram, linkedin, tiktok or youtube")
    channel_id: str | None = Field(default=None, max_length=100,
                                   description="id of a connected account (GET /v1/accounts); "
                                               "without it, the network's default account")


class PostCreate(CamelModel):
    targets: list[str | TargetRef] = Field(min_length=1, max_length=MAX_TARGETS,
                                           description="1 to 20 network names or {platform, channelId} objects")
    content: str = Field(description="the text; 63,206 characters, stricter bounds per network")
    media_urls: list[str] = Field(default_factory=list, max_length=MAX_MEDIA,
                                  description="0 to 10 https URLs, or files on the media host")
    scheduled_at: str | None = Field(default=None, description="ISO 8601 with a zone offset (Z or ±hh:mm); "
                                                               "absent or null: publish now")
    options: PostOptions | None = None
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200,
                                        description="same key in the same workspace: the existing post, 200")


class PostPatch(CamelModel):
    """Only these fields can change, and only while the post is `scheduled`."""

    scheduled_at: str | None = Field(default=None, description="ISO 8601 with a zone offset, in the future")
    content: str | None = None
    media_urls: list[str] | None = Field(default=None, max_length=MAX_MEDIA)
    options: PostOptions | None = None
    targets: list[Any] | None = Field(default=None, description="not editable: cancel the post and create "
                                                                "a new one (400 targets_not_editable)")


class TargetOut(CamelOut):
    platform: str
    account_id: str | None
    account_name: str
    status: TargetStatus
    external_post_id: str | None
    post_url: str | None
    fail_reason: str | None
    fail_type: Literal["retriable", "permanent"] | None
    completed_at: str | None
    next_attempt_at: str | None = None


class PostOut(CamelOut):
    id: str
    status: PostStatus
    scheduled_at: str | None
    created_at: str
    updated_at: str
    content: str
    media_urls: list[str]
    options: dict[str, Any]
    idempotency_key: str | None
    targets: list[TargetOut]


class PostList(CamelOut):
    items: list[PostOut]
    next_cursor: str | None = Field(description="pass as `cursor` to get the next (older) page; null at the end")
