"""Posts service: the UNIQUE index decides idempotency races; media on our own host is checked against the
media store and held until sent; generated video declares synthetic media on youtube."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from PIL import Image

from backend import clock
from backend.errors import ApiError
from backend.services import accounts as accounts_service
from backend.services import media as media_service
from backend.services import workspace as ws_service
from backend.services.posts import accept, edit
from backend.store.db import STEPS
from backend.store.models import Job, Media, MediaHold, Post, PostTarget, Workspace
from tests.media import corpus

MP4 = corpus.video("mp4")  # a real video: a header alone is refused at ingestion (400 not_a_video)


def jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "red").save(buf, "JPEG")
    return buf.getvalue()


@pytest.fixture
def ws(settings, owner):  # type: ignore[no-untyped-def]
    accounts_service.connect_sandbox_defaults(settings, owner.workspace_id)
    ws_service.set_plan(owner.workspace_id, "GROWTH", "active", clock.now() + timedelta(days=60))
    return owner.workspace_id


def body(**kw):  # type: ignore[no-untyped-def]
    kw.setdefault("targets", ["facebook"])
    kw.setdefault("content", "hello")
    return kw


def test_unique_index_decides_when_the_lookup_misses(settings, ws, monkeypatch):
    """Two requests that both passed the fast look-up: the second insert hits the UNIQUE index and returns the
    first post, creating nothing (no target, no job)."""
    first, created = accept.create(settings, ws, body(idempotency_key="k"))
    assert created
    again, created = _create_with_conflict_lookup(settings, ws, monkeypatch, body(idempotency_key="k"))
    assert not created and again.id == first.id
    assert Post.select().count() == 1 and PostTarget.select().count() == 1 and Job.select().count() == 1


def test_the_unique_index_path_also_refuses_another_body(settings, ws, monkeypatch):
    """The same race with another body: 409 idempotency_key_reused from the conflict branch, nothing created."""
    accept.create(settings, ws, body(idempotency_key="k"))
    with pytest.raises(ApiError) as err:
        _create_with_conflict_lookup(
            settings, ws, monkeypatch, body(idempotency_key="k", targets=["linkedin"])
        )
    assert err.value.status == 409 and err.value.code == "idempotency_key_reused"
    assert Post.select().count() == 1 and PostTarget.select().count() == 1 and Job.select().count() == 1


def _create_with_conflict_lookup(settings, ws, monkeypatch, request):  # type: ignore[no-untyped-def]
    """Fast path blind, conflict path real: only the IntegrityError branch can find the existing post."""
    state = {"n": 0}
    real = accept._existing_by_key

    def existing(workspace_id: str, key: str, fingerprint: str):  # type: ignore[no-untyped-def]
        state["n"] += 1
        if state["n"] == 1:
            return None  # the fast look-up before validation misses (the other request has not committed)
        return real(workspace_id, key, fingerprint)

    monkeypatch.setattr(accept, "_existing_by_key", existing)
    try:
        return accept.create(settings, ws, request)
    finally:
        assert state["n"] == 2  # reached the conflict branch


def test_host_media_checked_against_the_store_and_held_until_sent(settings, ws):
    img = media_service.ingest_bytes(settings, ws, jpeg())
    url = media_service.url_for(settings, img.key)
    assert img.expires_at is not None  # 30-day base rule
    p, _ = accept.create(
        settings,
        ws,
        body(
            targets=["facebook", "instagram"],
            media_urls=[url],
            scheduled_at=clock.iso(clock.now() + timedelta(days=40)),
        ),
    )
    assert [m["kind"] for m in p.media] == ["image"] and p.media[0]["mime"] == "image/jpeg"
    assert MediaHold.get(MediaHold.ref == f"post:{p.id}").until is None
    assert Media.get_by_id(img.id).expires_at is None  # kept while the post is not sent
    edit.cancel(ws, p.id)
    assert MediaHold.select().where(MediaHold.ref == f"post:{p.id}").count() == 0
    assert Media.get_by_id(img.id).expires_at is not None  # back to the base rule


def test_accepting_a_post_with_media_renders_no_statement_again(settings, ws, monkeypatch):
    """A post naming files of our media host: their checks (each file by key) and their hold (a savepoint, the
    live files by key, one upsert, their deadlines) are statement shapes too (issue 34, ruling 2): the second post
    with as many files renders nothing."""
    files = [media_service.ingest_bytes(settings, ws, jpeg()) for _ in range(4)]
    monkeypatch.setattr(STEPS, "enabled", True)
    for i in (0, 2):
        before = STEPS.snapshot()
        urls = [media_service.url_for(settings, m.key) for m in files[i : i + 2]]
        p, _ = accept.create(settings, ws, body(targets=["facebook", "linkedin"], media_urls=urls))
        after = STEPS.snapshot()
    assert after["rendered_statements"] - before["rendered_statements"] == 0
    assert {h.media_id for h in MediaHold.select().where(MediaHold.ref == f"post:{p.id}")} == {
        files[2].id,
        files[3].id,
    }
    assert all(Media.get_by_id(m.id).expires_at is None for m in files)


def test_patch_moves_the_hold_to_the_new_media(settings, ws):
    a = media_service.ingest_bytes(settings, ws, jpeg())
    b = media_service.ingest_bytes(settings, ws, jpeg())
    p, _ = accept.create(
        settings,
        ws,
        body(
            media_urls=[media_service.url_for(settings, a.key)],
            scheduled_at=clock.iso(clock.now() + timedelta(days=1)),
        ),
    )
    edit.edit(settings, ws, p.id, {"media_urls": [media_service.url_for(settings, b.key)]})
    held = {h.media_id for h in MediaHold.select().where(MediaHold.ref == f"post:{p.id}")}
    assert held == {b.id}
    assert Media.get_by_id(a.id).expires_at is not None and Media.get_by_id(b.id).expires_at is None


def test_host_media_missing_expired_or_of_another_workspace(settings, ws, other_owner):
    base = media_service.url_for(settings, "")
    gone = media_service.ingest_bytes(settings, ws, jpeg())
    Media.update(expires_at=clock.now() - timedelta(seconds=1)).where(Media.id == gone.id).execute()
    theirs = media_service.ingest_bytes(settings, other_owner.workspace_id, jpeg())
    urls = [
        base + "med_nothere.jpg",
        media_service.url_for(settings, gone.key),
        media_service.url_for(settings, theirs.key),
    ]
    with pytest.raises(ApiError) as err:
        accept.create(settings, ws, body(media_urls=urls))
    assert err.value.code == "invalid_targets"
    assert [(d["error"], d["mediaUrl"]) for d in err.value.details] == [("media_unreadable", u) for u in urls]


def test_host_video_kind_from_the_store(settings, ws):
    vid = media_service.ingest_bytes(settings, ws, MP4)
    url = media_service.url_for(settings, vid.key)
    draft = {"tiktok": {"postMode": "MEDIA_UPLOAD"}}  # (a direct post needs the creator's privacy choice)
    p, _ = accept.create(settings, ws, body(targets=["youtube", "tiktok"], media_urls=[url], options=draft))
    assert p.media[0]["kind"] == "video" and p.media[0]["generated"] is False
    assert "youtube" not in (p.options or {})


def test_generated_video_on_youtube_declares_synthetic_media(settings, ws):
    gen = media_service.store_generated(settings, ws, MP4, ref="generation:gen_test")
    url = media_service.url_for(settings, gen.key)
    p, _ = accept.create(
        settings,
        ws,
        body(targets=["youtube"], media_urls=[url], options={"youtube": {"containsSyntheticMedia": False}}),
    )
    assert p.media[0]["generated"] is True
    assert p.options["youtube"]["containsSyntheticMedia"] is True


def test_job_payload_is_what_the_engine_reads(settings, ws):
    p, _ = accept.create(settings, ws, body())
    job = Job.get(Job.dedupe_key == accept.job_key(p.id))
    assert job.kind == accept.PUBLISH_JOB == "post.publish" and job.payload["post_id"] == p.id


def test_accepting_a_post_renders_no_statement_again(settings, owner, monkeypatch):
    """Every statement of a post's acceptance is a statement shape (issue 34, ruling 2): once the first post has
    rendered them, the next one with the same number of targets and labels runs 7 statements, none rendered by
    peewee again — the key's look-up, the workspace and its accounts, the post, the free publication counted, its
    targets and its labels in one INSERT each, the publish job."""
    accounts_service.connect_sandbox_defaults(settings, owner.workspace_id)  # no plan: a free publication
    monkeypatch.setattr(STEPS, "enabled", True)

    def create(n: int) -> tuple[dict[str, int], dict[str, Any]]:
        before = STEPS.snapshot()
        data, created = accept.create_public(
            settings,
            owner.workspace_id,
            body(targets=["facebook", "linkedin"], idempotency_key=f"k{n}", labels={"a": "1", "b": str(n)}),
        )
        assert created
        after = STEPS.snapshot()
        return {k: after[k] - before[k] for k in after}, data

    create(1)
    steps, data = create(2)
    assert (steps["statements"], steps["rendered_statements"], steps["once_rendered_statements"]) == (7, 0, 7)
    assert steps["transactions"] == 1
    post = Post.get_by_id(data["id"])
    assert (post.labels, post.idempotency_key, post.free_publication) == ({"a": "1", "b": "2"}, "k2", True)
    assert [(t.platform, t.position, t.attempts) for t in post.targets.order_by(PostTarget.position)] == [
        ("facebook", 0, 0),
        ("linkedin", 1, 0),
    ]
    assert Workspace.get_by_id(owner.workspace_id).free_posts_used == 2
    again, created = accept.create_public(
        settings,
        owner.workspace_id,
        body(targets=["facebook", "linkedin"], idempotency_key="k2", labels={"a": "1", "b": "2"}),
    )
    assert not created and again["id"] == data["id"]  # a replay: no second post
