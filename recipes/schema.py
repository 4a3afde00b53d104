"""The recipe file format, as pydantic models: `RecipeFile` (timezone, defaults, posts), `Defaults`, `Entry`,
`Repeat`. Unknown keys are errors (`extra="forbid"`), so a typo never passes silently.

`targets`, `content` and `options` mean exactly what they mean in `POST /v1/posts` and are checked with the
wire schemas (backend.schemas). The networks are the server's (GET /v1/networks: the client's `Networks`): these
models take any network's name and any options object, and recipes.load checks them against the server's list
and each network's options schema (`check_networks`); `json_schema(networks)` is the JSON Schema that
`socialpub recipes schema` prints, for editors (e.g. `# yaml-language-server: $schema=https://socialpub.dev/
schemas/recipe.json`), with the server's networks as the targets' enum and each one's options.

These models check one value at a time; what needs the file around it (media on disk, template variables,
per-network limits after substitution, defaults merged, duplicate ids, the series' size) is recipes.load's.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from backend.schemas.common import NetworkName, fill_network_enums
from backend.schemas.generations import MAX_SOURCES, PROMPT_MAX, PROMPT_MIN
from backend.schemas.posts import MAX_MEDIA, MAX_TARGETS, TargetRef
from recipes.series import MAX_OCCURRENCES, WEEKDAY_NUMBERS, parse_at
from recipes.template import describe_variables
from socialpub_tui.client.networks import Networks

SCHEMA_ID = "https://socialpub.dev/schemas/recipe.json"
SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
TIME_PATTERN = r"^([01]?\d|2[0-3]):[0-5]\d$"
AT_PATTERN = r"^\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(Z|z|[+-]\d{2}(:?\d{2})?)?$"

_WEEKDAY_NAMES = {
    "monday": "mon",
    "tuesday": "tue",
    "wednesday": "wed",
    "thursday": "thu",
    "friday": "fri",
    "saturday": "sat",
    "sunday": "sun",
}
WEEKDAYS: tuple[str, ...] = tuple(WEEKDAY_NUMBERS)

# The examples' networks: the first two of the server's when the JSON Schema is made (json_schema)
NETWORK_1, NETWORK_2 = "<network 1>", "<network 2>"

PARTIAL = {"partial": True}
"""Validation context for what is left of an entry once its invalid keys are taken out (recipes.load checks
the rest): an entry without `at` or `repeat` is then not an error (its `at` or `repeat` was)."""

GENERATE_IN_DEFAULTS = (
    "`generate:` belongs to an entry, not to `defaults`: each entry's generation is made once "
    "for it (give `generate:` in the entries that need one)"
)


def _error(code: str, message: str) -> PydanticCustomError:
    """A validation error whose `type` becomes the problem's code in recipes.load."""
    return PydanticCustomError(code, message)


def _listify(value: Any) -> Any:
    """A single value where a list is expected is a list of one (`media: photo.jpg`, `on: tue`)."""
    return [value] if isinstance(value, str | int) and not isinstance(value, bool) else value


def _one_or_many(item: dict[str, Any], max_items: int | None = None) -> WithJsonSchema:
    """The JSON Schema of a list that may also be written as its single item."""
    many: dict[str, Any] = {"type": "array", "items": item}
    if max_items is not None:
        many["maxItems"] = max_items
    return WithJsonSchema({"anyOf": [item, many]})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- targets: as in POST /v1/posts; the network's name is checked against the server's (recipes.load)


def _target_kind(value: Any) -> str:
    return "account" if isinstance(value, dict) or isinstance(value, BaseModel) else "network"


class AccountTarget(TargetRef):
    """A target as an object: the network and the exact connected account (`channelId`)."""

    model_config = ConfigDict(
        title="AccountTarget",
        json_schema_extra={"examples": [{"platform": NETWORK_2, "channelId": "acc_123"}]},
    )

    platform: NetworkName = Field(description="the network (GET /v1/networks lists the server's)")


NetworkTarget = Annotated[NetworkName, Field(description="a network's name: its default connected account")]

Target = Annotated[
    Annotated[NetworkTarget, Tag("network")] | Annotated[AccountTarget, Tag("account")],
    Discriminator(_target_kind),
]


def _check_string(value: str | None) -> str | None:
    if value is not None and "\x00" in value:
        raise _error("invalid_recipe", "the NUL character is not allowed")
    return value


# ---- the parts --------------------------------------------------------------------------------------------

