# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""POST /v1/posts: which error wins, the content type, idempotent replays, free publications and one
rate-limit count per request (one route: FastAPI's, as declared)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.services import keys as keys_service
from backend.services import workspace as ws_service
from tests.api.posts_support import fast, remote_media, sandbox  # noqa: F401  (fixtures)
from tests.conftest import key_headers, session_headers

pytestmark = pytest.mark.usefixtures("fast", "remote_media")

COMMON = "application/json"
DECLARED = "application/json; charset=utf-8"  # the same JSON, with a charset


def _post(client, headers, body, content_type=COMMON):  # type: ignore[no-untyped-def]
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post("/v1/posts", content=raw, headers={**headers, "content-type": content_type})


@pytest.fixture
def subscribed(owner):  # type: ignore[no-untyped-def]
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))


def test_idempotent_replay_whatever_the_content_type(client, owner, sandbox, subscribed):
    h = key_headers(owner.api_key)
    body = {"targets": ["facebook"], "content": "Hello", "idempotencyKey": "k-1"}
    first = _post(client, h, body)
    assert first.status_code == 202
    for content_type in (COMMON, DECLARED):
        again = _post(client, h, body, content_type)
        assert again.status_code == 200 and again.json() == first.json()


def test_free_publications(client, owner, sandbox):
    h = key_headers(owner.api_key)
    codes = [
        _post(client, h, {"targets": ["facebook"], "content": f"post {i}"}).status_code for i in range(4)
    ]
    assert codes == [202, 202, 202, 402]
    r = _post(client, h, {"targets": ["facebook"], "content": "post 5"}, DECLARED)
    assert r.status_code == 402 and r.json()["error"] == "subscription_required"


def test_which_error_wins(client, owner, sandbox):
    valid = {"targets": ["facebook"], "content": "Hello"}
    unknown_key = key_headers("spk_live_v1-" + "A" * 43)
    # invalid JSON is answered before the key is looked at; a body that does not validate after it
    r = _post(client, unknown_key, b"{not json")
    assert r.status_code == 400 and r.json()["error"] == "invalid_json"
    r = _post(client, unknown_key, {"targets": []})
    assert r.status_code == 401 and r.json()["error"] == "invalid_api_key"
    r = _post(client, unknown_key, valid)
    assert r.status_code == 401 and r.json()["error"] == "invalid_api_key"
    r = _post(client, {}, valid)
    assert r.status_code == 401 and r.json()["error"] == "invalid_api_key"
    r = _post(client, session_headers(owner.session_token), valid)  # a session: the owner, every scope
    assert r.status_code == 202 and "RateLimit" not in r.headers
    _, lacking = keys_service.create(owner.workspace_id, "read only", None, ["workspace:read"])
    r = _post(client, key_headers(lacking), valid)
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
    assert r.json()["details"] == [{"required": "publish:posts", "held": ["workspace:read"]}]
    assert "RateLimit" in r.headers
    r = client.post(
        "/v1/posts",
        content=json.dumps(valid),
        headers={**key_headers(owner.api_key), "content-type": "text/plain"},
    )
    assert r.status_code == 400 and r.json()["error"] == "validation_error"


def test_one_rate_limit_count_per_request(client, owner, sandbox, settings):
    settings.rate_limit_per_minute = 100
    h = key_headers(owner.api_key)
    start = clock.now().replace(second=1, microsecond=0) + timedelta(minutes=1)  # one window throughout
    with time_machine.travel(start, tick=False):
        left = _remaining_after_each(client, h)
    assert [left[0] - n for n in left] == [0, 1, 2, 3]


def _remaining_after_each(client, h):  # type: ignore[no-untyped-def]
    left = []
    for body, content_type in [
        ({"targets": ["facebook"], "content": "a"}, COMMON),
        ({"targets": []}, COMMON),
        ({"targets": ["facebook"], "content": "b"}, DECLARED),
        ({"targets": ["facebook"], "content": "c"}, COMMON),
    ]:
        r = _post(client, h, body, content_type)
        left.append(int(r.headers["RateLimit"].split("r=")[1].split(";")[0]))
    return left


def test_a_replay_answers_only_a_well_formed_request(client, owner, sandbox, subscribed):
    """The existing post (200) for a request the document accepts; a malformed one is refused as always."""
    h = key_headers(owner.api_key)
    body = {
        "targets": ["facebook"],
        "content": "Hello",
        "idempotencyKey": "k-2",
        "scheduledAt": "2099-01-01T09:00:00Z",
    }
    first = _post(client, h, body)
    assert first.status_code == 202
    for change, code in [
        ({"scheduledAt": "AAA"}, "invalid_scheduled_at"),
        ({"targets": ["myspace"]}, "invalid_targets"),
        ({"content": "x" * 63207}, "invalid_targets"),
        ({"mediaUrls": ["ftp://example.com/a.jpg"]}, "invalid_targets"),
    ]:
        r = _post(client, h, {**body, **change})
        assert r.status_code == 400 and r.json()["error"] == code, (change, r.text)
    again = _post(client, h, body)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]


@pytest.mark.parametrize(
    "content",
    [
        "\u200b",  # zero width space
        "\u200b\u200c\u200d\u2060\ufeff",  # zero width (non-)joiners, word joiner, BOM
        " \u00a0\u3000\n\t",  # spaces of every width
        "\u3164\u2800",  # a Hangul filler and a braille blank: drawn blank
        "\u0301\u034f",  # combining marks with nothing to combine with
        "\u202e\u2066",  # bidi controls
    ],
)
def test_a_text_of_invisible_characters_is_no_text(client, owner, sandbox, subscribed, content):
    """Issue 30 item 9: a post whose text is only U+200B was accepted and published; a text that shows nothing is
    answered as no text: 400 invalid_targets, content_required_for_target for each target that needs a text."""
    r = _post(client, key_headers(owner.api_key), {"targets": ["facebook", "linkedin"], "content": content})
    assert r.status_code == 400 and r.json()["error"] == "invalid_targets", r.text
    assert [(d["platform"], d["error"]) for d in r.json()["details"]] == [
        ("facebook", "content_required_for_target"),
        ("linkedin", "content_required_for_target"),
    ]
    if content.strip():
        assert "invisible characters" in r.json()["details"][0]["message"]


def test_a_visible_character_among_invisible_ones_is_a_text(client, owner, sandbox, subscribed):
    r = _post(client, key_headers(owner.api_key), {"targets": ["facebook"], "content": "\u200bhi\u200b"})
    assert r.status_code == 202, r.text
