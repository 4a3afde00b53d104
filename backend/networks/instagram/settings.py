"""Instagram's settings: SOCIALPUB_INSTAGRAM_… (backend/networks/settings.py), and the sandbox's daily cap of
its content publishing limit (SOCIALPUB_SANDBOX_INSTAGRAM_DAILY_POSTS)."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class InstagramSettings(NetworkSettings):
    model_config = network_config("instagram")

    api_base: str = Field("https://graph.facebook.com/v21.0", validation_alias=base_url_alias("instagram"))
    sandbox_daily_posts: int = Field(
        50, validation_alias=AliasChoices("SOCIALPUB_SANDBOX_INSTAGRAM_DAILY_POSTS")
    )

    def sandbox_options(self) -> dict[str, Any]:
        return {"daily_posts": self.sandbox_daily_posts}
