"""`options.mastodon` of POST /v1/posts (extension, for when the network is registered): the status's visibility,
its content warning, its language and the media's alt texts (docs.joinmastodon.org/methods/statuses/, read
2026-11-28). The lengths that depend on the instance (the content warning counted with the text, an alt text
within `description_limit`) are checked against the instance's limits at creation (rules.check)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from backend.schemas.options import WireModel

Visibility = Literal["public", "unlisted", "private", "direct"]
_LANG = re.compile(r"^[a-z]{2,3}$")  # ISO 639 (the API's `language`: "ISO 639 language code")


class MastodonOptions(WireModel):
    """`options.mastodon`."""

    model_config = ConfigDict(title="MastodonOptions")

    visibility: Visibility | None = Field(
        default=None, title="who sees the status", description="public, unlisted, private or direct"
    )
    spoiler_text: str | None = Field(
        default=None,
        title="content warning",
        description="shown before the text, which is hidden until opened; counted with the text's characters",
    )
    language: str | None = Field(default=None, title="language (ISO 639)", description='e.g. "en"')
    alt: list[str] | None = Field(
        default=None, title="alt texts of the media, in order", description="sent as each media's description"
    )

    @field_validator("language")
    @classmethod
    def _language(cls, language: str | None) -> str | None:
        if language is not None and not _LANG.match(language):
            raise ValueError(f"{language!r} is not an ISO 639 language code (e.g. en, de, pt)")
        return language
