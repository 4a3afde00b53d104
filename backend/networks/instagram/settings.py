"""Instagram's settings: SOCIALPUB_INSTAGRAM_… (backend/networks/settings.py), the Graph API version it shares
with Facebook (SOCIALPUB_GRAPH_API_VERSION, backend/networks/facebook/lifecycle.py), the host of resumable video
uploads (rupload) and the sandbox's daily cap of its content publishing limit
(SOCIALPUB_SANDBOX_INSTAGRAM_DAILY_POSTS)."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, field_validator, model_validator

from backend.networks.facebook.settings import check_base, check_version, graph_version_field
from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class InstagramSettings(NetworkSettings):
    """upload_base: rupload.facebook.com's origin (Reels sent by bytes); an API base given without
    SOCIALPUB_INSTAGRAM_UPLOAD_BASE (an emulator, a proxy) serves the uploads too."""

    model_config = network_config("instagram")

    api_base: str = Field("https://graph.facebook.com", validation_alias=base_url_alias("instagram"))
    upload_base: str = "https://rupload.facebook.com"
    graph_version: str = graph_version_field()  # type: ignore[assignment]  # a pydantic Field() factory: a str field to pydantic, FieldInfo to mypy
    # the port of http://127.0.0.1:PORT/callback registered as a Valid OAuth Redirect URI (Strict Mode: exact match)
    redirect_port: int | None = Field(default=None, ge=1, le=65535)
    sandbox_daily_posts: int = Field(
        50, validation_alias=AliasChoices("SOCIALPUB_SANDBOX_INSTAGRAM_DAILY_POSTS")
    )

    @field_validator("graph_version")
    @classmethod
    def _version(cls, value: str) -> str:
        return check_version(value)

    @field_validator("api_base", "upload_base")
    @classmethod
    def _base(cls, value: str) -> str:
        return check_base("instagram", value)

    @model_validator(mode="after")
    def _upload_host(self) -> InstagramSettings:
        if "api_base" in self.model_fields_set and "upload_base" not in self.model_fields_set:
            self.upload_base = self.api_base
        return self

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base, "upload": self.upload_base}

    def registered_redirect(self) -> str | None:
        return None if self.redirect_port is None else f"http://127.0.0.1:{self.redirect_port}/callback"

    def sandbox_options(self) -> dict[str, Any]:
        return {"daily_posts": self.sandbox_daily_posts} | (
            {"redirect_port": self.redirect_port} if self.redirect_port is not None else {}
        )
