"""Workspace: identity, brand, plan in force, credits and the monthly allowance."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from dateutil.relativedelta import relativedelta

from backend import clock
from backend.errors import ApiError
from backend.services import credits, cursors, plans
from backend.store.db import locked, tx
from backend.store.models import CreditEntry, Workspace

# The names socialpub gives a workspace when none is chosen (`socialpub init`'s default, `make run`'s): not a brand,
# so the local renderer leaves them out of a design (backend/services/generations.py `_brand`).
PLACEHOLDER_NAMES = ("My workspace", "Local workspace")

BRAND_DEFAULTS: dict[str, Any] = {
    "targetAudience": "",
    "uniqueValueProp": "",
    "voiceTone": "",
    "contentTopics": [],
    "colors": [],
}


def get(workspace_id: str) -> Workspace:
    ws = Workspace.get_or_none(Workspace.id == workspace_id)
    if ws is None:
        raise ApiError(404, "workspace_not_found", "workspace not found")
    return ws


def refresh_allowance(ws: Workspace, now: datetime | None = None) -> Workspace:
    """Grant the monthly allowance of the plan in force, once per month since the last grant.

    Unused credits carry over while the subscription is in force (the balance is never reset here). Each grant is
    a `grant` entry of the credit ledger (backend/services/credits.py).
    """
    now = now or clock.now()
    name = plans.plan_in_force(ws.plan_subscribed, ws.plan_status, ws.plan_period_end, now)
    monthly = plans.PLANS[name].monthly_credits
    if monthly <= 0:
        return ws
    due = ws.credits_granted_at is None or ws.credits_granted_at + relativedelta(months=1) <= now
    if not due:
        return ws
    with tx():
        fresh = locked(Workspace.select().where(Workspace.id == ws.id)).get()
        if fresh.credits_granted_at is not None and fresh.credits_granted_at + relativedelta(months=1) > now:
            return fresh
        grants = 0
        at = fresh.credits_granted_at
        if at is None:
            grants, at = 1, now
        else:
            while at + relativedelta(months=1) <= now and grants < 12:
                at = at + relativedelta(months=1)
                grants += 1
        Workspace.update(credits_granted_at=at).where(Workspace.id == ws.id).execute()
        credits.grant(ws.id, monthly * grants, f"{name}: {grants} x {monthly} monthly credits")
    return get(ws.id)


def to_public(ws: Workspace, now: datetime | None = None) -> dict[str, Any]:
    now = now or clock.now()
    name = plans.plan_in_force(ws.plan_subscribed, ws.plan_status, ws.plan_period_end, now)
    brand = {**BRAND_DEFAULTS, **(ws.brand or {})}
    return {
        "id": ws.id,
        "name": ws.name,
        "description": ws.description,
        "currency": ws.currency,
        "logoUrl": ws.logo_url,
        "brand": brand,
        "plan": {
            "name": name,
            "subscribed": ws.plan_subscribed or "FREE",
            "status": ws.plan_status,
            "periodEnd": clock.iso(ws.plan_period_end),
            "monthlyCredits": plans.PLANS[name].monthly_credits,
        },
        "credits": {
            "balance": ws.credits_balance,
            "cost": dict(plans.CREDIT_COST),
            "clip": dict(plans.CLIP_COST),
        },
        "freePublicationsLeft": max(0, plans.FREE_PUBLICATIONS - ws.free_posts_used),
        "createdAt": clock.iso(ws.created_at),
    }


_CURRENCY = re.compile(r"^[A-Z]{3}$")


def edit(workspace_id: str, changes: dict[str, Any]) -> Workspace:
    """Apply a PATCH: name, description, currency, logoUrl, brand (merged field by field)."""
    with tx():
        ws = get(workspace_id)
        for field in ("name", "currency"):
            if field in changes and changes[field] is None:
                raise ApiError(
                    400,
                    "validation_error",
                    f"{field} cannot be null",
                    [{"field": field, "error": "null", "message": f"{field} cannot be null"}],
                )
        if "name" in changes:
            if not str(changes["name"]).strip():
                raise ApiError(
                    400,
                    "validation_error",
                    "name must not be empty",
                    [{"field": "name", "error": "empty", "message": "name must not be empty"}],
                )
            ws.name = changes["name"].strip()
        if "description" in changes:
            ws.description = changes["description"] or ""
        if "currency" in changes:
            cur = str(changes["currency"]).upper()
            if not _CURRENCY.match(cur):
                raise ApiError(
                    400,
                    "validation_error",
                    "currency must be a 3-letter ISO 4217 code",
                    [{"field": "currency", "error": "invalid", "message": "expected e.g. EUR or USD"}],
                )
            ws.currency = cur
        if "logo_url" in changes:
            ws.logo_url = changes["logo_url"] or ""
        if "brand" in changes and changes["brand"] is not None:
            brand = {**BRAND_DEFAULTS, **(ws.brand or {})}
            brand.update({k: v for k, v in changes["brand"].items() if v is not None})
            ws.brand = brand
        if ws.dirty_fields:  # only what changed: never the balance read above (the credit ledger owns it)
            ws.save(only=ws.dirty_fields)
    return ws


def set_plan(workspace_id: str, name: str, status: str | None, period_end: datetime | None) -> Workspace:
    name = name.upper()
    if name not in plans.PLANS:
        raise ValueError(f"unknown plan {name!r}: one of {', '.join(plans.PLANS)}")
    if status is not None and status not in plans.ALL_STATUSES:
        raise ValueError(f"unknown status {status!r}: one of {', '.join(plans.ALL_STATUSES)}")
    with tx():
        ws = get(workspace_id)
        if name == "FREE":
            ws.plan_subscribed, ws.plan_status, ws.plan_period_end = None, None, None
        else:
            ws.plan_subscribed = name
            ws.plan_status = status or "active"
            ws.plan_period_end = period_end
        ws.save(only=[Workspace.plan_subscribed, Workspace.plan_status, Workspace.plan_period_end])
    return refresh_allowance(get(workspace_id))


def set_credits(workspace_id: str, *, set_to: int | None = None, add: int | None = None) -> Workspace:
    """An operator's change of the balance (`socialpub admin credits`): one `admin` entry of the credit ledger."""
    get(workspace_id)
    credits.adjust(workspace_id, set_to=set_to, add=add)
    return get(workspace_id)


def credit_history_public(workspace_id: str, *, limit: int = 20, cursor: str | None = None) -> dict[str, Any]:
    """GET /v1/credits: the balance (a due grant made first), and the ledger's entries newest first, a page at a
    time (the ledger itself is backend.services.credits)."""
    limit = max(1, min(limit, credits.MAX_HISTORY_LIMIT))
    ws = refresh_allowance(get(workspace_id))  # a due grant shows at once
    q = CreditEntry.select().where(CreditEntry.workspace == workspace_id)
    if cursor is not None:  # "" too: an empty cursor is not one this API gave
        q = q.where(CreditEntry.id < cursors.decode(cursor, "c1", "cre", "GET /v1/credits"))
    rows = list(q.order_by(CreditEntry.id.desc()).limit(limit + 1))
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "balance": int(ws.credits_balance),
        "items": [
            {
                "id": r.id,
                "at": clock.iso(r.created_at),
                "amount": r.amount,
                "reason": r.reason,
                "generationId": r.generation_id,
                "note": r.note or "",
                "balanceAfter": r.balance_after,
            }
            for r in rows
        ],
        "nextCursor": cursors.encode("c1", rows[-1].id) if more and rows else None,
    }
