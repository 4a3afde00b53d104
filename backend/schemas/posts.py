"""Posts (spec 2.4, 4.4): request and response bodies of /v1/posts. Pure pydantic (the client imports it)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from backend.schemas.common import POST_CURSOR, CamelModel, CamelOut, NetworkName, Timestamp, not_nullable
from backend.schemas.statuses import PostStatusValue, TargetStatusValue

MAX_TARGETS = 20
MAX_MEDIA = 10
MAX_CONTENT = (
    63_206  # stated in the document; a longer text is answered per target (content_too_long_for_target)
)
MAX_LABELS = 20
LABEL_KEY_PATTERN = r"^[a-z0-9]([a-z0-9._/-]{0,98}[a-z0-9])?$"
LABEL_VALUE_MAX = 500
LABEL_FILTER_PATTERN = r"^[a-z0-9](?:[a-z0-9._/-]{0,98}[a-z0-9])?=[^\u0000]{0,500}$"
"""`GET /v1/posts?label=KEY=VALUE`: a label key, `=`, a value of at most 500 characters (it may hold `=`)."""
"""A post-list cursor: opaque, URL-safe (`nextCursor` of the previous page, passed back as it came)."""

LabelKey = Annotated[str, Field(pattern=LABEL_KEY_PATTERN, max_length=100)]
LabelValue = Annotated[str, Field(max_length=LABEL_VALUE_MAX)]
Labels = Annotated[
    dict[LabelKey, LabelValue],
    Field(
        max_length=MAX_LABELS,
        description="extension: up to 20 labels, fixed at creation — keys of lowercase letters, digits and `._/-` "
        "(at most 100 characters, starting and ending with a letter or digit), values of at most 500 "
        "characters; `GET /v1/posts?label=KEY=VALUE` finds the posts carrying one. Recipes mark the posts "
        "a set owns with `socialpub.recipe/set` and `socialpub.recipe/key`",
        examples=[{"socialpub.recipe/set": "january", "team": "brand"}],
    ),
]

# `options` of POST /v1/posts: per network, its own settings (`options.<network>`, each network's options model:
# GET /v1/networks gives their JSON Schemas). The API validates them with the registry's models (the document
# states them: backend/services/networks.py); here, shared with the client, any object per network.
OptionsByNetwork = dict[str, dict[str, Any]]  # not the API's PostOptions model (backend.services.networks)


class TargetRef(CamelModel):
    """A target as an object: the network and, optionally, the exact connected account (`channelId`)."""

    platform: NetworkName = Field(description="a network's name (GET /v1/networks)")
    channel_id: str | None = Field(
        default=None,
        max_length=100,
        description="id of a connected account (GET /v1/accounts); without it, the network's default account",
    )


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError(
            "scheduledAt is an ISO 8601 timestamp with a zone offset, or null / absent to publish now"
        )
    return value


class PostCreate(CamelModel):
    """A post to publish now or at `scheduledAt` (the API's own model gives `options` each network's model and
    examples with the server's networks: backend/api/routers/posts.py)."""

    targets: list[NetworkName | TargetRef] = Field(
        min_length=1,
        max_length=MAX_TARGETS,
        description="1 to 20 network names or {platform, channelId} objects, no account twice",
    )
    content: str = Field(
        json_schema_extra={"maxLength": MAX_CONTENT},
        description="the text; 63,206 characters, stricter bounds per "
        "network (each network's `limits`: GET /v1/networks)",
    )
    media_urls: list[Annotated[str, Field(max_length=4096, json_schema_extra={"format": "uri"})]] = Field(
        default_factory=list,
        max_length=MAX_MEDIA,
        description="0 to 10 https URLs, or files on the media host",
    )
    scheduled_at: Timestamp | None = Field(
        default=None, description="ISO 8601 with a zone offset (Z or ±hh:mm); absent or null: publish now"
    )
    _scheduled_at = field_validator("scheduled_at")(_not_blank)
    options: OptionsByNetwork | None = None
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="same key in the same workspace: the existing post, 200",
    )
    labels: Labels | None = None


class PostPatch(CamelModel):
    """Only these fields can change, and only while the post is `scheduled`. Leave a field out to keep it."""

    model_config = ConfigDict(
        json_schema_extra=not_nullable("scheduledAt", "content", "mediaUrls", "options")
    )

    scheduled_at: Timestamp | None = Field(
        default=None, description="ISO 8601 with a zone offset, in the future"
    )
    _scheduled_at = field_validator("scheduled_at")(_not_blank)
    content: str | None = Field(
        default=None,
        json_schema_extra={"maxLength": MAX_CONTENT},
        description="over a network's bound: 400 invalid_targets, as on creation",
    )
    media_urls: list[Annotated[str, Field(max_length=4096, json_schema_extra={"format": "uri"})]] | None = (
        Field(default=None, max_length=MAX_MEDIA)
    )
    options: OptionsByNetwork | None = None
    # Not part of the document (targets and labels cannot change); sent anyway, answered 400
    # targets_not_editable / labels_not_editable.
    targets: SkipJsonSchema[list[Any] | None] = Field(default=None, exclude=True)
    labels: SkipJsonSchema[Any] = Field(default=None, exclude=True)


