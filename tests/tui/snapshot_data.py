"""Fixed posts, accounts and media for the detail and compose snapshots (canned backend, tests/tui/canned.py)."""

from __future__ import annotations

import io
from typing import Any

import httpx

from tests.tui.canned import ts

MEDIA_URL = "http://canned.socialpub/media/med_photo.jpg"


def account(
    aid: str, platform: str, name: str, default: bool = True, status: str = "active"
) -> dict[str, Any]:
    return {
        "id": aid,
        "platform": platform,
        "name": name,
        "username": name.lower().replace(" ", "_"),
        "kind": "sandbox",
        "status": status,
        "isDefault": default,
        "behaviour": "ok",
        "connectedAt": ts(2027, 1, 2),
        "tokenExpiresAt": None,
    }


ACCOUNTS = {
    "items": [
        account("acc_fb", "facebook", "Acme Page"),
        account("acc_ig", "instagram", "Acme IG"),
        account("acc_li", "linkedin", "Acme Corp"),
        account("acc_li2", "linkedin", "Jane Doe", False),
        account("acc_tt", "tiktok", "acme.tt"),
        account("acc_yt", "youtube", "Acme TV"),
    ],
    "limit": 10,
    "used": 6,
}


def target(platform: str, account_id: str, name: str, status: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "platform": platform,
        "accountId": account_id,
        "accountName": name,
        "status": status,
        "externalPostId": None,
        "postUrl": None,
        "failReason": None,
        "failType": None,
        "completedAt": None,
        "nextAttemptAt": None,
    }
    return base | extra


def post(
    pid: str,
    status: str,
    targets: list[dict[str, Any]],
    *,
    scheduled: str | None = None,
    content: str = "Spring collection is live!\nShop the new colours at acme.example",
    media: list[str] | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": pid,
        "status": status,
        "scheduledAt": scheduled,
        "createdAt": ts(2027, 1, 15, 7, 30),
        "updatedAt": ts(2027, 1, 15, 7, 31),
        "content": content,
        "mediaUrls": [MEDIA_URL] if media is None else media,
        "options": options or {},
        "idempotencyKey": None,
        "targets": targets,
    }


PARTIAL = post(
    "post_partial",
    "partial",
    [
        target(
            "facebook",
            "acc_fb",
            "Acme Page",
            "succeeded",
            externalPostId="1509_1410",
            postUrl="https://www.facebook.com/1509/posts/1410",
            completedAt=ts(2027, 1, 15, 7, 31),
        ),
        target(
            "instagram",
            "acc_ig",
            "Acme IG",
            "failed",
            failType="retriable",
            failReason="Instagram is temporarily unavailable (code 2); gave up after 5 attempts",
            completedAt=ts(2027, 1, 15, 7, 40),
        ),
        target(
            "linkedin",
            "acc_li",
            "Acme Corp",
            "failed",
            failType="permanent",
            failReason="the access token was revoked: reconnect the account",
            completedAt=ts(2027, 1, 15, 7, 31),
        ),
    ],
)

SCHEDULED = post(
    "post_sched",
    "scheduled",
    [
        target("facebook", "acc_fb", "Acme Page", "pending"),
        target("linkedin", "acc_li", "Acme Corp", "pending"),
    ],
    scheduled=ts(2027, 1, 16, 8, 0),
    media=[],
)

# cancelled before its time: its targets keep the API's `pending` (spec 3.2 has no cancelled target)
CANCELLED = post(
    "post_cancelled",
    "cancelled",
    [
        target("facebook", "acc_fb", "Acme Page", "pending"),
        target("linkedin", "acc_li", "Acme Corp", "pending"),
    ],
    scheduled=ts(2027, 1, 16, 8, 0),
    media=[],
)


def photo_bytes() -> bytes:
    """A 96×64 picture with four colour bands, so the preview shows something recognisable."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (96, 64), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    for i, colour in enumerate([(220, 50, 47), (38, 139, 210), (133, 153, 0), (181, 137, 0)]):
        draw.rectangle([i * 24, 0, i * 24 + 23, 63], fill=colour)
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def media_answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=photo_bytes(), headers={"content-type": "image/jpeg"})


def routes(*posts: dict[str, Any]) -> dict[tuple[str, str], Any]:
    table: dict[tuple[str, str], Any] = {
        ("GET", "/v1/accounts"): ACCOUNTS,
        ("GET", "/media/med_photo.jpg"): media_answer,
    }
    for p in posts:
        table[("GET", f"/v1/posts/{p['id']}")] = p
    return table
