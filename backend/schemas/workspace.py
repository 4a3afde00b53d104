"""Workspace (spec 2.2) and its PATCH extension."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from backend.schemas.common import CamelModel, CamelOut, Timestamp, not_nullable


class Brand(CamelOut):
    target_audience: str = ""
    unique_value_prop: str = ""
    voice_tone: str = ""
    content_topics: list[str] = []
    colors: list[str] = []


class PlanOut(CamelOut):
    name: str
    subscribed: str
    status: str | None
    period_end: Timestamp | None
    monthly_credits: int


class CreditsOut(CamelOut):
    balance: int
    cost: dict[str, int]
    clip: dict[str, int]


class WorkspaceOut(CamelOut):
    id: str
    name: str
    description: str
    currency: str
    logo_url: str
    brand: Brand
    plan: PlanOut
    credits: CreditsOut
    free_publications_left: int
    created_at: Timestamp


class BrandPatch(CamelModel):
    target_audience: str | None = Field(default=None, max_length=2000)
    unique_value_prop: str | None = Field(default=None, max_length=2000)
    voice_tone: str | None = Field(default=None, max_length=200)
    content_topics: list[str] | None = Field(default=None, max_length=50)
    colors: list[str] | None = Field(default=None, max_length=20)


class WorkspacePatch(CamelModel):
    model_config = ConfigDict(json_schema_extra=not_nullable("name", "currency"))

    name: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=r"\S", description="not blank"
    )
    description: str | None = Field(default=None, max_length=5000)
    currency: str | None = Field(
        default=None, pattern=r"^[A-Za-z]{3}$", description="ISO 4217 code, e.g. EUR (stored upper-case)"
    )
    logo_url: str | None = Field(
        default=None,
        max_length=2000,
        pattern=r"^(|https?://[^\s/?#]+[^\s]*)$",
        description="an http or https URL (a dashboard shows it as an image), or empty",
    )
    brand: BrandPatch | None = None
