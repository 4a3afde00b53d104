"""TikTok's settings: SOCIALPUB_TIKTOK_… (backend/networks/settings.py; the OAuth app's id is TikTok's client
key), whether TikTok audited the app (SOCIALPUB_TIKTOK_AUDITED, default no: every new app), the app's Login Kit
platform (SOCIALPUB_TIKTOK_APP_KIND: desktop — the CLI's loopback redirect — or web), and the sandbox's daily
cap of direct posts (SOCIALPUB_SANDBOX_TIKTOK_DAILY_POSTS)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class TikTokSettings(NetworkSettings):
    model_config = network_config("tiktok")

    api_base: str = Field("https://open.tiktokapis.com", validation_alias=base_url_alias("tiktok"))
    # an unaudited app direct-posts only SELF_ONLY to private accounts (docs.md, rule unaudited-self-only)
    audited: bool = False
    # Login Kit's platform of the app: desktop takes loopback redirects (the CLI), web only https ones
    app_kind: Literal["desktop", "web"] = "desktop"
    sandbox_daily_posts: int = Field(
        15, validation_alias=AliasChoices("SOCIALPUB_SANDBOX_TIKTOK_DAILY_POSTS")
    )

    def sandbox_options(self) -> dict[str, Any]:
        return {"daily_posts": self.sandbox_daily_posts}
