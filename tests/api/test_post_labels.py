# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""Post labels (extension, issue 14): given at creation, answered on every read, fixed afterwards, and found with
`GET /v1/posts?label=KEY=VALUE` — only in the caller's workspace. Recipes mark the posts a set owns with them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.services import accounts
from backend.services import workspace as ws_service
from tests.api.posts_support import fast, future, post, remote_media, sandbox  # noqa: F401
from tests.conftest import key_headers

pytestmark = pytest.mark.usefixtures("fast", "remote_media")

SET = "socialpub.recipe/set"


@pytest.fixture(autouse=True)
def subscribed(owner):  # type: ignore[no-untyped-def]
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))


def listing(client, owner, expect: int = 200, **params):  # type: ignore[no-untyped-def]
    r = client.get("/v1/posts", params=params, headers=key_headers(owner.api_key))
    assert r.status_code == expect, r.text
    return r.json()


def test_labels_are_answered_on_create_get_and_list(client, owner, sandbox):  # type: ignore[no-untyped-def]
    labels = {SET: "january", "socialpub.recipe/key": "january/launch.yaml#launch", "team": "brand=1"}
    created = post(client, owner, 202, targets=["facebook"], scheduledAt=future(days=1), labels=labels).json()
    assert created["labels"] == labels
    got = client.get(f"/v1/posts/{created['id']}", headers=key_headers(owner.api_key)).json()
    assert got["labels"] == labels
    page = listing(client, owner)
    assert page["items"][0]["labels"] == labels
    plain = post(client, owner, 202, targets=["facebook"], scheduledAt=future(days=1)).json()
    assert plain["labels"] == {}


def test_label_filter_matches_key_and_value_all_of_them(client, owner, sandbox):  # type: ignore[no-untyped-def]
    a = post(
        client,
        owner,
        202,
        targets=["facebook"],
        scheduledAt=future(days=1),
        labels={SET: "january", "team": "brand"},
    ).json()["id"]
    b = post(
        client, owner, 202, targets=["facebook"], scheduledAt=future(days=2), labels={SET: "january"}
    ).json()["id"]
    c = post(
        client, owner, 202, targets=["facebook"], scheduledAt=future(days=3), labels={SET: "february"}
    ).json()["id"]
    by_hand = post(client, owner, 202, targets=["facebook"], scheduledAt=future(days=4)).json()["id"]
    assert {p["id"] for p in listing(client, owner, label=f"{SET}=january")["items"]} == {a, b}
    assert {p["id"] for p in listing(client, owner, label=[f"{SET}=january", "team=brand"])["items"]} == {a}
    assert {p["id"] for p in listing(client, owner, label=f"{SET}=february")["items"]} == {c}
    assert listing(client, owner, label=f"{SET}=march")["items"] == []
    assert by_hand not in {p["id"] for p in listing(client, owner, label=f"{SET}=january")["items"]}
    # combined with the other filters and pagination
    first = listing(client, owner, label=f"{SET}=january", limit=1)
    second = listing(client, owner, label=f"{SET}=january", limit=1, cursor=first["nextCursor"])
    assert {first["items"][0]["id"], second["items"][0]["id"]} == {a, b} and second["nextCursor"] is None
    up = listing(client, owner, label=f"{SET}=january", order="upcoming")
    assert [p["id"] for p in up["items"]] == [a, b]
    assert listing(client, owner, label=f"{SET}=january", status="cancelled")["items"] == []


def test_label_filter_never_crosses_workspaces(settings, client, owner, other_owner, sandbox):  # type: ignore[no-untyped-def]
    mine = post(
        client, owner, 202, targets=["facebook"], scheduledAt=future(days=1), labels={SET: "january"}
    ).json()
    accounts.connect_sandbox_defaults(settings, other_owner.workspace_id)
    ws_service.set_plan(other_owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))
    theirs = post(
        client, other_owner, 202, targets=["facebook"], scheduledAt=future(days=1), labels={SET: "january"}
    ).json()
    assert [p["id"] for p in listing(client, owner, label=f"{SET}=january")["items"]] == [mine["id"]]
    assert [p["id"] for p in listing(client, other_owner, label=f"{SET}=january")["items"]] == [theirs["id"]]


def test_labels_are_fixed_at_creation(client, owner, sandbox):  # type: ignore[no-untyped-def]
    created = post(
        client, owner, 202, targets=["facebook"], scheduledAt=future(days=1), labels={SET: "a"}
    ).json()
    r = client.patch(
        f"/v1/posts/{created['id']}", json={"labels": {SET: "b"}}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and r.json()["error"] == "labels_not_editable"
    r = client.patch(
        f"/v1/posts/{created['id']}", json={"content": "changed"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 200 and r.json()["labels"] == {SET: "a"}


def test_an_idempotent_replay_answers_the_first_posts_labels(client, owner, sandbox):  # type: ignore[no-untyped-def]
    when = future(days=1)  # a replay is the same request: the same instant
    first = post(
        client,
        owner,
        202,
        targets=["facebook"],
        scheduledAt=when,
        idempotencyKey="k1",
        labels={SET: "a"},
    ).json()
    again = post(
        client,
        owner,
        200,
        targets=["facebook"],
        scheduledAt=when,
        idempotencyKey="k1",
        labels={SET: "a"},
    ).json()
    assert again["id"] == first["id"] and again["labels"] == {SET: "a"}
    assert len(listing(client, owner, label=f"{SET}=a")["items"]) == 1


@pytest.mark.parametrize(
    "labels",
    [
        {"Upper": "x"},
        {"-dash-first": "x"},
        {"ends-with-dash-": "x"},
        {"spa ce": "x"},
        {"k" * 101: "x"},
        {"k": "v" * 501},
        {f"k{i}": "v" for i in range(21)},
        {"k": 1},
    ],
)
def test_bad_labels_are_refused_and_nothing_is_written(client, owner, sandbox, labels):  # type: ignore[no-untyped-def]
    r = post(client, owner, targets=["facebook"], scheduledAt=future(days=1), labels=labels)
    assert r.status_code == 400 and r.json()["error"] == "validation_error", r.text
    assert listing(client, owner)["items"] == []


@pytest.mark.parametrize("label", ["nokey", "=v", "UP=v", "k=" + "v" * 501])
def test_a_bad_label_filter_is_400(client, owner, sandbox, label):  # type: ignore[no-untyped-def]
    body = listing(client, owner, 400, label=label)
    assert body["error"] == "validation_error" and body["details"][0]["field"] == "label"


def test_too_many_label_filters_is_400(client, owner, sandbox):  # type: ignore[no-untyped-def]
    body = listing(client, owner, 400, label=[f"k{i}=v" for i in range(21)])
    assert body["error"] == "validation_error"


def test_an_empty_value_is_a_value(client, owner, sandbox):  # type: ignore[no-untyped-def]
    created = post(
        client, owner, 202, targets=["facebook"], scheduledAt=future(days=1), labels={"draft": ""}
    ).json()
    assert [p["id"] for p in listing(client, owner, label="draft=")["items"]] == [created["id"]]
