"""What the sandbox networks published: GET /v1/sandbox/published (a socialpub extension)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from backend.schemas.common import CamelOut, NetworkName, Timestamp


class SandboxPublication(CamelOut):
    platform: NetworkName
    account_id: str | None = Field(description="the connected account (GET /v1/accounts) that published it")
    account_name: str | None
    external_id: str | None = Field(description="the publication's id at the (emulated) network")
    url: str | None = Field(description="public link, when the network gives one (not for drafts)")
    status: str = Field(description="`published`, or `inbox` for a draft delivered to the creator's inbox")
    kind: str | None = None
    text: str | None = None
    title: str | None = None
    media: list[Any] = Field(default_factory=list)
    created_at: Timestamp


class SandboxPublishedList(CamelOut):
    items: list[SandboxPublication]
