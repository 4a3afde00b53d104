"""Migration 0030: files stored before media keys were capabilities get one, and every reference the store keeps to
their old key follows (issue 30 item 0)."""

from __future__ import annotations

import re
from datetime import timedelta

from peewee import Table

from backend import clock
from backend.media.storage import get_storage
from backend.services import media as media_service
from backend.store.db import database, migrate
from backend.store.models import Media, Post, Workspace
from tests.api.posts_support import future
from tests.conftest import key_headers
from tests.media import corpus

NEW_KEY = re.compile(r"^med_[0-9a-z]{26}_[a-z2-7]{26}\.jpg$")
MIGRATION = "0030_media_capability_keys"


def _legacy_media(settings, workspace_id: str) -> tuple[str, bytes]:  # type: ignore[no-untyped-def]
    """An image stored as the versions before 0030 stored it: under `med_<ULID>.jpg`."""
    row = media_service.ingest_bytes(settings, workspace_id, corpus.jpeg(), origin="upload")
    storage = get_storage(settings)
    data = b"".join(storage.open_range(row.key, 0, row.bytes - 1))
    legacy = f"{row.id}.jpg"
    storage.put_bytes(legacy, data, "image/jpeg")
    storage.delete(row.key)
    Media.update(key=legacy).where(Media.id == row.id).execute()
    return legacy, data


def rerun_migration() -> None:
    """Forget that 0030 ran, and migrate: it runs again on what the store holds now."""
    history = Table("schema_migration").bind(database.obj)
    history.delete().where(history.c.name == MIGRATION).execute()
    migrate(database.obj)


def test_old_keys_are_replaced_and_their_references_follow(settings, owner, client):
    from backend.services import accounts

    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    legacy, data = _legacy_media(settings, owner.workspace_id)
    old_url = media_service.url_for(settings, legacy)
    assert client.get(f"/media/{legacy}").status_code == 200  # what the old version served, guessable
    r = client.post(
        "/v1/posts",
        json={
            "targets": ["facebook"],
            "content": "later",
            "mediaUrls": [old_url],
            "scheduledAt": future(days=2),
        },
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text
    post_id = r.json()["id"]
    Workspace.update(logo_url=old_url).where(Workspace.id == owner.workspace_id).execute()

    rerun_migration()

    row = Media.get(Media.key != legacy)
    assert NEW_KEY.match(row.key) and row.key.startswith(legacy.removesuffix(".jpg") + "_")
    new_url = media_service.url_for(settings, row.key)
    assert client.get(f"/media/{legacy}").status_code == 404
    served = client.get(f"/media/{row.key}")
    assert served.status_code == 200 and served.content == data
    post = Post.get_by_id(post_id)
    assert post.media_urls == [new_url] and [m["url"] for m in post.media] == [new_url]
    assert Workspace.get_by_id(owner.workspace_id).logo_url == new_url
    shown = client.get(f"/v1/posts/{post_id}", headers=key_headers(owner.api_key)).json()
    assert shown["mediaUrls"] == [new_url]

    rerun_migration()  # idempotent: a capability key is left alone
    assert Media.get_by_id(row.id).key == row.key

    # the old name is an orphan now: the retention job's sweep removes it, the new one stays
    removed = media_service.sweep_orphans(settings, clock.now() + timedelta(days=2))
    assert removed == [legacy]
    assert get_storage(settings).size(row.key) == len(data)
