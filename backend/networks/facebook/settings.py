"""Facebook's settings: SOCIALPUB_FACEBOOK_… (backend/networks/settings.py)."""

from __future__ import annotations

from pydantic import Field, model_validator

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class FacebookSettings(NetworkSettings):
    """A base given without SOCIALPUB_FACEBOOK_VIDEO_API_BASE (an emulator, a proxy) serves video too."""

    model_config = network_config("facebook")

    api_base: str = Field("https://graph.facebook.com/v21.0", validation_alias=base_url_alias("facebook"))
    video_api_base: str = "https://graph-video.facebook.com/v21.0"

    @model_validator(mode="after")
    def _video_host(self) -> FacebookSettings:
        if "api_base" in self.model_fields_set and "video_api_base" not in self.model_fields_set:
            self.video_api_base = self.api_base
        return self

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base, "video": self.video_api_base}
