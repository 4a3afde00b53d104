"""Plans, their allowances and limits, and how the plan in force is derived from the subscription."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from backend.networks import registry


@dataclass(frozen=True)
class Plan:
    name: str
    monthly_credits: int
    max_accounts: int


# room for `init --sandbox`: one sandbox account per built-in network (adding a network's package makes room for it)
SANDBOX_ROOM = max(6, sum(1 for n in registry.networks() if n.builtin and n.emulator))

PLANS: dict[str, Plan] = {
    "FREE": Plan("FREE", 0, SANDBOX_ROOM),
    "STARTER": Plan("STARTER", 200, 10),
    "GROWTH": Plan("GROWTH", 1000, 50),
}

# Subscription states at the payment provider. In force until periodEnd: active, trialing, cancelled
# (a cancelled subscription keeps access until the end of the paid period). Not in force: the rest.
IN_FORCE_STATUSES = ("active", "trialing", "cancelled")
ALL_STATUSES = ("active", "trialing", "cancelled", "past_due", "on_hold", "paused", "expired")

CREDIT_COST = {"IMAGE": 2, "VIDEO": 15}
CLIP_COST = {"5": 15, "10": 30, "15": 45}
FREE_PUBLICATIONS = 3


def plan_in_force(
    subscribed: str | None, status: str | None, period_end: datetime | None, now: datetime
) -> str:
    """`plan.name`: the subscribed plan while its subscription is in force, else FREE."""
    if not subscribed or subscribed == "FREE" or status not in IN_FORCE_STATUSES:
        return "FREE"
    if period_end is not None and period_end <= now:
        return "FREE"
    return subscribed


def has_current_subscription(
    subscribed: str | None, status: str | None, period_end: datetime | None, now: datetime
) -> bool:
    return plan_in_force(subscribed, status, period_end, now) != "FREE"
