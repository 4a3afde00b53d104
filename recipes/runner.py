"""Plan and apply against a backend: the steps `socialpub recipes plan/apply/watch` share (read the set's posts,
plan, apply). Speaks /v1 through the client only."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from recipes.media import MediaStore
from recipes.model import LABEL_SET, Loaded
from recipes.plan import Plan, Scope, plan


def set_posts(client: Any, set_name: str) -> list[Any]:
    """Every post of the set (every status: a cancelled one bumps its occurrence's generation, a sent one is
    never re-created), following cursors."""
    return list(client.iter_posts(label=[f"{LABEL_SET}={set_name}"], limit=100))


KEY_LOOKUPS_MAX = 40
"""Up to this many occurrence keys, `posts_for_keys` asks for each key's posts; beyond, for the whole set."""


def posts_for_keys(client: Any, set_name: str, keys: Iterable[str]) -> list[Any]:
    """The set's posts for these occurrence keys (every status): one request a key
    (`label=socialpub.recipe/key=…`) when they are few, else the whole set (`set_posts`). The watcher's way to
    plan a few changed files without reading a set of thousands of posts."""
    from recipes.model import LABEL_KEY

    wanted = sorted(set(keys))
    if len(wanted) > KEY_LOOKUPS_MAX:
        return set_posts(client, set_name)
    out: list[Any] = []
    for key in wanted:
        out += client.iter_posts(label=[f"{LABEL_SET}={set_name}", f"{LABEL_KEY}={key}"], limit=100)
    return out


def make_plan(client: Any, loaded: Loaded, store: MediaStore, *, prune: bool, whole_set: bool = True,
              only: Iterable[str] | None = None, posts: list[Any] | None = None,
              now: datetime | None = None) -> Plan:
    """The plan of `loaded` against the backend now. `whole_set`: PATH was the folder (a file missing from it is
    gone); `only`: restrict to these files (the watcher's changed files)."""
    if posts is None:
        posts = set_posts(client, loaded.set_name)
    return plan(loaded, posts, now or datetime.now(UTC), prune=prune,
                scope=Scope.of(loaded, whole_set=whole_set, only=only), media_hash=store.hasher,
                url_hash=store.state.url_hashes())
