# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""GET /v1/posts (extension, issue 13): `order=upcoming` (scheduled posts soonest first, then the others most
recent first, by due time), its cursor, `timeField=dueAt`, and the text search `q`."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.services import workspace as ws_service
from tests.api.posts_support import fast, future, post, remote_media, sandbox  # noqa: F401
from tests.conftest import key_headers

pytestmark = pytest.mark.usefixtures("fast", "remote_media")


@pytest.fixture(autouse=True)
def subscribed(owner):  # type: ignore[no-untyped-def]
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))


def listing(client, owner, **params):  # type: ignore[no-untyped-def]
    r = client.get("/v1/posts", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == 200, r.text
    return r.json()


def ids(page) -> list[str]:  # type: ignore[no-untyped-def]
    return [p["id"] for p in page["items"]]


def walk(client, owner, limit: int, cursor: str | None = None, **params) -> list[str]:  # type: ignore[no-untyped-def]
    """Every id, page by page (from `cursor`)."""
    seen: list[str] = []
    while True:
        page = listing(client, owner, limit=limit, **params, **({"cursor": cursor} if cursor else {}))
        assert len(page["items"]) <= limit
        seen += ids(page)
        cursor = page["nextCursor"]
        if cursor is None:
            return seen


@pytest.fixture
def mix(client, owner, sandbox):  # type: ignore[no-untyped-def]
    """Two posts sent at once (a day apart), three scheduled (in 1, 2 and 3 days), the one in 2 days cancelled."""
    start = clock.now()
    with time_machine.travel(start - timedelta(days=1), tick=False):
        old = post(client, owner, 202, targets=["facebook"], content="Old news").json()
    new = post(client, owner, 202, targets=["facebook"], content="Fresh news").json()
    in3 = post(
        client, owner, 202, targets=["linkedin"], content="In three days", scheduledAt=future(days=3)
    ).json()
    in1 = post(
        client, owner, 202, targets=["linkedin"], content="Tomorrow", scheduledAt=future(days=1)
    ).json()
    in2 = post(
        client, owner, 202, targets=["facebook"], content="Called off", scheduledAt=future(days=2)
    ).json()
    assert client.delete(f"/v1/posts/{in2['id']}", headers=key_headers(owner.api_key)).status_code == 204
    return {"old": old["id"], "new": new["id"], "in1": in1["id"], "in2": in2["id"], "in3": in3["id"]}


def test_upcoming_scheduled_soonest_first_then_the_rest_most_recent_first(client, owner, mix):
    # the cancelled post is no longer due: it sorts with the rest, by its due time (in 2 days: the most recent)
    expected = [mix["in1"], mix["in3"], mix["in2"], mix["new"], mix["old"]]
    assert ids(listing(client, owner, order="upcoming")) == expected
    for limit in (1, 2, 3):  # pages that end inside, at and after the end of the scheduled section
        assert walk(client, owner, limit, order="upcoming") == expected
    # the default order is unchanged: creation order, newest first
    assert ids(listing(client, owner)) == [mix["in2"], mix["in1"], mix["in3"], mix["new"], mix["old"]]
    assert ids(listing(client, owner, order="newest")) == ids(listing(client, owner))


def test_upcoming_with_filters(client, owner, mix):
    assert ids(listing(client, owner, order="upcoming", status="scheduled")) == [mix["in1"], mix["in3"]]
    assert ids(listing(client, owner, order="upcoming", status=["cancelled", "processing"])) == [
        mix["in2"],
        mix["new"],
        mix["old"],
    ]
    assert walk(client, owner, 1, order="upcoming", platform="linkedin") == [mix["in1"], mix["in3"]]
    assert walk(client, owner, 1, order="upcoming", status="scheduled") == [mix["in1"], mix["in3"]]


def test_a_page_read_later_continues_where_the_cursor_stood(client, owner, mix):
    first = listing(client, owner, order="upcoming", limit=2)
    assert ids(first) == [mix["in1"], mix["in3"]]
    soon = post(
        client, owner, 202, targets=["facebook"], scheduledAt=future(hours=1)
    ).json()  # before the cursor
    later = post(
        client, owner, 202, targets=["facebook"], content="After"
    ).json()  # after it: on the next page
    rest = walk(client, owner, 2, order="upcoming", cursor=first["nextCursor"])
    assert soon["id"] not in rest
    assert rest == [mix["in2"], later["id"], mix["new"], mix["old"]]


def test_a_cursor_is_a_position_that_any_string_of_its_pattern_names(client, owner, mix):
    """Issue 30 item 9: the document states the cursor's exact pattern, so every string it allows is taken: a
    cursor is a position (section, due time, post id) that both orders read; one the API did not give (a forged
    id, a due time past the dates the store holds) pages from where it points; another shape is invalid_cursor."""
    import re

    h = key_headers(owner.api_key)
    newest = listing(client, owner, limit=1)["nextCursor"]
    upcoming = listing(client, owner, limit=1, order="upcoming")["nextCursor"]
    pattern = client.get("/openapi.json").json()["components"]["schemas"]["PostList"]["properties"][
        "nextCursor"
    ]
    for cursor in (newest, upcoming):
        assert re.fullmatch(pattern["pattern"], cursor)
    for params in (
        {"order": "upcoming", "cursor": newest},
        {"cursor": upcoming},
        {"order": "newest", "cursor": upcoming},
        {"order": "upcoming", "cursor": "p1.s.999999999999999999.post_00000000000000000000000000"},
        {"cursor": "p1.r.-999999999999999999.post_zzzzzzzzzzzzzzzzzzzzzzzzzz"},
    ):
        r = client.get("/v1/posts", params=params, headers=h)
        assert r.status_code == 200, (params, r.text)
    r = client.get("/v1/posts", params={"cursor": "p1.x.1.post_x"}, headers=h)
    assert r.status_code == 400 and r.json()["error"] == "invalid_cursor"


def test_due_at_range_covers_scheduled_and_immediate_posts(client, owner, mix):
    window = {
        "timeField": "dueAt",
        "from": clock.iso(clock.now() - timedelta(hours=1)),
        "to": future(days=2, hours=1),
    }
    assert ids(listing(client, owner, order="upcoming", **window)) == [mix["in1"], mix["in2"], mix["new"]]
    # scheduledAt leaves immediate posts out; createdAt ignores when a post is due
    assert ids(listing(client, owner, **(window | {"timeField": "scheduledAt"}))) == [mix["in2"], mix["in1"]]


def test_q_folds_case_fully_and_follows_an_edit(client, owner, sandbox):
    """The same full case folding on SQLite and PostgreSQL (Python's casefold, stored with the text): `STRASSE`
    finds `Straße` (PostgreSQL's ILIKE would not); an edit of the text is what the search then sees."""
    h = key_headers(owner.api_key)
    straße = post(client, owner, 202, targets=["facebook"], content="Große Straße").json()["id"]
    assert ids(listing(client, owner, q="STRASSE")) == [straße]
    assert ids(listing(client, owner, q="straße")) == [straße]
    later = post(
        client, owner, 202, targets=["facebook"], content="Autumn menu", scheduledAt=future(days=3)
    ).json()["id"]
    assert ids(listing(client, owner, q="AUTUMN")) == [later]
    r = client.patch(f"/v1/posts/{later}", json={"content": "Winter MENU"}, headers=h)
    assert r.status_code == 200, r.text
    assert ids(listing(client, owner, q="autumn")) == []
    assert ids(listing(client, owner, q="winter menu")) == [later]


def test_q_is_a_case_insensitive_substring_of_the_text(client, owner, sandbox):
    made = {
        text: post(client, owner, 202, targets=["facebook"], content=text).json()["id"]
        for text in ("Été à PARIS", "100% off_today", "Spring sale", "Summer Sale\nsecond line")
    }
    assert set(ids(listing(client, owner, q="sale"))) == {
        made["Spring sale"],
        made["Summer Sale\nsecond line"],
    }
    assert ids(listing(client, owner, q="SPRING")) == [made["Spring sale"]]
    assert ids(listing(client, owner, q="été à paris")) == [made["Été à PARIS"]]  # beyond ASCII
    assert ids(listing(client, owner, q="ÉTÉ")) == [made["Été à PARIS"]]
    assert ids(listing(client, owner, q="0%")) == [made["100% off_today"]]  # % and _ are taken literally
    assert ids(listing(client, owner, q="f_t")) == [made["100% off_today"]]
    assert ids(listing(client, owner, q="%")) == [made["100% off_today"]]
    assert ids(listing(client, owner, q="_")) == [made["100% off_today"]]
    assert ids(listing(client, owner, q="line\nsecond")) == []
    assert ids(listing(client, owner, q="sale\nsecond")) == [made["Summer Sale\nsecond line"]]
    assert ids(listing(client, owner, q="sale", order="upcoming", limit=1, status="processing"))[0] in (
        made["Spring sale"],
        made["Summer Sale\nsecond line"],
    )
    assert walk(client, owner, 1, q="sale", order="upcoming") == [
        made["Summer Sale\nsecond line"],
        made["Spring sale"],
    ]
    assert ids(listing(client, owner, q="")) == ids(listing(client, owner))  # empty: no search


@pytest.mark.parametrize(
    "params,code",
    [
        ({"q": "x" * 201}, "validation_error"),
        ({"q": "a\x00b"}, "validation_error"),
        ({"order": "oldest"}, "validation_error"),
        ({"timeField": "sentAt"}, "validation_error"),
        (
            {"order": "upcoming", "cursor": "dTE6eDoxOnBvc3RfeA"},
            "invalid_cursor",
        ),  # u1:x:1:post_x: no such section
        ({"order": "upcoming", "cursor": "djE6eHh4"}, "invalid_cursor"),
    ],
)
def test_bad_parameters_400(client, owner, params, code):
    r = client.get("/v1/posts", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == 400 and r.json()["error"] == code, r.text


def test_the_document_states_the_new_parameters(client):
    doc = client.get("/openapi.json").json()
    params = {p["name"]: p for p in doc["paths"]["/v1/posts"]["get"]["parameters"]}
    assert params["order"]["schema"]["enum"] == ["newest", "upcoming"]
    assert params["order"]["schema"]["default"] == "newest"
    assert params["q"]["schema"]["anyOf"][0]["maxLength"] == 200
    assert params["timeField"]["schema"]["enum"] == ["createdAt", "scheduledAt", "dueAt"]
