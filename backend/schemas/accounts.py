"""Connected accounts (spec 2.7, 4.7) and the session-authenticated POST /v1/accounts extension."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schemas.common import CamelModel, CamelOut, Network, Timestamp

Platform = Network
SandboxBehaviour = Literal["ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky"]


class AccountOut(CamelOut):
    id: str = Field(description="use as `channelId` in POST /v1/posts targets; `accountId` of post targets")
    platform: Network
    name: str = Field(description="display name at the network")
    username: str
    kind: Literal["sandbox", "live"] = Field(description="`sandbox` (emulated network) or `live`")
    status: Literal["active", "needs_reauth", "disconnected"] = Field(description="`active`, `needs_reauth` (reconnect it) or `disconnected`")
    is_default: bool = Field(description="the account a plain network name in `targets` reaches: the oldest "
                                         "connected active account of its network")
    behaviour: str | None = Field(description="sandbox accounts only: how the emulated network answers")
    connected_at: Timestamp
    token_expires_at: Timestamp | None
    token_warning: str | None = Field(default=None, description="live accounts: what needs doing about the "
                                      "account's authorisation, e.g. `token expires in 3 days: reconnect with "
                                      "socialpub accounts connect facebook` (a token that cannot be refreshed, "
                                      "within SOCIALPUB_TOKEN_WARNING_DAYS of its expiry) or that it must be "
                                      "reconnected (needs_reauth); null when all is well. An extension.")


class AccountList(CamelOut):
    items: list[AccountOut]
    limit: int = Field(description="how many accounts the workspace's plan allows connected at once")
    used: int = Field(description="accounts counted against the limit (every account not disconnected)")


class AccountCreate(CamelModel):
    """Connect a sandbox account (a live network connection needs OAuth and comes with the live adapters)."""

    platform: Platform
    name: str = Field(min_length=1, max_length=200, description="display name of the account")
    kind: Literal["sandbox"] = "sandbox"
    behaviour: SandboxBehaviour = "ok"
