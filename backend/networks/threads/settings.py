"""Threads' settings: SOCIALPUB_THREADS_… (backend/networks/settings.py). Its app has its own credentials — the
Threads app ID and secret shown in the Meta app's Threads use case, not the Meta app's (fidelity table TH-R1):
SOCIALPUB_THREADS_CLIENT_ID / SOCIALPUB_THREADS_CLIENT_SECRET. The API host is graph.threads.net (no version in
the base: SOCIALPUB_THREADS_VERSION), whether App Review approved the app's permissions
(SOCIALPUB_THREADS_APP_REVIEWED, default false: a new app), the sandbox's daily cap of its publishing limit
SOCIALPUB_SANDBOX_THREADS_DAILY_POSTS (250, Threads' own)."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, field_validator

from backend.networks.settings import NetworkSettings, base_url_alias, network_config
from backend.networks.threads.lifecycle import DEFAULT, LIFECYCLE, SETTING


class ThreadsSettings(NetworkSettings):
    model_config = network_config("threads")

    api_base: str = Field("https://graph.threads.net", validation_alias=base_url_alias("threads"))
    version: str = Field(DEFAULT, validation_alias=AliasChoices(SETTING, "version"))
    # App Review approved threads_basic and threads_content_publish (Advanced Access): anyone may connect; until
    # then only the app's Threads testers who accepted the invite (accounts doctor says so)
    app_reviewed: bool = False
    sandbox_daily_posts: int = Field(
        250, validation_alias=AliasChoices("SOCIALPUB_SANDBOX_THREADS_DAILY_POSTS")
    )

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if LIFECYCLE.find(value) is None:
            raise ValueError(f"{SETTING}: the Threads API version is {DEFAULT}, not {value!r}")
        return value

    @field_validator("api_base")
    @classmethod
    def _base(cls, value: str) -> str:
        value = value.rstrip("/")
        if value.endswith(f"/{DEFAULT}"):
            raise ValueError(
                f"SOCIALPUB_THREADS_BASE_URL ({value}) ends with the API version: remove it ({SETTING})"
            )
        return value

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base}

    def sandbox_options(self) -> dict[str, Any]:
        return {"daily_posts": self.sandbox_daily_posts}
