"""Generations (spec 2.5, 4.5): request and response bodies of /v1/generations. Pure pydantic (the client imports it).

The request fields are typed loosely in Python (any string, any integer) and their rules stated in the document
(enum, bounds): the service checks every rule itself and answers all the problems of a request at once, each with
its own code, in one 400 `validation_error` (backend/services/generations.py `validate`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from backend.schemas.common import GENERATION_CURSOR, CamelModel, CamelOut, Timestamp
from backend.schemas.statuses import GenerationStatusValue
from backend.schemas.workspace import CreditsOut

GENERATION_TYPES = ("image", "video")
ASPECT_RATIOS = ("9:16", "1:1", "16:9")
DURATIONS = (5, 10, 15)
PROMPT_MIN, PROMPT_MAX = 3, 1800
MAX_SOURCES = 2
IDEMPOTENCY_KEY_MAX = 200

SourceUrl = Annotated[str, Field(max_length=4096, json_schema_extra={"format": "uri"})]


PROMPT_PATTERN = r"^\s*[^\s\u0000][^\u0000]+[^\s\u0000]\s*$"
"""At least 3 characters once the blanks around it are left out (what the service counts), no NUL (as every
string)."""


def _generation_rules(schema: dict[str, Any]) -> None:
    """The document states the rules the service applies across fields: `durationSec` and `sourceUrls` are for a
    video only (an image with either is 400 validation_error), and the prompt's 3 characters do not count the
    blanks around it."""
    schema["examples"] = [
        {"type": "image", "prompt": "A flat white on a sunny terrace, morning light", "aspectRatio": "1:1"},
        {"type": "video", "prompt": "Slow pan over fresh roasted coffee beans", "durationSec": 10},
    ]
    schema["properties"]["prompt"]["pattern"] = PROMPT_PATTERN
    schema["oneOf"] = [
        {
            "properties": {
                "type": {"const": "image"},
                "durationSec": {"type": "null"},
                "sourceUrls": {"anyOf": [{"type": "null"}, {"type": "array", "maxItems": 0}]},
            }
        },
        {"properties": {"type": {"const": "video"}}},
    ]


class GenerationCreate(CamelModel):
    model_config = ConfigDict(json_schema_extra=_generation_rules)

    type: str = Field(
        max_length=100, json_schema_extra={"enum": list(GENERATION_TYPES)}, description="`image` or `video`"
    )
    prompt: str = Field(
        json_schema_extra={"minLength": PROMPT_MIN, "maxLength": PROMPT_MAX},
        description="3 to 1,800 characters (not counting leading and trailing blanks)",
    )
    aspect_ratio: (
        Annotated[str, Field(max_length=100, json_schema_extra={"enum": list(ASPECT_RATIOS)})] | None
    ) = Field(default=None, description="`9:16` (default), `1:1` or `16:9`")
    duration_sec: Annotated[int, Field(json_schema_extra={"enum": list(DURATIONS)})] | None = Field(
        default=None,
        description="video only: 5 (default), 10 or 15 seconds, billed per second (15, 30 or 45 credits)",
    )
    source_urls: Annotated[list[SourceUrl], Field(json_schema_extra={"maxItems": MAX_SOURCES})] | None = (
        Field(
            default=None,
            description="video only: one start image, or two (first and last frame); files on the media "
            "host (POST /v1/media) or public https URLs of images",
        )
    )
    background_url: SourceUrl | None = Field(
        default=None,
        description="extension, image only: your own photo as the background of the design (an announcement "
        "card: the prompt's words and the brand set over it, legible); a file on the media host (POST "
        "/v1/media) or a public https URL of an image",
    )
    idempotency_key: str | None = Field(
        default=None,
        min_length=1,
        max_length=IDEMPOTENCY_KEY_MAX,
        description="extension: the same key in the same workspace answers 200 with the generation already made "
        "with it (whatever its state, a failed one included), nothing validated or charged again; a "
        "UNIQUE index decides concurrent requests. A deleted generation's key is released. A dry run "
        "ignores it",
    )


class GenerationOut(CamelOut):
    """The generation object of spec 2.5 (also the body of the `generation.completed` / `generation.failed`
    events)."""

    id: str
    type: Literal["image", "video"]
    status: GenerationStatusValue
    prompt: str
    aspect_ratio: Literal["9:16", "1:1", "16:9"]
    duration_sec: int | None = Field(description="5, 10 or 15 for a video; null for an image")
    source_urls: list[str] = Field(description="the start images supplied; `[]` when none")
    background_url: str | None = Field(
        default=None, description="extension: the background photo supplied (an image); null when none"
    )
    media_url: str | None = Field(
        json_schema_extra={"format": "uri"},
        description="the produced file on the media host, usable as is in `mediaUrls` "
        "of POST /v1/posts; null until completed",
    )
    mime_type: str | None
    error: str | None = Field(
        description="on failure: a sentence to show the user as is (what happened, what to "
        "do; the credits were refunded)"
    )
    credits_cost: int
    idempotency_key: str | None = Field(
        default=None, description="extension: the `idempotencyKey` it was created with; null when none"
    )
    created_at: Timestamp
    completed_at: Timestamp | None = Field(description="end of production, on success as on failure")


class GenerationQuote(CamelOut):
    """`POST /v1/generations?dryRun=true` (extension): the request validated and priced; nothing is created or
    charged."""

    dry_run: Literal[True] = True
    type: Literal["image", "video"]
    duration_sec: int | None
    credits_cost: int = Field(description="what the creation would cost")
    balance: int = Field(description="the workspace's balance now")
    balance_after: int | None = Field(description="the balance once charged; null when it is not enough")
    enough: bool = Field(
        description="whether the balance covers the cost (the real call would get 402 "
        "insufficient_credits otherwise)"
    )


class GenerationList(CamelOut):
    items: list[GenerationOut] = Field(description="newest first; deleted creations are left out")
    next_cursor: str | None = Field(
        json_schema_extra={"pattern": GENERATION_CURSOR},
        description="pass as `cursor` for the next (older) page; null at the end",
    )
    credits: CreditsOut = Field(description="the workspace's credits, as in GET /v1/workspace")


class GenerationDeleted(CamelOut):
    """DELETE /v1/generations/:id (the spec leaves the success response open)."""

    ok: Literal[True] = True
    id: str
    status: GenerationStatusValue = Field(description="the status the creation had when it was deleted")
    media_deleted: bool = Field(
        description="the produced file was deleted (its URL now answers 404); false when "
        "there was none, or a post not yet sent still uses it"
    )
    media_kept_by: list[str] = Field(
        default_factory=list,
        description="the posts that still use the file and keep it: a post not yet "
        "sent keeps it until it is sent, then 30 days (spec 8, retention)",
    )
    media_kept_until: Timestamp | None = Field(
        default=None,
        description="when the file will be deleted, if it is kept and that is known already (all "
        "the posts using it are sent); null otherwise",
    )
    credits_refunded: int = Field(
        description="credits given back: the full cost for a creation deleted before "
        "production started, else 0"
    )
