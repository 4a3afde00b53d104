"""GET /v1/credits (extension): the credit balance and the ledger — each charge and refund of a generation, the
plan's grants, an operator's changes — newest first, a page at a time. Read-only; scope `workspace:read` (which
`publish:posts` and `media:write` imply), or an owner session."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from backend.api.deps import AuthContext, require_scope
from backend.api.errors import responses
from backend.schemas.common import CREDIT_CURSOR
from backend.schemas.credits import CreditHistory
from backend.services import credits
from backend.services import workspace as svc

router = APIRouter(tags=["credits"])


@router.get("/credits", operation_id="getCredits", response_model=CreditHistory, responses=responses())
def get_credits(
    ctx: AuthContext = Depends(require_scope("workspace:read")),
    limit: int = Query(20, ge=1, le=credits.MAX_HISTORY_LIMIT, description="page size (1-100)"),
    cursor: str | None = Query(
        None,
        max_length=200,
        json_schema_extra={"pattern": CREDIT_CURSOR},  # stated here; another shape: 400 invalid_cursor
        description="`nextCursor` of the previous page, as it came",
    ),
) -> dict[str, Any]:
    """The balance now and the ledger's entries, newest first: `amount` signed (a charge is negative),
    `reason` (charge, refund, grant, admin, opening), the generation concerned, the balance after each."""
    return svc.credit_history_public(ctx.workspace_id, limit=limit, cursor=cursor)
