"""LinkedIn's settings: SOCIALPUB_LINKEDIN_… (backend/networks/settings.py), and the API version sent as
`LinkedIn-Version` (SOCIALPUB_LINKEDIN_VERSION)."""

from __future__ import annotations

from pydantic import Field

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class LinkedInSettings(NetworkSettings):
    model_config = network_config("linkedin")

    api_base: str = Field("https://api.linkedin.com/rest", validation_alias=base_url_alias("linkedin"))
    version: str = "202506"
