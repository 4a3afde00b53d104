"""LinkedIn's settings: SOCIALPUB_LINKEDIN_… (backend/networks/settings.py), the API version sent as
`LinkedIn-Version` (SOCIALPUB_LINKEDIN_VERSION, default: lifecycle.py's), whether connect asks the Community
Management scopes to post as organisations (SOCIALPUB_LINKEDIN_ORGANIZATIONS, off: a new app cannot hold them),
and the loopback port registered on the app as its redirect URL (SOCIALPUB_LINKEDIN_REDIRECT_PORT)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from backend.networks.linkedin.lifecycle import DEFAULT_VERSION
from backend.networks.settings import NetworkSettings, base_url_alias, network_config

# "Sign In with LinkedIn using OpenID Connect" (openid, profile) + "Share on LinkedIn" (w_member_social): the
# self-serve products every new app may add
MEMBER_SCOPES = ("openid", "profile", "w_member_social")
# the Community Management API's (access request, registered legal organisations only): post as, list the
# administered organisations, read their posts back
ORGANIZATION_SCOPES = ("w_organization_social", "r_organization_admin", "r_organization_social")


class LinkedInSettings(NetworkSettings):
    model_config = network_config("linkedin")

    api_base: str = Field("https://api.linkedin.com/rest", validation_alias=base_url_alias("linkedin"))
    version: str = DEFAULT_VERSION
    # post as the organisations the member administers: needs the Community Management API product
    organizations: bool = False
    # the port of http://127.0.0.1:PORT/callback registered on the app (LinkedIn matches the URL exactly)
    redirect_port: int | None = Field(default=None, ge=1, le=65535)

    def registered_redirect(self) -> str | None:
        return None if self.redirect_port is None else f"http://127.0.0.1:{self.redirect_port}/callback"

    def sandbox_options(self) -> dict[str, Any]:
        """The emulated app's registered redirect URL (its port), when one is configured."""
        return {"redirect_port": self.redirect_port} if self.redirect_port is not None else {}

    def scopes(self) -> tuple[str, ...]:
        """The scopes connect asks: the member's, and the organisations' when organisation posting is on."""
        return MEMBER_SCOPES + (ORGANIZATION_SCOPES if self.organizations else ())
