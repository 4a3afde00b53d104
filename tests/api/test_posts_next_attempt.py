# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""A target that waits (a network's cap, a retry after a temporary failure) shows its next attempt time:
`nextAttemptAt`, ISO 8601 UTC, null when no attempt is planned."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.store.models import PostTarget
from tests.api.posts_support import post, sandbox  # noqa: F401  (fixtures)
from tests.conftest import key_headers


def test_next_attempt_at_on_read_and_list(client, owner, sandbox):
    created = post(client, owner, 202, targets=["facebook", "linkedin"]).json()
    assert [t["nextAttemptAt"] for t in created["targets"]] == [None, None]
    when = datetime(2031, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)
    PostTarget.update(next_attempt_at=when).where(
        (PostTarget.post == created["id"]) & (PostTarget.platform == "linkedin")
    ).execute()
    h = key_headers(owner.api_key)
    got = client.get(f"/v1/posts/{created['id']}", headers=h).json()
    assert [(t["platform"], t["status"], t["nextAttemptAt"]) for t in got["targets"]] == [
        ("facebook", "pending", None),
        ("linkedin", "pending", "2031-05-06T07:08:09.123Z"),
    ]
    listed = client.get("/v1/posts", headers=h).json()["items"][0]
    assert listed["targets"] == got["targets"]
