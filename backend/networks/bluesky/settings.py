"""Bluesky's settings: SOCIALPUB_BLUESKY_… (backend/networks/settings.py).

SOCIALPUB_BLUESKY_BASE_URL: the server that resolves handles and opens sessions when `--pds` is not given (the
entryway https://bsky.social); each account's own PDS then comes from its DID document. SOCIALPUB_BLUESKY_PLC_URL:
the PLC directory that holds did:plc documents (https://plc.directory). A PDS named by a DID document on a
loopback or private address is called only when it is the configured base (an operator's own test PDS)."""

from __future__ import annotations

from pydantic import Field

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class BlueskySettings(NetworkSettings):
    model_config = network_config("bluesky")

    api_base: str = Field("https://bsky.social", validation_alias=base_url_alias("bluesky"))
    plc_url: str = "https://plc.directory"

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base, "plc": self.plc_url}
