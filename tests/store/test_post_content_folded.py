"""`post.content_folded` (migration 0025): the text as the search compares it, filled for posts made before it."""

from __future__ import annotations

import importlib
from datetime import timedelta

from backend import clock
from backend.ids import new_id
from backend.store.db import database
from backend.store.models import Post
from backend.store.models.posts import folded


def test_folding_is_full_case_folding_not_lower_casing():
    assert folded("Été à PARIS") == "été à paris"
    assert folded("STRASSE") == folded("Straße") == "strasse"  # lower() keeps ß; casefold() makes it ss
    assert folded("ΣΊΣΥΦΟΣ") == folded("σίσυφος")  # final sigma


def test_the_migration_folds_the_posts_made_before_it(owner):
    now = clock.now()
    made = {}
    for text in ("Été à PARIS", "Straße", ""):
        made[text] = new_id("post")
        Post.create(
            id=made[text],
            workspace=owner.workspace_id,
            status="completed",
            content=text,
            content_folded=None,
            created_at=now - timedelta(minutes=1),
            updated_at=now,
        )
    migration = importlib.import_module("backend.store.migrations.0025_post_content_folded")
    migration.up(None, database)  # the column exists: only the posts without a folded text are filled
    for text, post_id in made.items():
        assert Post.get_by_id(post_id).content_folded == folded(text)
    migration.up(None, database)  # nothing left to fill: a second run changes nothing
    assert Post.select().where(Post.content_folded.is_null()).count() == 0
