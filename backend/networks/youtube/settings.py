"""YouTube's settings: SOCIALPUB_YOUTUBE_… (backend/networks/settings.py). A base ending /youtube/v3 given
without SOCIALPUB_YOUTUBE_UPLOAD_BASE (an emulator, a proxy) gives the upload base (…/upload/youtube/v3).

What the Google Cloud project behind SOCIALPUB_YOUTUBE_CLIENT_ID has been through (defaults: a new project),
read by `accounts doctor` (checks.py) — the network itself decides, these only let socialpub say in advance:
    SOCIALPUB_YOUTUBE_AUDITED=1               passed the YouTube API Services audit (else uploads are private)
    SOCIALPUB_YOUTUBE_PUBLISHING_STATUS       testing (default: refresh tokens last 7 days, test users only) |
                                              production
    SOCIALPUB_YOUTUBE_VERIFIED=1              Google verified the OAuth app (else: the "unverified app" screen)
    SOCIALPUB_YOUTUBE_CLIENT_TYPE             desktop (default: any loopback port) | web (exact redirect URIs)
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class YouTubeSettings(NetworkSettings):
    model_config = network_config("youtube")

    api_base: str = Field("https://www.googleapis.com/youtube/v3", validation_alias=base_url_alias("youtube"))
    upload_base: str = "https://www.googleapis.com/upload/youtube/v3"
    audited: bool = False
    publishing_status: Literal["testing", "production"] = "testing"
    verified: bool = False
    client_type: Literal["desktop", "web"] = "desktop"

    @model_validator(mode="after")
    def _upload_host(self) -> YouTubeSettings:
        fields = self.model_fields_set
        if (
            "api_base" in fields
            and "upload_base" not in fields
            and self.api_base.rstrip("/").endswith("/youtube/v3")
        ):
            self.upload_base = self.api_base.rstrip("/")[: -len("/youtube/v3")] + "/upload/youtube/v3"
        return self

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base, "upload": self.upload_base}
