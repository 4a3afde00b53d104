# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""PATCH and DELETE /v1/posts/:id (spec 3.1 rows, 4.4): what can change, re-checks per network, the state
check under the row lock, the publish job moved or removed, 409s, isolation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from backend import clock
from backend.services import workspace as ws_service
from backend.services.posts import checks
from backend.services.posts import edit as post_edit
from backend.store.models import Job, Post, PostTarget
from tests.api.posts_support import IMG, VID, details, fast, future, post, remote_media, sandbox  # noqa: F401
from tests.conftest import key_headers

# audited_tiktok before sandbox (which reads the TikTok settings): its TikTok posts are public
pytestmark = pytest.mark.usefixtures("audited_tiktok", "fast", "remote_media", "sandbox")


@pytest.fixture(autouse=True)
def subscribed(owner):  # type: ignore[no-untyped-def]
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))


def scheduled(client, owner, **body):  # type: ignore[no-untyped-def]
    body.setdefault("targets", ["facebook", "instagram", "tiktok"])
    body.setdefault("mediaUrls", [IMG.format(1)])
    body.setdefault("content", "see you tomorrow")
    body.setdefault("scheduledAt", future(days=1))
    return post(client, owner, 202, **body).json()


def patch(client, owner, post_id, **body):  # type: ignore[no-untyped-def]
    return client.patch(f"/v1/posts/{post_id}", json=body, headers=key_headers(owner.api_key))


def delete(client, owner, post_id):  # type: ignore[no-untyped-def]
    return client.delete(f"/v1/posts/{post_id}", headers=key_headers(owner.api_key))


def job_of(post_id: str) -> Job | None:
    return Job.get_or_none(Job.dedupe_key == f"post:{post_id}")


# ------------------------------------------------------------------------------------------- PATCH


def test_patch_scheduled_post_200_identifier_kept_job_moved(client, owner):
    p = scheduled(client, owner)
    new_at = clock.now() + timedelta(days=2, hours=3)
    r = patch(
        client,
        owner,
        p["id"],
        scheduledAt=new_at.isoformat(),
        content="moved to Thursday",
        mediaUrls=[IMG.format(7), IMG.format(8)],
        options={"tiktok": {"postMode": "MEDIA_UPLOAD"}},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["id"] == p["id"] and body["status"] == "scheduled"
    assert body["content"] == "moved to Thursday" and body["mediaUrls"] == [IMG.format(7), IMG.format(8)]
    assert (
        body["scheduledAt"] == clock.iso(new_at) and body["options"]["tiktok"]["postMode"] == "MEDIA_UPLOAD"
    )
    assert [t["accountId"] for t in body["targets"]] == [t["accountId"] for t in p["targets"]]
    assert abs((job_of(p["id"]).run_at - new_at).total_seconds()) < 0.01
    assert [m["url"] for m in Post.get_by_id(p["id"]).media] == [IMG.format(7), IMG.format(8)]
    got = client.get(f"/v1/posts/{p['id']}", headers=key_headers(owner.api_key)).json()
    assert got == body


def test_patch_only_given_fields_change(client, owner):
    p = scheduled(client, owner, options={"tiktok": {"postMode": "MEDIA_UPLOAD"}})
    r = patch(client, owner, p["id"], content="just the text")
    assert r.status_code == 200
    body = r.json()
    assert body["content"] == "just the text"
    assert (body["scheduledAt"], body["mediaUrls"], body["options"]) == (
        p["scheduledAt"],
        p["mediaUrls"],
        p["options"],
    )
    assert abs((job_of(p["id"]).run_at - clock.now()).total_seconds()) > 3600  # job not moved


def test_patch_rechecks_text_and_media_per_network(client, owner):
    p = scheduled(client, owner, targets=["facebook", "instagram", "tiktok", "linkedin"])
    r = patch(client, owner, p["id"], content="z" * 3001)
    assert r.status_code == 400 and r.json()["error"] == "invalid_targets"
    assert set(details(r)) == {
        ("instagram", "content_too_long_for_target"),
        ("tiktok", "content_too_long_for_target"),
        ("tiktok", "title_too_long_for_target"),
        ("linkedin", "content_too_long_for_target"),
    }
    assert all(d.get("channelId") for d in r.json()["details"])  # names the exact account
    r = patch(client, owner, p["id"], mediaUrls=[])
    assert set(details(r)) == {
        ("instagram", "media_required_for_target"),
        ("tiktok", "media_required_for_target"),
    }
    r = patch(client, owner, p["id"], mediaUrls=["https://cdn.example.com/gone.jpg"])
    assert ("facebook", "media_unreadable") in details(r)
    assert Post.get_by_id(p["id"]).content == "see you tomorrow"  # nothing changed
    assert Post.get_by_id(p["id"]).version == 1


def test_patch_scheduled_at_in_past_and_naive(client, owner):
    p = scheduled(client, owner)
    r = patch(client, owner, p["id"], scheduledAt=future(minutes=-5))
    assert r.status_code == 400 and r.json()["error"] == "scheduled_at_in_past"
    r = patch(client, owner, p["id"], scheduledAt="2099-01-01T10:00:00")
    assert r.status_code == 400 and r.json()["error"] == "invalid_scheduled_at"
    assert Post.get_by_id(p["id"]).scheduled_at == clock.to_utc(checks.parse_timestamp(p["scheduledAt"], "x"))


def test_patch_targets_cannot_change(client, owner):
    p = scheduled(client, owner)
    r = patch(client, owner, p["id"], targets=["linkedin"])
    assert r.status_code == 400 and r.json()["error"] == "targets_not_editable"
    assert "cancel" in r.json()["message"] and "new post" in r.json()["message"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({"idempotencyKey": "x"}, "idempotencyKey"),
        ({"status": "cancelled"}, "status"),
        ({"content": None}, "content"),
        ({"scheduledAt": None}, "scheduledAt"),
        ({"mediaUrls": [IMG.format(i) for i in range(11)]}, "mediaUrls"),
    ],
)
def test_patch_other_fields_refused(client, owner, body, field):
    p = scheduled(client, owner)
    r = patch(client, owner, p["id"], **body)
    assert r.status_code == 400 and r.json()["error"] == "validation_error"
    assert field in r.json()["details"][0]["field"]


