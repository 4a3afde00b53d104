# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""GET /v1/posts (extension): newest first, cursor pagination, filters; workspace isolation."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.services import accounts as accounts_service
from backend.services import workspace as ws_service
from backend.store.models import Post
from tests.api.posts_support import VID, fast, future, post, remote_media, sandbox  # noqa: F401
from tests.conftest import key_headers

pytestmark = pytest.mark.usefixtures(
    "fast", "remote_media", "audited_tiktok"
)  # (its TikTok posts are public)


@pytest.fixture(autouse=True)
def subscribed(owner):  # type: ignore[no-untyped-def]
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))


def listing(client, owner, **params):  # type: ignore[no-untyped-def]
    r = client.get("/v1/posts", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    return r.json()


def ids(page) -> list[str]:  # type: ignore[no-untyped-def]
    return [p["id"] for p in page["items"]]


def test_newest_first_and_cursor_pages_cover_everything_once(client, owner, sandbox):
    made = [
        post(client, owner, 202, targets=["facebook"], content=f"post {i}").json()["id"] for i in range(7)
    ]
    seen: list[str] = []
    page = listing(client, owner, limit=3)
    pages = 0
    while True:
        pages += 1
        seen += ids(page)
        assert len(page["items"]) <= 3
        if page["nextCursor"] is None:
            break
        page = listing(client, owner, limit=3, cursor=page["nextCursor"])
    assert seen == list(reversed(made)) and pages == 3
    # the items are full post objects, targets included
    assert listing(client, owner, limit=1)["items"][0]["targets"][0]["platform"] == "facebook"


def test_new_posts_do_not_shift_pages(client, owner, sandbox):
    made = [post(client, owner, 202, targets=["facebook"]).json()["id"] for _ in range(4)]
    first = listing(client, owner, limit=2)
    post(client, owner, 202, targets=["facebook"])  # arrives between two page reads
    second = listing(client, owner, limit=2, cursor=first["nextCursor"])
    assert ids(first) + ids(second) == list(reversed(made))


def test_filters(settings, client, owner, sandbox):
    second_tiktok = accounts_service.connect_sandbox(settings, owner.workspace_id, "tiktok", "Second")
    a = post(client, owner, 202, targets=["facebook"], idempotencyKey="alpha").json()
    b = post(
        client,
        owner,
        202,
        targets=["tiktok", "linkedin"],
        mediaUrls=[VID.format(1)],
        scheduledAt=future(days=3),
    ).json()
    c = post(
        client,
        owner,
        202,
        targets=[{"platform": "tiktok", "channelId": second_tiktok.id}],
        mediaUrls=[VID.format(1)],
        scheduledAt=future(days=10),
    ).json()
    client.delete(f"/v1/posts/{c['id']}", headers=key_headers(owner.api_key))
    assert ids(listing(client, owner, status="scheduled")) == [b["id"]]
    assert ids(listing(client, owner, status=["scheduled", "cancelled"])) == [c["id"], b["id"]]
    assert ids(listing(client, owner, status="processing")) == [a["id"]]
    assert ids(listing(client, owner, platform="tiktok")) == [c["id"], b["id"]]
    assert ids(listing(client, owner, platform="linkedin")) == [b["id"]]
    assert ids(listing(client, owner, accountId=second_tiktok.id)) == [c["id"]]
    assert ids(listing(client, owner, accountId=sandbox["tiktok"]["id"], platform="tiktok")) == [b["id"]]
    assert ids(listing(client, owner, idempotencyKey="alpha")) == [a["id"]]
    assert ids(listing(client, owner, idempotencyKey="nope")) == []
    # time range on scheduledAt: from inclusive, to exclusive
    assert ids(
        listing(client, owner, timeField="scheduledAt", **{"from": future(days=2), "to": future(days=5)})
    ) == [b["id"]]
    assert ids(listing(client, owner, timeField="scheduledAt", **{"from": future(days=5)})) == [c["id"]]


def test_created_at_range(client, owner, sandbox):
    start = clock.now()
    with time_machine.travel(start - timedelta(days=10), tick=False):
        old = post(client, owner, 202, targets=["facebook"]).json()
    new = post(client, owner, 202, targets=["facebook"]).json()
    assert ids(listing(client, owner, **{"from": clock.iso(start - timedelta(days=1))})) == [new["id"]]
    assert ids(listing(client, owner, to=clock.iso(start - timedelta(days=1)))) == [old["id"]]
    assert Post.select().count() == 2


@pytest.mark.parametrize(
    "params,code",
    [
        ({"cursor": "garbage!!"}, "invalid_cursor"),  # not the cursor's shape (the document states it)
        ({"cursor": "djE6eHh4"}, "invalid_cursor"),  # a cursor of the versions before (base64): no more
        ({"from": "2030-01-01T00:00:00"}, "invalid_timestamp"),
        ({"to": "yesterday"}, "invalid_timestamp"),
        ({"status": "published"}, "validation_error"),
        ({"platform": "myspace"}, "validation_error"),
        ({"limit": 0}, "validation_error"),
        ({"limit": 101}, "validation_error"),
        ({"timeField": "updatedAt"}, "validation_error"),
    ],
)
def test_bad_parameters_400(client, owner, params, code):
    r = client.get("/v1/posts", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == code


def test_empty_and_isolated(client, owner, other_owner, sandbox):
    post(client, owner, 202, targets=["facebook"])
    assert listing(client, other_owner) == {"items": [], "nextCursor": None}
