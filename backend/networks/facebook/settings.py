"""Facebook's settings: SOCIALPUB_FACEBOOK_… (backend/networks/settings.py), and the Graph API version it shares
with Instagram (SOCIALPUB_GRAPH_API_VERSION, lifecycle.py). The API bases are the hosts without the version:
every Graph URL is built from the base and the one version setting (graph.py:versioned)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator

from backend.networks.facebook.lifecycle import DEFAULT, SETTING
from backend.networks.settings import NetworkSettings, base_url_alias, network_config

VERSION_SHAPE = re.compile(r"^v\d+\.\d+$")
VERSIONED_BASE = re.compile(r"/v\d+\.\d+/?$")


def graph_version_field() -> object:
    return Field(DEFAULT, validation_alias=AliasChoices(SETTING, "graph_version"))


def check_version(value: str) -> str:
    if not VERSION_SHAPE.match(value):
        raise ValueError(f"{SETTING}: a Graph API version such as {DEFAULT}, not {value!r}")
    return value


def check_base(name: str, value: str) -> str:
    """A base URL without the version: the version is SOCIALPUB_GRAPH_API_VERSION alone."""
    if VERSIONED_BASE.search(value):
        raise ValueError(
            f"SOCIALPUB_{name.upper()}_BASE_URL ({value}) ends with a Graph API version: remove it "
            f"(the version is {SETTING}, default {DEFAULT})"
        )
    return value.rstrip("/")


class FacebookSettings(NetworkSettings):
    """A base given without SOCIALPUB_FACEBOOK_VIDEO_API_BASE (an emulator, a proxy) serves video too.
    app_mode: the Meta app's mode in the App Dashboard (SOCIALPUB_FACEBOOK_APP_MODE): a new app is in
    development mode, where its Page posts are seen only by the people with a role on the app."""

    model_config = network_config("facebook")

    api_base: str = Field("https://graph.facebook.com", validation_alias=base_url_alias("facebook"))
    video_api_base: str = "https://graph-video.facebook.com"
    graph_version: str = graph_version_field()  # type: ignore[assignment]  # a pydantic Field() factory: a str field to pydantic, FieldInfo to mypy
    app_mode: Literal["development", "live"] = "development"
    # the port of http://127.0.0.1:PORT/callback registered as a Valid OAuth Redirect URI (Strict Mode: exact match)
    redirect_port: int | None = Field(default=None, ge=1, le=65535)

    @field_validator("graph_version")
    @classmethod
    def _version(cls, value: str) -> str:
        return check_version(value)

    @field_validator("api_base", "video_api_base")
    @classmethod
    def _base(cls, value: str) -> str:
        return check_base("facebook", value)

    @model_validator(mode="after")
    def _video_host(self) -> FacebookSettings:
        if "api_base" in self.model_fields_set and "video_api_base" not in self.model_fields_set:
            self.video_api_base = self.api_base
        return self

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base, "video": self.video_api_base}

    def registered_redirect(self) -> str | None:
        return None if self.redirect_port is None else f"http://127.0.0.1:{self.redirect_port}/callback"

    def sandbox_options(self) -> dict[str, Any]:
        """The emulated Meta app's registered redirect URI (its port), when one is configured."""
        return {"redirect_port": self.redirect_port} if self.redirect_port is not None else {}
