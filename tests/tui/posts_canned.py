"""Fixed posts for the posts screen's snapshots (canned backend): what goes out next, a post being sent, every
final status, a post to seven accounts, a long text. The clock is FIXED_NOW (2027-01-15 08:00 UTC, 09:00 in
Paris). GET /v1/posts answers them in `order=upcoming` order, filtered as the API filters."""

from __future__ import annotations

from typing import Any

import httpx

from tests.tui.canned import ts

ACCOUNTS = {
    "items": [
        {
            "id": f"acc_{p}",
            "platform": p,
            "name": f"Sandbox {p.title()}",
            "username": p,
            "kind": "sandbox",
            "status": "active",
            "isDefault": True,
            "behaviour": "ok",
            "connectedAt": ts(2027, 1, 1),
            "tokenExpiresAt": None,
        }
        for p in ("facebook", "instagram", "linkedin", "tiktok", "youtube")
    ],
    "limit": 50,
    "used": 5,
}


def target(platform: str, status: str, account: str | None = None) -> dict[str, Any]:
    failed = status == "failed"
    return {
        "platform": platform,
        "accountId": account or f"acc_{platform}",
        "accountName": f"Sandbox {platform}",
        "status": status,
        "externalPostId": None,
        "postUrl": None,
        "failReason": "the network refused the video" if failed else None,
        "failType": "permanent" if failed else None,
        "completedAt": None,
        "nextAttemptAt": None,
    }


def post(
    pid: str,
    status: str,
    content: str,
    targets: list[dict[str, Any]],
    *,
    scheduled: str | None = None,
    created: str,
) -> dict[str, Any]:
    return {
        "id": pid,
        "status": status,
        "scheduledAt": scheduled,
        "createdAt": created,
        "updatedAt": created,
        "content": content,
        "mediaUrls": [],
        "options": {},
        "idempotencyKey": None,
        "targets": targets,
    }


POSTS = [
    # scheduled, soonest first
    post(
        "post_s1",
        "scheduled",
        "Launch day: the new collection is live",
        [target("facebook", "pending"), target("instagram", "pending"), target("linkedin", "pending")],
        scheduled=ts(2027, 1, 15, 8, 3),
        created=ts(2027, 1, 10, 9),
    ),
    post(
        "post_s2",
        "scheduled",
        "Customer story: how Anna runs her bakery with socialpub, and what she learned "
        "about posting at the right time",
        [target("linkedin", "pending")],
        scheduled=ts(2027, 1, 15, 16, 0),
        created=ts(2027, 1, 10, 9, 5),
    ),
    post(
        "post_s3",
        "scheduled",
        "Weekend offer: 20% off everything in the shop (sale ends Sunday)",
        [target("facebook", "pending"), target("instagram", "pending"), target("tiktok", "pending")],
        scheduled=ts(2027, 1, 16, 9, 15),
        created=ts(2027, 1, 11, 14),
    ),
    post(
        "post_s4",
        "scheduled",
        "Live Q&A tonight at 19:00\nBring your questions!",
        [target("youtube", "pending"), target("facebook", "pending")],
        scheduled=ts(2027, 1, 20, 17, 45),
        created=ts(2027, 1, 12, 10),
    ),
    # the others, most recent first
    post(
        "post_p1",
        "processing",
        "Flash sale ends at noon",
        [target("facebook", "succeeded"), target("instagram", "publishing"), target("tiktok", "pending")],
        created=ts(2027, 1, 15, 7, 59),
    ),
    post(
        "post_c1",
        "completed",
        "Behind the scenes of the shoot",
        [target("tiktok", "succeeded"), target("instagram", "succeeded")],
        scheduled=ts(2027, 1, 14, 17, 0),
        created=ts(2027, 1, 9, 11),
    ),
    post(
        "post_pa",
        "partial",
        "New year, new menu: three dishes you asked for",
        [target("facebook", "succeeded"), target("instagram", "failed"), target("linkedin", "succeeded")],
        scheduled=ts(2027, 1, 14, 9, 0),
        created=ts(2027, 1, 8, 16),
    ),
    post(
        "post_f1",
        "failed",
        "Webinar replay is up",
        [target("youtube", "failed")],
        created=ts(2027, 1, 13, 12, 30),
    ),
    post(
        "post_x1",
        "cancelled",
        "Holiday opening hours",
        [target("facebook", "pending")],
        scheduled=ts(2027, 1, 12, 10, 0),
        created=ts(2027, 1, 2, 10),
    ),
    post(
        "post_m1",
        "completed",
        "Thank you for 10,000 followers!",
        [target(p, "succeeded") for p in ("facebook", "instagram", "linkedin", "tiktok", "youtube")]
        + [target("facebook", "succeeded", "acc_fb2"), target("linkedin", "succeeded", "acc_li2")],
        created=ts(2027, 1, 11, 8, 0),
    ),
    *[
        post(
            f"post_t{n:02d}",
            "completed",
            f"Daily tip #{40 - n}: plan a week of posts in ten minutes",
            [target("linkedin", "succeeded")],
            scheduled=ts(2027, 1, 10 - n // 2, 17 - 10 * (n % 2), 30),
            created=ts(2027, 1, 1, 9),
        )
        for n in range(14)
    ],
]


def _matches(p: dict[str, Any], params: httpx.QueryParams) -> bool:
    q = params.get("q")
    if q and q.casefold() not in p["content"].casefold():
        return False
    statuses = params.get_list("status")
    if statuses and p["status"] not in statuses:
        return False
    platform, account = params.get("platform"), params.get("accountId")
    if platform and not any(t["platform"] == platform for t in p["targets"]):
        return False
    return not account or any(t["accountId"] == account for t in p["targets"])


def list_posts(posts: list[dict[str, Any]]) -> Any:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.params.get("order") == "upcoming"
        items = [p for p in posts if _matches(p, request.url.params)]
        return httpx.Response(
            200, json={"items": items[: int(request.url.params.get("limit", 20))], "nextCursor": None}
        )

    return answer


def routes(posts: list[dict[str, Any]] = POSTS) -> dict[tuple[str, str], Any]:
    return {("GET", "/v1/posts"): list_posts(posts), ("GET", "/v1/accounts"): ACCOUNTS}