_CONTENT_DESCRIPTION = (
    "The text of the post, as `content` of POST /v1/posts (63,206 characters; after variables are replaced, "
    "each target's own limits apply: GET /v1/networks, `socialpub recipes schema` lists them). Variables: "
    + describe_variables()
    + ". `{{` and `}}` are literal braces; a format spec after a colon works as in Python (`{day:02d}`)."
)
_MEDIA_DESCRIPTION = (
    f"Up to {MAX_MEDIA} image or video files, paths relative to this file; a glob (`clips/*.mp4`) expands in "
    "sorted order and must match at least one file. A single path may be written without a list."
)
_MEDIA_SCHEMA = _one_or_many({"type": "string", "minLength": 1}, MAX_MEDIA)
_TARGETS_DESCRIPTION = (
    f"1 to {MAX_TARGETS} targets, as `targets` of POST /v1/posts: a network's name (its default account) or "
    "{platform, channelId} for one connected account."
)
_OPTIONS_DESCRIPTION = (
    "Per-network settings, as `options` of POST /v1/posts: each network's own (GET /v1/networks gives their "
    "schemas), and the shorthands a network's schema names (`x-shorthands`)."
)
OPTIONS_MARK = "x-socialpub-options"

# `options`: per network, its settings; checked against each network's options schema by recipes.load
RecipeOptions = Annotated[dict[str, dict[str, Any]], WithJsonSchema({"type": "object", OPTIONS_MARK: True})]


class Defaults(_Strict):
    """What every entry of the file inherits; an entry's own keys win. A list (targets, media) is replaced
    whole by the entry's; `content` likewise; `options` is merged per network and per setting, the entry's
    setting winning (defaults `{youtube: {privacyStatus: unlisted}}` + entry `{youtube: {title: Hi}}` gives
    both settings)."""

    model_config = ConfigDict(
        title="Defaults",
        json_schema_extra={
            "examples": [
                {
                    "targets": [NETWORK_1, {"platform": NETWORK_2, "channelId": "acc_123"}],
                }
            ]
        },
    )

    targets: list[Target] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_TARGETS,
        description=_TARGETS_DESCRIPTION + " Replaced whole by an entry's.",
    )
    content: str | None = Field(
        default=None,
        description="Content for entries that give none (see an entry's `content` for the variables).",
    )
    media: Annotated[list[str] | None, BeforeValidator(_listify), _MEDIA_SCHEMA] = Field(
        default=None, max_length=MAX_MEDIA, description=_MEDIA_DESCRIPTION + " Replaced whole by an entry's."
    )
    options: RecipeOptions | None = Field(
        default=None,
        description=_OPTIONS_DESCRIPTION
        + " Merged per network and per setting with an entry's, the entry winning.",
    )
    generate: SkipJsonSchema[Any] = Field(default=None, exclude=True)

    _strings = field_validator("content")(_check_string)

    @field_validator("generate")
    @classmethod
    def _generate(cls, value: Any) -> Any:
        raise _error("not_supported", GENERATE_IN_DEFAULTS)

    @field_validator("media")
    @classmethod
    def _media(cls, value: list[str] | None) -> list[str] | None:
        return _check_media(value)


def _check_media(value: list[str] | None) -> list[str] | None:
    for item in value or ():
        if not item.strip():
            raise _error("invalid_recipe", "a media path cannot be empty")
        if "\x00" in item:
            raise _error("invalid_recipe", "the NUL character is not allowed")
    return value


Every = Literal["day", "week", "month"]


def _on_item(value: Any, info: ValidationInfo) -> Any:
    every = info.data.get("every")
    if every == "week":
        name = value.strip().lower() if isinstance(value, str) else None
        name = _WEEKDAY_NAMES.get(name, name) if name else None
        if name not in WEEKDAY_NUMBERS:
            raise _error(
                "invalid_recipe",
                f"with every: week, `on` takes weekdays ({', '.join(WEEKDAYS)}), got {value!r}",
            )
        return name
    if every == "month":
        if not isinstance(value, int) or isinstance(value, bool) or value == 0 or not -31 <= value <= 31:
            raise _error(
                "invalid_recipe",
                "with every: month, `on` takes days of the month (1 to 31, -1 for the "
                f"last, -2 the one before…), got {value!r}",
            )
        return value
    return value  # every: day, or no every: the list's own check says what is wrong


