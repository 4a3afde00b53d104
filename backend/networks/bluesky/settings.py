"""Bluesky's settings: SOCIALPUB_BLUESKY_… (backend/networks/settings.py).

SOCIALPUB_BLUESKY_BASE_URL: the server that resolves handles and opens sessions when `--pds` is not given (the
entryway https://bsky.social); each account's own PDS then comes from its DID document. SOCIALPUB_BLUESKY_PLC_URL:
the PLC directory that holds did:plc documents (https://plc.directory). A PDS named by a DID document on a
loopback or private address is called only when it is the configured base (an operator's own test PDS)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from backend.networks.settings import NetworkSettings, base_url_alias, network_config


class BlueskySettings(NetworkSettings):
    model_config = network_config("bluesky")

    api_base: str = Field("https://bsky.social", validation_alias=base_url_alias("bluesky"))
    plc_url: str = "https://plc.directory"
    # SOCIALPUB_BLUESKY_SANDBOX_BLOB_LIMIT: the emulated PDS's blobUploadLimit (bytes; its default 5 MiB is the
    # reference PDS's), to try a server that takes only small files
    sandbox_blob_limit: int | None = Field(None, gt=0)

    def sandbox_options(self) -> dict[str, Any]:
        return {"blob_limit": self.sandbox_blob_limit} if self.sandbox_blob_limit is not None else {}

    def live_hosts(self) -> dict[str, str]:
        return {"api": self.api_base, "plc": self.plc_url}