class TargetWarningOut(CamelOut):
    code: str = Field(
        description="stable, snake_case, prefixed with the network's name (`<network>_private_lock`)",
        json_schema_extra={"pattern": "^[a-z][a-z0-9_]*$"},
    )
    message: str = Field(description="what happened, why, and what to do")


class TargetOut(CamelOut):
    platform: NetworkName
    account_id: str | None
    account_name: str
    status: TargetStatusValue
    external_post_id: str | None
    post_url: str | None
    fail_reason: str | None
    fail_type: Literal["retriable", "permanent"] | None
    completed_at: Timestamp | None
    next_attempt_at: Timestamp | None = Field(
        default=None,
        description="extension: when a `pending` target that waits (a network's daily cap, a retry "
        "after a temporary failure) will next be tried; null when no attempt is planned",
    )
    warnings: list[TargetWarningOut] = Field(
        default_factory=list,
        description="extension: what the user must know about a target that went through not quite as asked "
        "(e.g. the network locked the video private); `[]` when none",
    )


class PostOut(CamelOut):
    id: str
    status: PostStatusValue
    scheduled_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp
    content: str
    media_urls: list[str]
    options: dict[str, Any]
    idempotency_key: str | None
    labels: dict[str, str] = Field(
        default_factory=dict, description="extension: the labels given at creation (`{}` when none)"
    )
    targets: list[TargetOut]


class PostList(CamelOut):
    items: list[PostOut]
    next_cursor: str | None = Field(
        json_schema_extra={"pattern": POST_CURSOR},
        description="pass as `cursor` to get the next (older) page; null at the end",
    )


MAX_LIST_LIMIT = 100
MAX_QUERY = 200
PostTimeField = Literal["createdAt", "scheduledAt", "dueAt"]
PostOrder = Literal["newest", "upcoming"]


class PostQuery(BaseModel):
    """`GET /v1/posts`: the list's filters and paging, one model for the router (built from the query string:
    the aliases are the parameter names), the service, the client and the CLI. Lax like every query string
    (`limit=5` arrives as text); unknown parameters are ignored."""

    model_config = ConfigDict(populate_by_name=True)

    limit: int = Field(20, ge=1, le=MAX_LIST_LIMIT, description="page size (1-100)")
    cursor: str | None = Field(
        None,
        max_length=200,
        json_schema_extra={"pattern": POST_CURSOR},  # stated here; another shape: 400 invalid_cursor
        description="`nextCursor` of the previous page, as it came",
    )
    status: list[PostStatusValue] | None = Field(None, description="repeat to match several statuses")
    platform: NetworkName | None = Field(None, description="posts with a target on this network")
    account_id: str | None = Field(
        None, alias="accountId", max_length=100, description="posts with a target on this account"
    )
    since: str | None = Field(
        None,
        alias="from",
        max_length=64,
        json_schema_extra={"format": "date-time"},
        description="ISO 8601 with offset; inclusive lower bound of `timeField`",
    )
    until: str | None = Field(
        None,
        alias="to",
        max_length=64,
        json_schema_extra={"format": "date-time"},
        description="ISO 8601 with offset; exclusive upper bound of `timeField`",
    )
    time_field: PostTimeField = Field(
        "createdAt",
        alias="timeField",
        description="the time `from`/`to` apply to; `dueAt`: `scheduledAt`, or `createdAt` for a post published "
        "at once",
    )
    idempotency_key: str | None = Field(None, alias="idempotencyKey", max_length=200)
    label: list[str] | None = Field(
        None,
        description="`KEY=VALUE`: posts carrying this label; repeat to require several",
        json_schema_extra={"items": {"type": "string", "pattern": LABEL_FILTER_PATTERN}},
    )
    q: str | None = Field(
        None,
        max_length=MAX_QUERY,
        pattern=r"^[^\x00]*$",
        description="posts whose text contains this, ignoring case (taken literally)",
    )
    order: PostOrder = Field(
        "newest",
        description="`newest`: newest first (creation order); `upcoming`: scheduled posts soonest due "
        "first, then the others by `dueAt`, most recent first. A cursor is valid only with "
        "the order it came from",
    )

    def params(self) -> dict[str, Any]:
        """The query string of this query: the parameters that differ from the server's defaults, by their wire
        names (an empty list or search is none)."""
        data = self.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        return {k: v for k, v in data.items() if v not in (None, [], "")}
