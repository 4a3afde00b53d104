"""GET /v1/activity (extension): outcomes per local day and the latest failures, for dashboards (the TUI's
activity screen). Read-only; scope `workspace:read` (which `publish:posts` and `media:write` imply), or an
owner session."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from backend.api.deps import AuthContext, require_scope
from backend.api.errors import responses
from backend.schemas.activity import ActivityOut
from backend.services import activity as svc

router = APIRouter(tags=["activity"])


@router.get("/activity", operation_id="getActivity", response_model=ActivityOut, responses=responses())
def get_activity(
    ctx: AuthContext = Depends(require_scope("workspace:read")),
    days: int = Query(30, ge=1, le=svc.MAX_DAYS, description="local days counted, today included"),
    tz: str = Query(
        "UTC",
        min_length=1,
        max_length=64,
        description="IANA zone the days are local to, e.g. Europe/Paris: one of the enum, the zone database's "
        "names (400 invalid_timezone for another)",
        json_schema_extra={"enum": list(svc.zone_names())},
    ),
    failures: int = Query(
        20, ge=0, le=svc.MAX_FAILURES, description="how many of the latest failed targets to return"
    ),
) -> dict[str, Any]:
    """Per local day, the posts that finished (completed / partial / failed) and their targets by final status;
    totals with the success rate; the latest failed targets with failReason and failType, newest first."""
    return svc.activity(ctx.workspace_id, days=days, tz_name=tz, failures=failures)
