"""Plan and apply against a backend: the steps `socialpub recipes plan/apply/watch` share (read the set's posts,
plan, apply). Speaks /v1 through the client only."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from backend.schemas.statuses import GenerationStatus, PostStatus
from recipes.apply import check_targets
from recipes.media import MediaStore
from recipes.model import (
    GENERATION_KEY_PREFIX,
    LABEL_KEY,
    LABEL_SET,
    Loaded,
    Occurrence,
    Problem,
    generation_key,
)
from recipes.plan import GenState, Plan, Scope, pin_zones, plan
from socialpub_tui.client.errors import ApiError


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

    wanted = sorted(set(keys))
    if len(wanted) > KEY_LOOKUPS_MAX:
        return set_posts(client, set_name)
    out: list[Any] = []
    for key in wanted:
        out += client.iter_posts(label=[f"{LABEL_SET}={set_name}", f"{LABEL_KEY}={key}"], limit=100)
    return out


def make_plan(
    client: Any,
    loaded: Loaded,
    store: MediaStore,
    *,
    prune: bool,
    whole_set: bool = True,
    only: Iterable[str] | None = None,
    posts: list[Any] | None = None,
    now: datetime | None = None,
) -> Plan:
    """The plan of `loaded` against the backend now. `whole_set`: PATH was the folder (a file missing from it is
    gone); `only`: restrict to these files (the watcher's changed files)."""
    if posts is None:
        posts = set_posts(client, loaded.set_name)
    zone_notices = pin_zones(loaded, posts)
    scope = Scope.of(loaded, whole_set=whole_set, only=only)
    generations, balance = resolve_generations(
        client, [o for o in loaded.occurrences if scope.covers(o.file)], store.hasher
    )
    url_hash = store.state.url_hashes()
    url_hash |= store.source_hashes(
        u
        for p in posts
        if p.status == PostStatus.SCHEDULED
        for u in (p.media_urls or [])
        if u not in url_hash
    )
    result = plan(
        loaded,
        posts,
        now or datetime.now(UTC),
        prune=prune,
        scope=scope,
        media_hash=store.hasher,
        url_hash=url_hash,
        generations=generations,
        balance=balance,
    )
    result.notices[:0] = zone_notices
    if notice := free_plan_notice(client, len(result.create)):
        result.notices.append(notice)
    return result


def free_plan_notice(client: Any, creates: int) -> str | None:
    """A notice when the workspace has no subscription and fewer free publications left than posts to create
    (spec: three free publications, then 402 subscription_required): said by `plan`, before `apply` stops at it.
    None when all fit, or when the key may not read the workspace (scope workspace:read)."""

    if not creates:
        return None
    try:
        ws = client.get_workspace()
    except ApiError:
        return None
    if ws.plan.name != "FREE" or ws.free_publications_left >= creates:
        return None
    return (
        f"this workspace has no subscription: {ws.free_publications_left} free publication(s) left for "
        f"{creates} post(s) to create — apply stops at 402 subscription_required once they are used (choose "
        "a plan; on your own data dir: `socialpub admin plan GROWTH`)"
    )


def resolve_generations(
    client: Any, occurrences: Iterable[Occurrence], file_hash: Any
) -> tuple[dict[str, GenState], int | None]:
    """For each occurrence with `generate:`: the idempotencyKey of its generation (the occurrence key and the
    spec's digest, `recipe-gen-<sha256>`, suffixed `-N` past the keys whose generations failed), the generation
    already made with it, and the price of a new one. Reads the workspace's generations once (GET
    /v1/generations, every page: their `idempotencyKey`, and `credits`: the balance and the price table); no
    request at all when no occurrence has `generate:`. Returns ({occurrence key: GenState}, balance)."""
    wanted = [o for o in occurrences if o.generate is not None]
    if not wanted:
        return {}, None
    by_key: dict[str, Any] = {}
    cursor: str | None = None
    credits: Any = None
    while True:
        page = client.list_generations(limit=100, cursor=cursor)
        credits = credits or page.credits
        for g in page.items:
            key = getattr(g, "idempotency_key", None)
            if key and key.startswith(GENERATION_KEY_PREFIX):
                by_key.setdefault(key, g)
        cursor = page.next_cursor
        if not cursor:
            break
    out: dict[str, GenState] = {}
    for occ in wanted:
        spec = occ.generate
        assert spec is not None
        digest = spec.digest(file_hash) or "unreadable"
        retry = 0
        while (
            found := by_key.get(generation_key(occ.key, digest, retry))
        ) is not None and found.status == GenerationStatus.FAILED:
            retry += 1  # a failed generation was refunded: the next apply makes a new one
        out[occ.key] = GenState(
            key=generation_key(occ.key, digest, retry),
            existing=found,
            cost=_price(credits, spec.type, spec.duration_sec),
        )
    return out, (credits.balance if credits is not None else None)


def _price(credits: Any, type_: str, duration_sec: int | None) -> int | None:
    """The price of a generation from the API's price table (`credits.cost`, `credits.clip` of GET
    /v1/generations): never hard-coded here."""
    if credits is None:
        return None
    if type_ == "image":
        return credits.cost.get("IMAGE")
    return credits.clip.get(str(duration_sec or 5))


def account_problems(client: Any, result: Plan) -> list[Problem]:
    """What `apply` would refuse in the posts to create — a target naming no active account of the workspace
    (recipes.apply.check_targets) — said by `plan` and `apply --dry-run` too, so a CI gate on the plan sees it.
    Nothing when the key may not list the accounts (scope accounts:read: apply will say so)."""

    if not result.create:
        return []
    try:
        accounts = list(client.list_accounts().items)
    except ApiError:
        return []
    return check_targets(result.create, accounts)