def _time_item(value: Any) -> str:
    if not isinstance(value, str) or not re.match(TIME_PATTERN, value.strip()):
        raise _error("invalid_recipe", f'expected a wall-clock time HH:MM (e.g. "09:00"), got {value!r}')
    hh, mm = value.strip().split(":")
    return f"{int(hh):02d}:{mm}"


_ON_ITEM: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "enum": [*WEEKDAYS, *_WEEKDAY_NAMES], "description": "a weekday (every: week)"},
        {
            "type": "integer",
            "minimum": -31,
            "maximum": 31,
            "not": {"const": 0},
            "description": "a day of the month (every: month): 1-31, -1 the last, -2 the one before…",
        },
    ]
}
_TIME_ITEM: dict[str, Any] = {"type": "string", "pattern": TIME_PATTERN, "examples": ["09:00", "17:30"]}
OnItem = Annotated[Any, AfterValidator(_on_item), WithJsonSchema(_ON_ITEM)]
TimeItem = Annotated[Any, AfterValidator(_time_item), WithJsonSchema(_TIME_ITEM)]


class Repeat(_Strict):
    """A series: `every` day|week|month with `on` and `times`, or a 5-field `cron`; from `start` to `until`
    (inclusive) or for `count` occurrences. Times are wall-clock times in the file's zone: 09:00 stays 09:00
    across DST changes; a time that does not exist that day (spring forward) moves to the first valid minute
    after; one that happens twice (fall back) takes the first. A series may not yield more than 1,000
    occurrences."""

    model_config = ConfigDict(
        title="Repeat",
        json_schema_extra={
            "examples": [
                {
                    "every": "week",
                    "on": ["tue", "fri"],
                    "times": ["09:00", "17:30"],
                    "start": "2027-01-05",
                    "until": "2027-06-30",
                },
                {"every": "month", "on": [1, 15], "times": ["10:00"], "start": "2027-01-01", "count": 12},
                {"cron": "0 9 * * 1-5", "start": "2027-01-04", "count": 20},
            ]
        },
    )

    every: Every | None = Field(default=None, description="day, week or month (or give `cron` instead)")
    interval: int = Field(
        default=1,
        ge=1,
        le=100,
        description="every 2 weeks: `every: week` with `interval: 2` (counted from `start`)",
    )
    on: Annotated[list[OnItem] | None, BeforeValidator(_listify), _one_or_many(_ON_ITEM)] = Field(
        default=None,
        description="`every: week`: weekdays (mon, tue, … or monday, tuesday, …; default: "
        "start's weekday); `every: month`: days of the month (1-31, -1 the last; a "
        "month without that day is skipped; default: start's day); not with `day`",
    )
    times: Annotated[list[TimeItem] | None, BeforeValidator(_listify), _one_or_many(_TIME_ITEM)] = Field(
        default=None,
        min_length=1,
        description="wall-clock times HH:MM in the file's zone, each day the "
        "series falls on (required with `every`)",
    )
    cron: str | None = Field(
        default=None,
        description="a 5-field cron expression (minute hour day-of-month "
        "month day-of-week) read in the file's zone, instead of every/on/times",
        examples=["0 9 * * 1-5", "30 17 1 * *"],
    )
    start: str = Field(
        description="the first day, YYYY-MM-DD (included)", json_schema_extra={"pattern": DATE_PATTERN}
    )
    until: str | None = Field(
        default=None,
        description="the last day, YYYY-MM-DD, included (or `count`)",
        json_schema_extra={"pattern": DATE_PATTERN},
    )
    count: int | None = Field(
        default=None,
        description=f"the number of occurrences (date-times, not days), 1 to "
        f"{MAX_OCCURRENCES:,} (or `until`)",
        json_schema_extra={"minimum": 1, "maximum": MAX_OCCURRENCES},
    )

    @field_validator("on")
    @classmethod
    def _on(cls, value: list[Any] | None, info: ValidationInfo) -> list[Any] | None:
        if value is not None and info.data.get("every") == "day":
            raise _error("invalid_recipe", "`on` does not go with every: day; use every: week with weekdays")
        return value

    @field_validator("times")
    @classmethod
    def _times(cls, value: list[str] | None) -> list[str] | None:
        return sorted(set(value)) if value is not None else None

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        given = [k for k in ("every", "on", "times") if info.data.get(k) is not None]
        if given:
            raise _error(
                "invalid_recipe",
                "`cron` replaces every, on and times: give one or the other "
                f"(this series also has {', '.join(given)})",
            )
        fields = value.split()
        if len(fields) != 5:
            raise _error(
                "invalid_recipe",
                f"expected a cron expression of 5 fields (minute hour day-of-month "
                f'month day-of-week, e.g. "0 9 * * 1-5"), got {len(fields)} fields',
            )
        from croniter import croniter

        if not croniter.is_valid(value):
            raise _error(
                "invalid_recipe",
                f"{value!r} is not a valid cron expression (minute hour "
                'day-of-month month day-of-week, e.g. "0 9 * * 1-5")',
            )
        return " ".join(fields)

    @field_validator("start", "until")
    @classmethod
    def _date(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        from datetime import date

        try:
            if not re.match(DATE_PATTERN, value.strip()):
                raise ValueError
            day = date.fromisoformat(value.strip())
        except ValueError:
            raise _error(
                "invalid_recipe", f'expected a date YYYY-MM-DD (e.g. "2027-01-05"), got {value!r}'
            ) from None
        if info.field_name == "until" and info.data.get("start") and day.isoformat() < info.data["start"]:
            raise _error("invalid_recipe", f"`until` ({day}) is before `start` ({info.data['start']})")
        return day.isoformat()

    @field_validator("count")
    @classmethod
    def _count(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is None:
            return None
        if info.data.get("until") is not None:
            raise _error("invalid_recipe", "give `until` or `count`, not both")
        if not 1 <= value <= MAX_OCCURRENCES:
            raise _error(
                "series_too_long" if value > MAX_OCCURRENCES else "invalid_recipe",
                f"`count` is 1 to {MAX_OCCURRENCES:,} (a series may not yield more), got {value}",
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> Repeat:
        if self.every is None and self.cron is None:
            raise _error(
                "invalid_recipe", "a series needs `every` (day, week or month) with `times`, or `cron`"
            )
        if self.every is not None and not self.times:
            raise _error(
                "invalid_recipe", 'a series with `every` needs `times` (wall-clock times, e.g. ["09:00"])'
            )
        if self.cron is not None and self.interval != 1:
            raise _error("invalid_recipe", "`interval` goes with `every`, not with `cron`")
        if self.until is None and self.count is None:
            raise _error(
                "invalid_recipe",
                "a series needs `until` (a date, included) or `count`: it may not run forever",
            )
        return self


class Generate(_Strict):
    """An image or a video made by AI generation (POST /v1/generations) before the post, and put first in its
    media. Made once per occurrence: its idempotency key derives from the occurrence key and this block (after
    variables are replaced), so applying again never makes it again, and editing the block makes a new one. Its
    cost shows in `plan`."""

    model_config = ConfigDict(
        title="Generate",
        json_schema_extra={
            "examples": [
                {
                    "type": "image",
                    "prompt": "A flat white on a sunny terrace, {month_name} morning light",
                    "aspectRatio": "1:1",
                },
                {
                    "type": "video",
                    "prompt": "Slow pan over fresh roasted coffee beans",
                    "durationSec": 10,
                    "sources": ["images/beans.jpg"],
                },
            ]
        },
    )

    type: Literal["image", "video"] = Field(
        description="`image` (2 credits) or `video` (15, 30 or 45 credits for 5, 10 or 15 seconds)"
    )
    prompt: str = Field(
        description=f"what to make, {PROMPT_MIN} to {PROMPT_MAX:,} characters after variables are "
        "replaced (the variables of `content`)",
        json_schema_extra={"minLength": PROMPT_MIN, "maxLength": PROMPT_MAX},
    )
    aspect_ratio: Literal["9:16", "1:1", "16:9"] = Field(
        default="9:16", alias="aspectRatio", description="`9:16` (default), `1:1` or `16:9`"
    )
    duration_sec: Literal[5, 10, 15] | None = Field(
        default=None, alias="durationSec", description="video only: 5 (default), 10 or 15 seconds"
    )
    sources: Annotated[
        list[str] | None,
        BeforeValidator(_listify),
        _one_or_many({"type": "string", "minLength": 1}, MAX_SOURCES),
    ] = Field(
        default=None,
        description=f"video only: 1 or {MAX_SOURCES} start images (a first and a last frame): files relative to this "
        "file (uploaded first, once per content, as `media` are) or https URLs",
    )

    _strings = field_validator("prompt")(_check_string)

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, value: str) -> str:
        if len(value.strip()) < PROMPT_MIN:
            raise _error(
                "invalid_recipe", f"a prompt needs at least {PROMPT_MIN} characters, got {len(value.strip())}"
            )
        return value

    @field_validator("sources")
    @classmethod
    def _sources(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not 1 <= len(value) <= MAX_SOURCES:
            raise _error(
                "invalid_recipe",
                f"1 or {MAX_SOURCES} start images (a first and a last frame), got {len(value)}",
            )
        for item in value or ():
            if not item.strip():
                raise _error("invalid_recipe", "a source cannot be empty")
            if "\x00" in item:
                raise _error("invalid_recipe", "the NUL character is not allowed")
            if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", item) and not item.lower().startswith("https://"):
                raise _error("invalid_recipe", f"a source URL must be https, got {item[:60]!r}")
        return value

    @model_validator(mode="after")
    def _video_only(self) -> Generate:
        if self.type == "image" and self.duration_sec is not None:
            raise _error("invalid_recipe", "`durationSec` is for videos only: leave it out for an image")
        if self.type == "image" and self.sources:
            raise _error(
                "invalid_recipe", "`sources` (start images) are for videos only: leave them out for an image"
            )
        return self

    @property
    def duration(self) -> int | None:
        return (self.duration_sec or 5) if self.type == "video" else None


class Entry(_Strict):
    """One post (`at`) or a series of posts (`repeat`). Keys it does not give come from `defaults`."""

    model_config = ConfigDict(
        title="Entry",
        json_schema_extra={
            "examples": [
                {
                    "id": "launch",
                    "content": "Our {weekday} launch! {file.stem}",
                    "media": ["images/launch.jpg"],
                    "targets": [NETWORK_1, NETWORK_2],
                    "at": "2027-01-15 09:00",
                },
                {
                    "id": "weekly-tip",
                    "content": "Tip of the week",
                    "repeat": {
                        "every": "week",
                        "on": ["tue", "fri"],
                        "times": ["09:00"],
                        "start": "2027-01-05",
                        "count": 12,
                    },
                },
            ]
        },
    )

    id: str = Field(
        description="the entry's stable identity in the file (letters, digits, . _ -; up to 100): "
        "posts made from it are found again by it, so renaming it replaces them",
        json_schema_extra={"pattern": ID_PATTERN},
    )
    content: str | None = Field(default=None, description=_CONTENT_DESCRIPTION)
    media: Annotated[list[str] | None, BeforeValidator(_listify), _MEDIA_SCHEMA] = Field(
        default=None, max_length=MAX_MEDIA, description=_MEDIA_DESCRIPTION
    )
    targets: list[Target] | None = Field(
        default=None, min_length=1, max_length=MAX_TARGETS, description=_TARGETS_DESCRIPTION
    )
    options: RecipeOptions | None = Field(default=None, description=_OPTIONS_DESCRIPTION)
    at: str | None = Field(
        default=None,
        description='when, for one post: a wall-clock time "YYYY-MM-DD HH:MM" '
        "in the file's zone (a time skipped by a DST change moves to the first valid minute "
        "after; one that happens twice takes the first), or ISO 8601 with an offset "
        '("2027-01-15T09:00:00+01:00"). Give `at` or `repeat`.',
        examples=["2027-01-15 09:00", "2027-01-15T08:00:00Z"],
        json_schema_extra={"pattern": AT_PATTERN},
    )
    repeat: Repeat | None = Field(default=None, description="when, for a series (instead of `at`)")
    generate: Generate | None = Field(
        default=None,
        description="an image or a video to make by AI generation "
        "before the post (credits: see `plan`); it goes first in the post's media",
    )

    _strings = field_validator("content")(_check_string)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not re.match(ID_PATTERN, value):
            raise _error(
                "invalid_recipe",
                "an id is 1 to 100 letters, digits, '.', '_' or '-', starting with a "
                f"letter or digit, got {value!r}",
            )
        return value

    @field_validator("media")
    @classmethod
    def _media(cls, value: list[str] | None) -> list[str] | None:
        return _check_media(value)

    @field_validator("at")
    @classmethod
    def _at(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            if not re.match(AT_PATTERN, value.strip()):
                raise ValueError
            parse_at(value)
        except ValueError:
            raise _error(
                "invalid_recipe",
                'expected "YYYY-MM-DD HH:MM" (a wall-clock time in the file\'s '
                'zone) or ISO 8601 with an offset ("2027-01-15T09:00:00+01:00"), '
                f"got {value!r}",
            ) from None
        return value.strip()

    @field_validator("repeat")
    @classmethod
    def _repeat(cls, value: Repeat | None, info: ValidationInfo) -> Repeat | None:
        if value is not None and info.data.get("at") is not None:
            raise _error("invalid_recipe", "give `at` (one post) or `repeat` (a series), not both")
        return value

    @model_validator(mode="after")
    def _when(self, info: ValidationInfo) -> Entry:
        if self.at is None and self.repeat is None and not (info.context or {}).get("partial"):
            raise _error("invalid_recipe", "an entry needs `at` (one post) or `repeat` (a series)")
        return self


class RecipeFile(_Strict):
    """A recipe file: posts to exist, each at a time or as a series, with their text, media, targets and
    options. Read with YAML 1.2's core schema: `on`, `yes`, `no` are text, and so are dates and times."""

    model_config = ConfigDict(
        title="socialpub recipe",
        json_schema_extra={
            "examples": [
                {
                    "timezone": "Europe/Paris",
                    "defaults": {"targets": [NETWORK_1, NETWORK_2]},
                    "posts": [
                        {
                            "id": "launch",
                            "content": "Our {weekday} launch!",
                            "media": ["images/launch.jpg"],
                            "targets": [NETWORK_2, NETWORK_1],
                            "at": "2027-01-15 09:00",
                        },
                        {
                            "id": "weekly-tip",
                            "content": "Tip of the week #{n}",
                            "repeat": {
                                "every": "week",
                                "on": ["tue"],
                                "times": ["09:00"],
                                "start": "2027-01-05",
                                "until": "2027-06-29",
                            },
                        },
                    ],
                }
            ]
        },
    )

    timezone: str | None = Field(
        default=None,
        description="the IANA zone (Europe/Paris) of every local time in "
        "the file; default: the profile's `timezone`, else the system's zone",
        examples=["Europe/Paris", "America/New_York", "UTC"],
    )
    defaults: Defaults | None = Field(
        default=None, description="keys every entry inherits (its own keys win)"
    )
    posts: list[Entry] = Field(description="the entries; each `id` once in the file")

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str | None) -> str | None:
        if value is None:
            return None
        check_zone(value)
        return value


def check_zone(name: str) -> None:
    """PydanticCustomError `unknown_timezone` unless `name` is an IANA zone known here."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        if not name or name != name.strip():
            raise ValueError
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "Europe" is a folder of zones, not one
        raise _error(
            "unknown_timezone",
            f"unknown time zone {name!r}: use an IANA name such as Europe/Paris, America/New_York or UTC",
        ) from None


def json_schema(networks: Networks) -> dict[str, Any]:
    """The JSON Schema of a recipe file (draft 2020-12) with `$id`, descriptions and examples: the targets are
    `networks`' names, `options` each network's options schema (with its shorthands)."""
    names = networks.names()
    body = fill_network_enums(RecipeFile.model_json_schema(by_alias=True), names)
    body = _fill_options(body, _options_schema(networks))
    if names:
        body = _example_networks(body, {NETWORK_1: names[0], NETWORK_2: names[min(1, len(names) - 1)]})
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_ID, **_one_line(body)}


def _options_schema(networks: Networks) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for n in networks:
        if not n.options:
            continue
        own = dict(n.options)
        props = dict(own.get("properties") or {})
        for short, full in (own.get("x-shorthands") or {}).items():
            if full in props:
                props[short] = {
                    k: v for k, v in props[full].items() if k not in ("default", "title", "description")
                } | {"description": f"shorthand for `{full}` (give one of them)"}
        properties[n.name] = {**own, "properties": props}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _example_networks(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, dict):
        return {k: _example_networks(v, names) for k, v in node.items()}
    if isinstance(node, list):
        return [_example_networks(v, names) for v in node]
    return names.get(node, node) if isinstance(node, str) else node


def _fill_options(node: Any, options: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if node.get(OPTIONS_MARK):
            return {**{k: v for k, v in node.items() if k != OPTIONS_MARK}, **options}
        return {k: _fill_options(v, options) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill_options(v, options) for v in node]
    return node


def _one_line(node: Any) -> Any:
    """Descriptions taken from docstrings, on one line (editors show them as tooltips)."""
    if isinstance(node, dict):
        return {
            k: " ".join(v.split()) if k == "description" and isinstance(v, str) else _one_line(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_one_line(v) for v in node]
    return node
