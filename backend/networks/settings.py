"""What every network's settings have (each network's package subclasses it with its own prefix and defaults).

A network's settings are a pydantic-settings model of its own, read from the environment once per `Settings`
object (`Settings.network_settings(model)`, or `registry.get(name).settings_of(settings)`): the API base of the
live network, the OAuth app's credentials, where its OAuth endpoints are, and whatever else the network needs
(LinkedIn's API version, the sandbox's daily caps…). The environment variables keep the names they always had:

    SOCIALPUB_<NETWORK>_BASE_URL (or the older SOCIALPUB_<NETWORK>_API_BASE)   the live API base
    SOCIALPUB_<NETWORK>_CLIENT_ID, SOCIALPUB_<NETWORK>_CLIENT_SECRET          the OAuth app
    SOCIALPUB_<NETWORK>_OAUTH_BASE                                            the OAuth endpoints' origin
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def base_url_alias(name: str) -> AliasChoices:
    """SOCIALPUB_<NAME>_BASE_URL (issue 17's name, what `socialpub sandbox serve` prints), or the older
    SOCIALPUB_<NAME>_API_BASE (a model built in Python takes `api_base` by name: populate_by_name)."""
    return AliasChoices(f"SOCIALPUB_{name.upper()}_BASE_URL", f"SOCIALPUB_{name.upper()}_API_BASE")


def env_prefix(name: str) -> str:
    return f"SOCIALPUB_{name.upper()}_"


class NetworkSettings(BaseSettings):
    """The settings every network has. A subclass sets `model_config = network_config("<name>")` and gives
    `api_base` its default with `validation_alias=base_url_alias("<name>")`."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    api_base: str = ""
    client_id: str | None = None
    client_secret: str | None = Field(default=None, repr=False)
    oauth_base: str | None = None

    def live_hosts(self) -> dict[str, str]:
        """Where the live network's API lives, by role: `api` always (Facebook adds `video`, YouTube `upload`)."""
        return {"api": self.api_base}

    def sandbox_options(self) -> dict[str, Any]:
        """What the network's emulator reads from these settings (its daily caps…), as plain values."""
        return {}

    def registered_redirect(self) -> str | None:
        """The loopback redirect URI registered on the network's app (`accounts connect` listens there), when the
        network matches redirects exactly and one is configured (SOCIALPUB_<NETWORK>_REDIRECT_PORT)."""
        return None


def network_config(name: str) -> SettingsConfigDict:
    """The settings config of network `name`: variables SOCIALPUB_<NAME>_…, unknown ones ignored."""
    return SettingsConfigDict(env_prefix=env_prefix(name), extra="ignore", populate_by_name=True)
