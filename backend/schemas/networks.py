"""The networks a server publishes to, as GET /v1/networks gives them (an extension): what the front end shows and
checks before sending (badge, colour, the text's bound and how it is counted, media counts) and the JSON Schema of
each network's `options.<network>` of POST /v1/posts.

The backend's network registry (backend/networks/registry.py) declares each network's `NetworkLimits`; the front
end, which may not import the networks, reads them from the API (its client caches the list), so a server's plugin
networks show in a terminal that has never heard of them. Pure pydantic, no I/O.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from backend.schemas.common import CamelOut


class NetworkLimits(BaseModel):
    """What one network accepts from a post: the bounds the posts API checks (spec 4.4 rules 4-7), which the
    compose screen and the recipes check before sending. Codes are those of `invalid_targets`' details."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    max_text: int = Field(
        description="the text's bound, counted in `textUnit` (`content_too_long_for_target`)"
    )
    max_text_per_server: bool = Field(
        default=False,
        description="`maxText` is a default: each server of the network sets its own (an account's `textLimit`, "
        "checked against the account when a post is created); a front end without the account counts "
        "against `maxText` as a hint, not a refusal",
    )
    text_unit: str = Field(
        default="characters",
        description="how the text is counted: `characters` (code points), `utf16` (UTF-16 code units), "
        "`graphemes` (user-perceived characters), `escaped` (characters once each of ``\\|{}@[]()<>#*_~`` is "
        "backslash-escaped: counted twice), `utf8` (UTF-8 bytes), `emoji_utf8` (characters, an emoji counted as its UTF-8 bytes); a "
        "client that knows none of these counts characters",
    )
    min_media: int = Field(default=0, description="media a post needs at least")
    max_media: int = Field(
        default=10, description="media the network publishes at most (the rest are left out)"
    )
    media_required: bool = Field(default=False, description="refused without an image or a video")
    mixed_media: bool = Field(
        default=True,
        description="images and a video may be in one post; false: refused (`media_unsupported_for_target`)",
    )
    extra_media_refused: bool = Field(
        default=False,
        description="media beyond `maxMedia` (or a second video) are refused (`media_unsupported_for_target`) "
        "instead of left out",
    )
    video_required: bool = Field(default=False, description="refused without a video (images do not count)")
    text_or_media: bool = Field(default=False, description="refused with neither text nor media")
    first_media_only: bool = Field(default=False, description="only the first media is published")
    photo_title_max: int | None = Field(
        default=None,
        description="a post without video takes the text as its title, at most this long "
        "(`title_too_long_for_target`)",
    )
    title_max: int | None = Field(
        default=None, description="the bound of `options.<network>.title` (`title_too_long_for_target`)"
    )
    description_max_bytes: int | None = Field(
        default=None,
        description="the whole text in UTF-8 bytes, once `replacedCharacters` are replaced "
        "(`content_too_long_for_target`)",
    )
    replaced_characters: dict[str, str] = Field(
        default_factory=dict,
        description="characters the network refuses, replaced before sending (`<` by `‹`…)",
    )


class NetworkOut(CamelOut):
    name: str = Field(description="the network's name: a target of POST /v1/posts, `platform` everywhere")
    label: str = Field(description="the network's name as people write it")
    badge: str = Field(description="two letters for narrow tables")
    colour: str = Field(description="a colour name (or #rrggbb) the terminal shows the network in")
    limits: NetworkLimits
    options: dict[str, Any] | None = Field(
        description="the JSON Schema of `options.<name>` of POST /v1/posts, null when the network has none; "
        "`x-shorthands` maps a recipe's shorthand keys to the option they stand for"
    )
    sandbox: bool = Field(description="accounts of this network can be sandbox accounts (an emulator)")
    builtin: bool = Field(description="shipped with socialpub (false: a plugin's, through an entry point)")


class NetworkList(CamelOut):
    items: list[NetworkOut] = Field(description="built-in networks first, then plugins, each in name order")
