"""How the calendar looks (canned data: the same pixels every run): the week, the month grid, a post being moved,
a DST week; at 100x30 and at 80x24. Review a changed picture by eye before accepting it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.tui.canned import canned_app, ts


def post(pid: str, at: str, content: str, platforms: tuple[str, ...] = ("facebook",)) -> dict[str, Any]:
    return {
        "id": pid,
        "status": "scheduled",
        "scheduledAt": at,
        "createdAt": ts(2027, 1, 10, 9),
        "updatedAt": ts(2027, 1, 10, 9),
        "content": content,
        "mediaUrls": [],
        "options": {},
        "idempotencyKey": None,
        "targets": [
            {
                "platform": p,
                "accountId": f"acc_{p}",
                "accountName": f"Sandbox {p}",
                "status": "pending",
                "externalPostId": None,
                "postUrl": None,
                "failReason": None,
                "failType": None,
                "completedAt": None,
            }
            for p in platforms
        ],
    }


POSTS = [
    post(
        "post_01", ts(2027, 1, 15, 9, 0), "Launch day: the new collection is live", ("facebook", "instagram")
    ),
    post("post_02", ts(2027, 1, 15, 9, 30), "Behind the scenes of the shoot", ("tiktok",)),
    post("post_03", ts(2027, 1, 15, 16, 0), "Customer story: how Anna uses it", ("linkedin",)),
    post("post_04", ts(2027, 1, 16, 10, 15), "Weekend offer, 20% off", ("facebook", "instagram", "tiktok")),
    post("post_05", ts(2027, 1, 18, 7, 0), "Monday tip: plan your week", ("linkedin",)),
    post("post_06", ts(2027, 1, 20, 17, 45), "Live Q&A tonight at 19:00", ("youtube", "facebook")),
    post("post_07", ts(2027, 1, 27, 11, 0), "End of month recap", ("linkedin", "facebook")),
    post("post_08", ts(2027, 3, 28, 0, 30), "Before the clocks change", ("facebook",)),
    post("post_09", ts(2027, 3, 28, 1, 30), "After the clocks changed", ("instagram",)),
]


def _in_range(request: httpx.Request) -> httpx.Response:
    if "from" not in request.url.params:  # the posts screen's list (the home screen, under the calendar)
        return httpx.Response(200, json={"items": [], "nextCursor": None})
    start = datetime.fromisoformat(request.url.params["from"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(request.url.params["to"].replace("Z", "+00:00"))
    items = [
        p
        for p in POSTS
        if start <= datetime.fromisoformat(p["scheduledAt"].replace("Z", "+00:00")).astimezone(UTC) < end
    ]
    return httpx.Response(200, json={"items": items, "nextCursor": None})


def app(now: datetime | None = None) -> Any:
    kwargs = {"now": now} if now else {}
    return canned_app({("GET", "/v1/posts"): _in_range}, **kwargs)


async def to_calendar(pilot: Any, *keys: str) -> None:
    await pilot.press("f3")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    if keys:
        await pilot.press(*keys)
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


SIZES = [pytest.param((100, 30), id="100x30"), pytest.param((80, 24), id="80x24")]


@pytest.mark.parametrize("size", SIZES)
def test_week(snap_compare, size):
    assert snap_compare(app(), terminal_size=size, run_before=to_calendar)


@pytest.mark.parametrize("size", SIZES)
def test_month(snap_compare, size):
    assert snap_compare(app(), terminal_size=size, run_before=lambda p: to_calendar(p, "v"))


@pytest.mark.parametrize("size", SIZES)
def test_moving_a_post(snap_compare, size):
    # the cursor starts at 09:00 Paris (FIXED_NOW); down to 10:00 where two posts are, pick the second, move it
    assert snap_compare(
        app(),
        terminal_size=size,
        run_before=lambda p: to_calendar(p, "down", "right_square_bracket", "m", "down", "right"),
    )


def test_dst_week(snap_compare):
    now = datetime(2027, 3, 25, 8, 0, tzinfo=UTC)
    assert snap_compare(
        app(now),
        terminal_size=(100, 30),
        run_before=lambda p: to_calendar(p, "right", "right", "right", *["up"] * 8),
    )
