"""backend/services/media.py's holds: a post's hold at acceptance and its release at the post's start are statement
shapes (issue 34, ruling 2), keeping the retention rule's results."""

from __future__ import annotations

import io
from datetime import timedelta

from PIL import Image

from backend import clock
from backend.services import media as media_service
from backend.store.db import STEPS, tx
from backend.store.models import Media, MediaHold


def _jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), "blue").save(buf, "JPEG")
    return buf.getvalue()


def _steps(before: dict[str, int]) -> tuple[int, int, int]:
    after = STEPS.snapshot()
    return (
        after["statements"] - before["statements"],
        after["rendered_statements"] - before["rendered_statements"],
        after["once_rendered_statements"] - before["once_rendered_statements"],
    )


def test_holds_and_their_release_render_no_statement_again(settings, owner, monkeypatch):
    """Once a hold and a release of two files have run, the next ones (other files, other refs) render nothing:
    the live files by key, the holds' upsert, each file's holds summed up and its deadline, the release's reads
    and writes. The deadlines are the retention rule's."""
    monkeypatch.setattr(STEPS, "enabled", True)
    ws = owner.workspace_id
    files = [media_service.ingest_bytes(settings, ws, _jpeg()) for _ in range(4)]
    urls = [media_service.url_for(settings, m.key) for m in files]
    sent = clock.now()

    def hold_and_release(pair: list[str], ref: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        before = STEPS.snapshot()
        with tx():
            held = media_service.hold(ws, [*pair, "https://elsewhere.example/x.png"], None, ref)
        holding = _steps(before)
        assert held == sorted(media_service.key_of(u) for u in pair)
        assert all(Media.get(Media.key == k).expires_at is None for k in held)  # kept while unsent
        before = STEPS.snapshot()
        with tx():
            assert media_service.release(ref, sent) == held
        return holding, _steps(before)

    hold_and_release(urls[:2], "post:a")
    holding, releasing = hold_and_release(urls[2:], "post:b")
    assert holding[1] == 0 and releasing[1] == 0  # nothing rendered again
    # every statement from a shape; hold's own transaction, inside the caller's, is a savepoint (SAVEPOINT and
    # RELEASE: SQL text of peewee's, no query rendered); release's too
    assert holding == (2 + 7, 0, 7) and releasing == (2 + 10, 0, 10)
    for m in files:
        assert Media.get_by_id(m.id).expires_at == sent + media_service.RETENTION  # sent + 30 days
    # held again without limit by another post: the later release by `post:a` keeps it without limit
    with tx():
        media_service.hold(ws, urls[:1], None, "post:c")
        media_service.hold(ws, urls[:1], sent + timedelta(days=90), "post:c")  # replaces post:c's hold
    assert Media.get_by_id(files[0].id).expires_at == sent + timedelta(days=90)
    assert MediaHold.select().where(MediaHold.ref == "post:c").count() == 1
    with tx():
        assert media_service.release("post:c", None) == [files[0].key]
        assert media_service.release("post:none", None) == []
    assert Media.get_by_id(files[0].id).expires_at == sent + media_service.RETENTION  # the older hold's


def test_a_file_is_found_by_key_or_id_while_live(settings, owner, other_owner):
    ws = owner.workspace_id
    m = media_service.ingest_bytes(settings, ws, _jpeg())
    assert media_service.get_media(ws, m.key).id == media_service.get_media(ws, m.id).id == m.id
    for workspace, key in ((other_owner.workspace_id, m.key), (ws, "med_none")):
        try:
            media_service.get_media(workspace, key)
        except media_service.ApiError as err:
            assert err.status == 404 and err.code == "media_not_found"
        else:
            raise AssertionError("found")
    Media.update(expires_at=clock.now() - timedelta(seconds=1)).where(Media.id == m.id).execute()
    try:
        media_service.get_media(ws, m.id)
    except media_service.ApiError as err:
        assert err.code == "media_not_found"
    else:
        raise AssertionError("an expired file found")
