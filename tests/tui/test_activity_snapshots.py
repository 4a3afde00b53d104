"""How the activity screen looks (canned data): plan and credits, 30 days of outcomes plotted, the latest
failures; at 100x30 and 80x24. The webhooks panel (`w`) in their place, and beneath them in a tall terminal."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from tests.tui.canned import canned_app, ts

WORKSPACE = {
    "id": "ws_1",
    "name": "Brand",
    "description": "",
    "currency": "EUR",
    "logoUrl": "",
    "brand": {
        "targetAudience": "",
        "uniqueValueProp": "",
        "voiceTone": "",
        "contentTopics": [],
        "colors": [],
    },
    "plan": {
        "name": "STARTER",
        "subscribed": "STARTER",
        "status": "active",
        "periodEnd": ts(2027, 2, 1),
        "monthlyCredits": 200,
    },
    "credits": {"balance": 148, "cost": {"IMAGE": 2, "VIDEO": 15}, "clip": {"5": 15, "10": 30, "15": 45}},
    "freePublicationsLeft": 0,
    "createdAt": ts(2026, 6, 1),
}


def activity() -> dict[str, Any]:
    days = []
    first = date(2026, 12, 17)
    totals = {"completed": 0, "partial": 0, "failed": 0}
    targets_total = {"succeeded": 0, "inboxDelivered": 0, "failed": 0}
    for i in range(30):
        d = first + timedelta(days=i)
        completed = (i * 7) % 5 + (2 if d.weekday() < 5 else 0)
        partial = 1 if i % 6 == 0 else 0
        failed = 1 if i % 11 == 3 else 0
        posts = {"completed": completed, "partial": partial, "failed": failed}
        targets = {
            "succeeded": completed * 2 + partial,
            "inboxDelivered": 1 if i % 4 == 0 else 0,
            "failed": partial + failed * 2,
        }
        for k in totals:
            totals[k] += posts[k]
        for k in targets_total:
            targets_total[k] += targets[k]
        days.append(
            {
                "date": d.isoformat(),
                "start": f"{(d - timedelta(days=1)).isoformat()}T23:00:00.000Z",
                "end": f"{d.isoformat()}T23:00:00.000Z",
                "posts": posts,
                "targets": targets,
            }
        )
    done = sum(targets_total.values())
    return {
        "days": 30,
        "timezone": "Europe/Paris",
        "start": days[0]["start"],
        "end": days[-1]["end"],
        "perDay": days,
        "totals": {
            "posts": totals,
            "targets": targets_total,
            "successRate": (targets_total["succeeded"] + targets_total["inboxDelivered"]) / done,
        },
        "failures": [
            {
                "postId": "post_0193",
                "platform": "linkedin",
                "accountId": "acc_li",
                "accountName": "Brand LinkedIn",
                "failReason": "LinkedIn refused the post: the access token expired (reconnect the account)",
                "failType": "permanent",
                "completedAt": ts(2027, 1, 14, 16, 5),
            },
            {
                "postId": "post_0188",
                "platform": "tiktok",
                "accountId": "acc_tt",
                "accountName": "Creator TikTok",
                "failReason": "spam_risk_too_many_posts: the daily post cap was reached",
                "failType": "retriable",
                "completedAt": ts(2027, 1, 12, 9, 1),
            },
            {
                "postId": "post_0170",
                "platform": "instagram",
                "accountId": "acc_ig",
                "accountName": "Sandbox Instagram",
                "failReason": "media_unreadable: the image could not be fetched",
                "failType": "permanent",
                "completedAt": ts(2027, 1, 3, 18, 30),
            },
        ],
    }


def app() -> Any:
    return canned_app({("GET", "/v1/workspace"): WORKSPACE, ("GET", "/v1/activity"): activity()})


async def to_activity(pilot: Any) -> None:
    await pilot.press("f5")
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.parametrize("size", [pytest.param((100, 30), id="100x30"), pytest.param((80, 24), id="80x24")])
def test_activity(snap_compare, size):
    assert snap_compare(app(), terminal_size=size, run_before=to_activity)


def webhooks_app() -> Any:
    from tests.tui import webhooks_canned

    return canned_app(
        {("GET", "/v1/workspace"): WORKSPACE, ("GET", "/v1/activity"): activity()} | webhooks_canned.routes()
    )


async def to_webhooks(pilot: Any) -> None:
    await to_activity(pilot)
    await pilot.press("w")
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.mark.parametrize("size", [pytest.param((100, 30), id="100x30"), pytest.param((80, 24), id="80x24")])
def test_webhooks_panel(snap_compare, size):
    assert snap_compare(webhooks_app(), terminal_size=size, run_before=to_webhooks)


def test_webhooks_beneath_the_failures_in_a_tall_terminal(snap_compare):
    assert snap_compare(webhooks_app(), terminal_size=(140, 46), run_before=to_activity)
