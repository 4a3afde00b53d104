"""`options.youtube` of POST /v1/posts (spec 4.4): privacy, audience, title, tags, synthetic media."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from backend.schemas.options import WireModel

YouTubePrivacyStatus = Literal["public", "private", "unlisted"]
YOUTUBE_TAGS_MAX = 500


def youtube_tags_length(tags: list[str]) -> int:
    """Length of a tag list the way YouTube counts it against its 500-character cap:
    the commas between tags count, and a tag containing a space counts as quoted (+2)."""
    total = 0
    for tag in tags:
        total += len(tag) + (2 if " " in tag else 0)
    return total + max(0, len(tags) - 1)


class YouTubeOptions(WireModel):
    """`options.youtube`."""

    # a recipe may write `privacy` for `privacyStatus` (the recipe format's own examples do)
    model_config = ConfigDict(
        title="YouTubeOptions", json_schema_extra={"x-shorthands": {"privacy": "privacyStatus"}}
    )

    title: str | None = Field(
        default=None,
        title="title (default: the first line of the text; 100 characters)",
        description="overrides the first line of the text; 100 characters",
    )
    privacy_status: YouTubePrivacyStatus = Field(default="public", title="Privacy")
    tags: list[str] | None = Field(
        default=None,
        title="tags, comma separated (500 characters in all)",
        description="500 characters cumulated, counted as YouTube does",
    )
    made_for_kids: bool | None = Field(default=None, title="Made for kids")
    contains_synthetic_media: bool | None = Field(default=None, title="AI-generated (realistic)")

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        if tags is None:
            return None
        cleaned = [t.strip() for t in tags]
        for t in cleaned:
            if not t:
                raise ValueError("a YouTube tag cannot be empty")
            if "<" in t or ">" in t or "," in t:
                raise ValueError("a YouTube tag cannot contain '<', '>' or ','")
        used = youtube_tags_length(cleaned)
        if used > YOUTUBE_TAGS_MAX:
            raise ValueError(
                f"YouTube tags total {used} characters counted as YouTube does (commas between tags count, "
                f"a tag with a space counts 2 more for its quotes); the limit is {YOUTUBE_TAGS_MAX}"
            )
        return cleaned