@pytest.mark.parametrize("status", ["processing", "completed", "partial", "failed", "cancelled"])
def test_patch_409_once_sent_being_sent_or_cancelled(client, owner, status):
    p = scheduled(client, owner)
    Post.update(status=status).where(Post.id == p["id"]).execute()
    r = patch(client, owner, p["id"], content="too late")
    assert r.status_code == 409 and r.json()["error"] == "post_not_editable"
    assert Post.get_by_id(p["id"]).content == "see you tomorrow"


def test_patch_immediate_post_409(client, owner):
    p = post(client, owner, 202, targets=["facebook"]).json()
    r = patch(client, owner, p["id"], content="edit")
    assert r.status_code == 409 and r.json()["error"] == "post_not_editable"


def test_patch_loses_to_the_engine_claim_between_check_and_lock(client, owner, monkeypatch):
    """The engine claims the post (scheduled -> processing) while the edit is being validated: the state
    is checked again under the row lock, so the edit is refused and nothing changes."""
    p = scheduled(client, owner)
    real = checks.inspect_media

    def claim_then_inspect(*args, **kw):  # type: ignore[no-untyped-def]
        Post.update(status="processing", sent_at=clock.now()).where(Post.id == p["id"]).execute()
        return real(*args, **kw)

    monkeypatch.setattr(post_edit, "inspect_media", claim_then_inspect)
    r = patch(client, owner, p["id"], content="racing", mediaUrls=[IMG.format(3)])
    assert r.status_code == 409 and r.json()["error"] == "post_not_editable"
    row = Post.get_by_id(p["id"])
    assert row.content == "see you tomorrow" and row.media_urls == [IMG.format(1)]


def test_patch_revalidates_when_another_edit_lands_first(client, owner, monkeypatch):
    """Two edits: the one validated against a stale version is checked again against the new state."""
    p = scheduled(client, owner, targets=["facebook", "linkedin"], mediaUrls=[])
    real = checks.inspect_media
    calls = {"n": 0}

    def concurrent_edit(*args, **kw):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:  # another PATCH commits new content meanwhile
            Post.update(content="other edit", version=Post.version + 1).where(Post.id == p["id"]).execute()
        return real(*args, **kw)

    monkeypatch.setattr(post_edit, "inspect_media", concurrent_edit)
    r = patch(client, owner, p["id"], mediaUrls=[IMG.format(5)])
    assert r.status_code == 200, r.text
    assert calls["n"] == 2  # validated twice
    assert r.json()["content"] == "other edit" and r.json()["mediaUrls"] == [IMG.format(5)]
    assert Post.get_by_id(p["id"]).version == 3


