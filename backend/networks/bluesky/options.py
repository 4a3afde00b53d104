"""`options.bluesky` of POST /v1/posts (extension): the images' alt texts, the post's languages."""

from __future__ import annotations

import re

from pydantic import ConfigDict, Field, field_validator

from backend.schemas.options import WireModel

MAX_ALT = 4
ALT_MAX_CHARS = 2000  # belief: the lexicon sets no bound on `alt`; the Bluesky app stops at 2000
MAX_LANGS = 3  # app.bsky.feed.post `langs`: maxLength 3
_LANG = re.compile(r"^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$")  # BCP-47, as far as the PDS checks it


class BlueskyOptions(WireModel):
    """`options.bluesky`."""

    model_config = ConfigDict(title="BlueskyOptions")

    alt: list[str] | None = Field(
        default=None,
        title="alt texts of the images, in order (4 at most)",
        description="one per image, in the order of mediaUrls; an image without one is sent with an empty alt",
    )
    langs: list[str] | None = Field(
        default=None, title="languages (BCP-47, 3 at most)", description='e.g. ["en", "pt-BR"]'
    )

    @field_validator("alt")
    @classmethod
    def _alt(cls, alt: list[str] | None) -> list[str] | None:
        if alt is None:
            return None
        if len(alt) > MAX_ALT:
            raise ValueError(f"Bluesky takes at most {MAX_ALT} images, so at most {MAX_ALT} alt texts")
        for a in alt:
            if len(a) > ALT_MAX_CHARS:
                raise ValueError(f"an alt text is at most {ALT_MAX_CHARS} characters")
        return alt

    @field_validator("langs")
    @classmethod
    def _langs(cls, langs: list[str] | None) -> list[str] | None:
        if langs is None:
            return None
        if len(langs) > MAX_LANGS:
            raise ValueError(f"a Bluesky post names at most {MAX_LANGS} languages")
        for lang in langs:
            if not _LANG.match(lang):
                raise ValueError(f"{lang!r} is not a BCP-47 language tag (e.g. en, pt-BR)")
        return langs
