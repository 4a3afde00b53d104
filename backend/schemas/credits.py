"""GET /v1/credits (a socialpub extension): the workspace's credit balance and its ledger — every charge, refund,
grant and operator change, newest first (backend/services/credits.py). Pure pydantic (the client imports it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schemas.common import CREDIT_CURSOR, CamelOut, Timestamp


class CreditEntryOut(CamelOut):
    id: str
    at: Timestamp = Field(description="when the movement was written")
    amount: int = Field(description="signed: a charge is negative, a refund or a grant positive")
    reason: Literal["opening", "grant", "admin", "charge", "refund"] = Field(
        description="`charge` (a generation accepted), `refund` (a generation failed, or deleted before it "
        "started), `grant` (the plan's monthly allowance), `admin` (an operator's change), `opening` "
        "(the balance when the ledger was introduced)"
    )
    generation_id: str | None = Field(description="the generation charged or refunded; null otherwise")
    note: str = Field(description="a short explanation; may be empty")
    balance_after: int = Field(description="the balance once this movement was written")


class CreditHistory(CamelOut):
    balance: int = Field(description="the workspace's balance now")
    items: list[CreditEntryOut] = Field(description="newest first")
    next_cursor: str | None = Field(
        json_schema_extra={"pattern": CREDIT_CURSOR},
        description="pass as `cursor` for the next (older) page; null at the end",
    )