# ------------------------------------------------------------------------------------------- DELETE


def test_delete_scheduled_204_cancelled_job_removed(client, owner):
    p = scheduled(client, owner)
    assert job_of(p["id"]) is not None
    r = delete(client, owner, p["id"])
    assert r.status_code == 204 and r.content == b""
    assert job_of(p["id"]) is None
    got = client.get(f"/v1/posts/{p['id']}", headers=key_headers(owner.api_key)).json()
    assert got["status"] == "cancelled" and all(t["status"] == "pending" for t in got["targets"])
    r = delete(client, owner, p["id"])
    assert r.status_code == 409 and r.json()["error"] == "post_not_cancellable"
    r = patch(client, owner, p["id"], content="revive")
    assert r.status_code == 409 and r.json()["error"] == "post_not_editable"


@pytest.mark.parametrize("status", ["processing", "completed", "partial", "failed"])
def test_delete_409_once_sent(client, owner, status):
    p = scheduled(client, owner)
    Post.update(status=status).where(Post.id == p["id"]).execute()
    r = delete(client, owner, p["id"])
    assert r.status_code == 409 and r.json()["error"] == "post_not_cancellable"
    assert Post.get_by_id(p["id"]).status == status
    assert job_of(p["id"]) is not None


def test_delete_immediate_post_409(client, owner):
    p = post(client, owner, 202, targets=["facebook"]).json()
    r = delete(client, owner, p["id"])
    assert r.status_code == 409 and r.json()["error"] == "post_not_cancellable"


# ------------------------------------------------------------------------------------------- GET one, isolation


def test_get_one_has_every_field(client, owner):
    p = scheduled(
        client, owner, targets=["tiktok", "youtube"], mediaUrls=[VID.format(1)], idempotencyKey="g1"
    )
    PostTarget.update(
        status="succeeded",
        external_post_id="7312",
        post_url="https://tiktok.test/v/7312",
        completed_at=clock.now(),
    ).where((PostTarget.post == p["id"]) & (PostTarget.platform == "tiktok")).execute()
    PostTarget.update(
        status="failed", fail_reason="quota exceeded: try tomorrow", fail_type="retriable"
    ).where((PostTarget.post == p["id"]) & (PostTarget.platform == "youtube")).execute()
    Post.update(status="partial").where(Post.id == p["id"]).execute()
    body = client.get(f"/v1/posts/{p['id']}", headers=key_headers(owner.api_key)).json()
    assert set(body) == {
        "id",
        "status",
        "scheduledAt",
        "createdAt",
        "updatedAt",
        "targets",
        "content",
        "mediaUrls",
        "options",
        "idempotencyKey",
        "labels",
    }
    assert body["status"] == "partial" and body["idempotencyKey"] == "g1"
    tiktok, youtube = body["targets"]
    assert (tiktok["externalPostId"], tiktok["postUrl"]) == ("7312", "https://tiktok.test/v/7312")
    assert tiktok["completedAt"].endswith("Z")
    assert (youtube["status"], youtube["failType"]) == ("failed", "retriable") and "quota" in youtube[
        "failReason"
    ]


def test_another_workspaces_post_is_404(client, owner, other_owner):
    p = scheduled(client, owner)
    h = key_headers(other_owner.api_key)
    for r in (
        client.get(f"/v1/posts/{p['id']}", headers=h),
        client.patch(f"/v1/posts/{p['id']}", headers=h, json={"content": "hijack"}),
        client.delete(f"/v1/posts/{p['id']}", headers=h),
    ):
        assert r.status_code == 404 and r.json()["error"] == "post_not_found"
    assert Post.get_by_id(p["id"]).status == "scheduled"
    assert client.get("/v1/posts", headers=h).json()["items"] == []
    r = client.get("/v1/posts/post_doesnotexist", headers=key_headers(owner.api_key))
    assert r.status_code == 404
