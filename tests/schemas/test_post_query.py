"""PostQuery: the post list's filters and paging, one model from the query string to the client."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from backend.schemas.posts import PostQuery
from socialpub_tui.client import Client
from socialpub_tui.client.calls import post_query


def test_the_wire_names_and_the_python_names_read_the_same_query() -> None:
    wire = PostQuery.model_validate(
        {"from": "2027-01-01T00:00:00Z", "timeField": "dueAt", "accountId": "acc_1", "status": ["failed"]}
    )
    python = PostQuery(
        since="2027-01-01T00:00:00Z", time_field="dueAt", account_id="acc_1", status=["failed"]
    )
    assert wire == python
    assert wire.params() == {
        "from": "2027-01-01T00:00:00Z",
        "timeField": "dueAt",
        "accountId": "acc_1",
        "status": ["failed"],
    }


def test_only_what_differs_from_the_defaults_is_sent() -> None:
    assert PostQuery().params() == {}
    assert PostQuery(limit=20, order="newest", time_field="createdAt", q="", label=[]).params() == {}
    assert PostQuery(limit=21, order="upcoming").params() == {"limit": 21, "order": "upcoming"}


@pytest.mark.parametrize(
    "bad",
    [{"limit": 0}, {"limit": 101}, {"status": ["published"]}, {"timeField": "updatedAt"}, {"q": "a\x00b"}],
)
def test_the_server_s_limits_hold_on_both_sides(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        PostQuery.model_validate(bad)


def test_keyword_filters_apply_over_a_query_and_none_means_not_given() -> None:
    base = PostQuery(status=["scheduled"], q="launch", limit=50)
    merged = post_query(base, q="sale", platform=None, cursor="c")
    assert merged.params() == {"status": ["scheduled"], "q": "sale", "limit": 50, "cursor": "c"}
    assert base.q == "launch"  # the query given is not changed


def test_the_client_sends_a_query_s_parameters() -> None:
    seen: list[list[tuple[str, str]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.params.multi_items())
        return httpx.Response(200, json={"items": [], "nextCursor": None})

    client = Client("http://test", api_key="spk_x", transport=httpx.MockTransport(handler))
    client.list_posts(PostQuery(status=["failed", "partial"], label=["team=brand"], order="upcoming"))
    assert seen[-1] == [
        ("status", "failed"),
        ("status", "partial"),
        ("label", "team=brand"),
        ("order", "upcoming"),
    ]
    assert list(client.iter_posts(PostQuery(q="x"), max_items=5)) == []
    assert dict(seen[-1]) == {"q": "x", "limit": "100"}


def test_a_walk_over_the_pages_keeps_the_query_s_page_size() -> None:
    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.url.params))
        return httpx.Response(200, json={"items": [], "nextCursor": None})

    client = Client("http://test", api_key="spk_x", transport=httpx.MockTransport(handler))
    list(client.iter_posts(PostQuery(limit=6)))
    list(client.iter_posts(PostQuery(), limit=7))
    list(client.iter_posts())
    assert [s["limit"] for s in seen] == ["6", "7", "100"]
