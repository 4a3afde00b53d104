"""The diff between a recipe set's occurrences and its posts on the backend: pure, given (occurrences, the set's
posts, now, the media hashes). `recipes.apply` executes a plan through the client; `socialpub recipes plan` prints
it.

Rules (README.md, "Recipes"):
- A post belongs to an occurrence through its labels: `LABEL_SET` = the set, `LABEL_KEY` = the occurrence key.
  Posts without this set's label are never looked at (a post made by hand, another folder's posts).
- No live post for an occurrence → create, with `idempotency_key(key, generation)`; the generation is bumped past
  every earlier post of the key (one cancelled by `--prune` and re-added, or replaced).
- A scheduled post whose content, media, time or options differ → update, listing `changes`.
  Targets cannot be PATCHed: a change of targets is planned as a create (`replaces` the old post) plus a cancel
  of the old post (reason `targets_changed`).
- A post already processing or sent (completed, partial, failed) → unchanged, never touched.
- An occurrence in the past is never created (a notice says so); an existing post of it is left as it is.
- With `prune`, a *scheduled* post of this set whose occurrence is gone from the files → cancel. Only files the
  plan covers count: a file that failed to load (broken YAML) keeps its posts; a single file given as PATH covers
  only itself. Without `prune`, vanished occurrences are a notice.
- An occurrence with `generate:` wants the file of its generation first in its media: the generation made with
  its derived key (recipes.runner.resolve_generations). Not made yet (new, or the spec edited) → create, or
  update with `mediaUrls`, the item carrying `generate` (what it costs); made and on the post → no change.
- Media are compared by the content hash of the local files: the post's media URLs map back to the hashes of
  the files they were uploaded from (recipes.media's state file); an unknown URL counts as a change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from backend.schemas.statuses import GenerationStatus, PostStatus
from recipes.load import reread_in_zone
from recipes.model import LABEL_KEY, LABEL_SET, LABEL_ZONE, Loaded, Occurrence, Problem, idempotency_key
from socialpub_tui.client.networks import Networks

Kind = Literal["create", "update", "unchanged", "cancel"]
SENT = frozenset({"processing", "completed", "partial", "failed"})
_GENERATION = re.compile(r"^recipe-[0-9a-f]{40}(?:-(\d+))?$")


def iso(instant: datetime) -> str:
    """An instant as the plan prints it: ISO 8601 in UTC, `2027-01-05T08:00:00Z`."""
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_instant(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        found = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def labels_of(post: Any) -> dict[str, str]:
    return dict(getattr(post, "labels", None) or {})


def generation_of(post: Any) -> int:
    """The generation an idempotencyKey was derived with (0 for a key this module did not derive)."""
    found = _GENERATION.match(getattr(post, "idempotency_key", None) or "")
    return int(found.group(1) or 0) if found else 0


def file_of_key(key: str, set_name: str) -> str | None:
    """The file part of an occurrence key `<set>/<file>#<entry>[@<local>]` (None when not of this set)."""
    prefix = f"{set_name}/"
    if not key.startswith(prefix) or "#" not in key:
        return None
    return key[len(prefix) :].rpartition("#")[0]


def entry_of_key(key: str) -> str:
    return key.rpartition("#")[2].partition("@")[0]


def normal_options(options: Mapping[str, Any] | None, networks: Networks) -> dict[str, Any]:
    """Options as the backend stores them (each network's defaults filled in — its options schema's, GET
    /v1/networks —, nulls left out), so that equal options compare equal."""
    out: dict[str, Any] = {}
    for network, value in (options or {}).items():
        if not isinstance(value, Mapping):
            out[network] = value
            continue
        props = (networks.options_schema(network) or {}).get("properties") or {}
        defaults = {k: p["default"] for k, p in props.items() if p.get("default") is not None}
        out[network] = {k: v for k, v in {**defaults, **value}.items() if v is not None}
    return json.loads(json.dumps(out, sort_keys=True, default=str))


def target_key(target: Any) -> tuple[str, str | None]:
    """(platform, channelId or None) of a target given as in POST /v1/posts."""
    if isinstance(target, str):
        return target.strip().lower(), None
    if isinstance(target, Mapping):
        channel = target.get("channelId", target.get("channel_id"))
        return str(target.get("platform", "")).strip().lower(), str(channel) if channel else None
    return str(getattr(target, "platform", "")), getattr(target, "channel_id", None)


def targets_match(wanted: Sequence[Any], post: Any) -> bool:
    """Whether a post's targets are the occurrence's: the same networks, and every account named by channelId
    among them (a plain network name matches any account of that network: its default when the post was made)."""
    have = [(t.platform, t.account_id) for t in post.targets]
    want = [target_key(t) for t in wanted]
    if sorted(p for p, _ in have) != sorted(p for p, _ in want):
        return False
    accounts = [(p, a) for p, a in have]
    for platform, channel in want:
        if channel is not None and (platform, channel) not in accounts:
            return False
    return True


@dataclass
class GenState:
    """What an occurrence's `generate:` needs (recipes.runner.resolve_generations): the idempotencyKey the next
    apply creates (or replays) it with, the generation already made with that key (not failed) if any, and what a
    new one costs."""

    key: str
    existing: Any = (
        None  # GenerationOut made with `key`, pending, processing or completed; None: a new one is made
    )
    cost: int | None = None  # credits a new generation costs (None: not known)

    @property
    def url(self) -> str | None:
        """The generated file's URL, once completed."""
        e = self.existing
        return (
            str(e.media_url)
            if e is not None and e.status == GenerationStatus.COMPLETED and e.media_url
            else None
        )

    @property
    def charge(self) -> int:
        """The credits an apply would charge for it (0 when it exists already)."""
        return 0 if self.existing is not None else (self.cost or 0)


@dataclass
class Item:
    """One line of a plan: an occurrence (or, for a vanished one, a post) and what to do."""

    kind: Kind
    key: str
    file: str
    entry: str
    scheduled_at: datetime | None
    targets: list[Any]
    occurrence: Occurrence | None = None
    post: Any = None  # PostOut of the existing post, when there is one
    changes: list[str] = field(default_factory=list)
    before: dict[str, Any] = field(default_factory=dict)
    generation: int = 0  # create: the generation of the idempotency key
    replaces: str | None = None  # create: the post it replaces (targets changed)
    reason: str | None = (
        None  # cancel: gone | targets_changed; unchanged: processing | completed | ... | past
    )
    generate: GenState | None = None  # create/update: the generation the post's media need

    @property
    def post_id(self) -> str | None:
        return self.post.id if self.post is not None else None

    @property
    def idempotency_key(self) -> str:
        return idempotency_key(self.key, self.generation)

    def label(self) -> str:
        """`launch.yaml#launch` or `weekly.yaml#tips@2027-01-05T09:00`: the key without the set."""
        return self.key.partition("/")[2] or self.key

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "entry": self.entry,
            "key": self.key,
            "scheduledAt": iso(self.scheduled_at) if self.scheduled_at else None,
            "targets": list(self.targets),
        }
        if self.occurrence is not None and self.occurrence.local is not None:
            out["local"] = self.occurrence.local.strftime("%Y-%m-%dT%H:%M")
        if self.post is not None:
            out["postId"] = self.post.id
            out["status"] = self.post.status
        if self.kind == "update":
            out["changes"] = list(self.changes)
            out["before"] = dict(self.before)
        if self.kind == "create":
            out["idempotencyKey"] = self.idempotency_key
            if self.replaces:
                out["replaces"] = self.replaces
                out["changes"] = list(self.changes)
        if self.reason:
            out["reason"] = self.reason
        if self.generate is not None and self.occurrence is not None and self.occurrence.generate is not None:
            spec, g = self.occurrence.generate, self.generate
            out["generate"] = {
                "type": spec.type,
                "prompt": spec.prompt,
                "aspectRatio": spec.aspect_ratio,
                "durationSec": spec.duration_sec,
                "idempotencyKey": g.key,
                "creditsCost": g.charge if g.cost is not None or g.existing is not None else None,
            }
            if g.existing is not None:
                out["generate"]["generationId"] = g.existing.id
                out["generate"]["status"] = g.existing.status
        return out


@dataclass
class Plan:
    set_name: str
    create: list[Item] = field(default_factory=list)
    update: list[Item] = field(default_factory=list)
    unchanged: list[Item] = field(default_factory=list)
    cancel: list[Item] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    vanished: list[Item] = field(
        default_factory=list
    )  # without prune: scheduled posts whose occurrence is gone
    skipped_past: list[Occurrence] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # every file the plan covers, in order
    vanished_notice: str | None = None
    balance: int | None = None  # the workspace's credits, when the plan involves generations

    def credits(self) -> dict[str, Any] | None:
        """{required, balance, balanceAfter, enough} for the generations this plan makes; None when none is
        involved."""
        items = [i for i in [*self.create, *self.update] if i.generate is not None]
        if not items:
            return None
        required = sum(i.generate.charge for i in items if i.generate is not None)
        out: dict[str, Any] = {
            "required": required,
            "generations": sum(1 for i in items if i.generate is not None and i.generate.existing is None),
            "balance": self.balance,
        }
        if self.balance is not None:
            out["balanceAfter"] = self.balance - required
            out["enough"] = self.balance >= required
        return out

    @property
    def pending(self) -> bool:
        return bool(self.create or self.update or self.cancel)

    def strict(self) -> None:
        """`--strict`: each occurrence skipped because its time has passed (it has no post and never will) is an
        error of its file (code `occurrence_in_past`) rather than a notice, so a cron job's exit status shows it."""
        for occ in self.skipped_past:
            self.errors.append(
                Problem(
                    occ.file,
                    occ.line,
                    0,
                    f"{occ.key.partition('/')[2]}: its time {iso(occ.scheduled_at)} is past: it was never "
                    "created and will not be (--strict makes this an error)",
                    "occurrence_in_past",
                )
            )

    def items(self) -> list[Item]:
        return [*self.create, *self.update, *self.unchanged, *self.cancel]

    def by_file(self) -> dict[str, list[Item]]:
        """Changes per file (create, update, cancel), files in the plan's order."""
        out: dict[str, list[Item]] = {}
        for item in [*self.create, *self.update, *self.cancel]:
            out.setdefault(item.file, []).append(item)
        order = {f: i for i, f in enumerate(self.files)}
        return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))

    def to_json(self) -> dict[str, Any]:
        return {
            "create": [i.to_json() for i in self.create],
            "update": [i.to_json() for i in self.update],
            "unchanged": [i.to_json() for i in self.unchanged],
            "cancel": [i.to_json() for i in self.cancel],
            "errors": [problem_json(p) for p in self.errors],
            "notices": list(self.notices),
        } | ({"credits": c} if (c := self.credits()) is not None else {})


def problem_json(p: Problem) -> dict[str, Any]:
    return {"file": p.file, "line": p.line, "column": p.column, "code": p.code, "message": p.message}


@dataclass
class Scope:
    """Which files a plan covers. `whole_set`: PATH was the recipe folder, so a file absent from it is gone (its
    posts are vanished); otherwise only the files read count. `only`: restrict further (watch: the files that
    changed). `broken`: files read with problems: their posts are left alone (last good state)."""

    files: set[str]
    broken: set[str]
    whole_set: bool = True
    only: set[str] | None = None

    def covers(self, file: str) -> bool:
        if self.only is not None and file not in self.only:
            return False
        return self.whole_set or file in self.files

    @classmethod
    def of(cls, loaded: Loaded, *, whole_set: bool = True, only: Iterable[str] | None = None) -> Scope:
        return cls(
            files={f.file for f in loaded.files},
            broken={f.file for f in loaded.files if not f.ok},
            whole_set=whole_set,
            only=set(only) if only is not None else None,
        )


def _media_change(
    occ: Occurrence,
    post: Any,
    media_hash: Callable[[Path], str | None],
    url_hash: Mapping[str, str],
    generated: str | None = None,
) -> bool:
    urls = list(post.media_urls)
    if occ.generate is not None:  # the generated file first: the URL of the spec's generation, once completed
        if generated is None or not urls or urls[0] != generated:
            return True
        urls = urls[1:]
    wanted = [media_hash(p) for p in occ.media]
    have = [url_hash.get(u) for u in urls]
    if len(wanted) != len(have):
        return True
    return any(w is None or h is None or w != h for w, h in zip(wanted, have, strict=True))


def compare(
    occ: Occurrence,
    post: Any,
    media_hash: Callable[[Path], str | None],
    url_hash: Mapping[str, str],
    generated: str | None = None,
    networks: Networks | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """The fields of a scheduled post that differ from its occurrence (wire names), and their current values.
    `generated`: the URL of the file made for the occurrence's `generate:` (None: not made yet); `networks`: the
    server's (their options' defaults)."""
    networks = networks if networks is not None else Networks()
    changes: list[str] = []
    before: dict[str, Any] = {}
    if post.content != occ.content:
        changes.append("content")
        before["content"] = post.content
    if _media_change(occ, post, media_hash, url_hash, generated):
        changes.append("mediaUrls")
        before["mediaUrls"] = list(post.media_urls)
    current = parse_instant(post.scheduled_at)
    if current is None or current != occ.scheduled_at:
        changes.append("scheduledAt")
        before["scheduledAt"] = (
            iso(current) if current is not None else post.scheduled_at
        )  # as the item's own
    if normal_options(post.options, networks) != normal_options(occ.options, networks):
        changes.append("options")
        before["options"] = dict(post.options or {})
    return changes, before


def _item(kind: Kind, occ: Occurrence, post: Any = None, **extra: Any) -> Item:
    return Item(
        kind,
        occ.key,
        occ.file,
        occ.entry,
        occ.scheduled_at,
        list(occ.targets),
        occurrence=occ,
        post=post,
        **extra,
    )


def _post_item(kind: Kind, key: str, file: str, post: Any, **extra: Any) -> Item:
    targets: list[Any] = [
        {"platform": t.platform, "channelId": t.account_id} if t.account_id else t.platform
        for t in post.targets
    ]
    return Item(
        kind, key, file, entry_of_key(key), parse_instant(post.scheduled_at), targets, post=post, **extra
    )


def _live(posts: list[Any]) -> Any:
    """The post standing for an occurrence: the newest not cancelled, scheduled ones first."""
    alive = [p for p in posts if p.status != PostStatus.CANCELLED]
    if not alive:
        return None
    alive.sort(key=lambda p: (p.status == PostStatus.SCHEDULED, generation_of(p), p.created_at))
    return alive[-1]


def pin_zones(loaded: Loaded, posts: Iterable[Any]) -> list[str]:
    """Files without `timezone:` are read in this machine's default zone; when their scheduled posts were made in
    another (their LABEL_ZONE: a laptop in Paris, then cron or CI in UTC), the file is read again in that zone,
    in place, so that applying it elsewhere never moves its posts. Returns a notice per file so read."""
    zones: dict[str, set[str]] = {}
    for post in posts:
        labels = labels_of(post)
        file = file_of_key(labels.get(LABEL_KEY, ""), loaded.set_name)
        if (
            labels.get(LABEL_SET) == loaded.set_name
            and file
            and labels.get(LABEL_ZONE)
            and post.status == PostStatus.SCHEDULED
        ):
            zones.setdefault(file, set()).add(labels[LABEL_ZONE])
    notices = []
    for result in list(loaded.files):
        made_in = zones.get(result.file, set())
        current = result.occurrences[0].zone if result.occurrences else None
        if result.zone_given or not result.ok or current is None or len(made_in) != 1 or current in made_in:
            continue
        (zone,) = made_in
        reread_in_zone(loaded, result.file, zone)
        notices.append(
            f"{result.file} has no `timezone:`: read in {zone}, the zone its scheduled posts were made "
            f"in (this machine's default is {current}); add `timezone:` to the file to choose"
        )
    return notices


def plan(
    loaded: Loaded,
    posts: Iterable[Any],
    now: datetime,
    *,
    prune: bool = False,
    scope: Scope | None = None,
    media_hash: Callable[[Path], str | None] = lambda p: None,
    url_hash: Mapping[str, str] | None = None,
    generations: Mapping[str, GenState] | None = None,
    balance: int | None = None,
) -> Plan:
    """Diff `loaded` against `posts` (the backend's posts with this set's label, every status) at `now`.
    `generations`: per occurrence key with `generate:`, what its generation needs (recipes.runner); `balance`: the
    workspace's credits (for the plan's `credits` summary)."""
    url_hash = url_hash or {}
    generations = generations or {}
    scope = scope or Scope.of(loaded)
    out = Plan(loaded.set_name, balance=balance)
    out.files = sorted({f.file for f in loaded.files if scope.covers(f.file)})
    for f in loaded.files:
        if scope.covers(f.file):
            out.errors.extend(f.problems)

    by_key: dict[str, list[Any]] = {}
    for post in posts:
        labels = labels_of(post)
        if labels.get(LABEL_SET) != loaded.set_name or not labels.get(LABEL_KEY):
            continue  # not this set's: never touched
        by_key.setdefault(labels[LABEL_KEY], []).append(post)

    seen: set[str] = set()
    occurrences = sorted(
        (o for o in loaded.occurrences if scope.covers(o.file)), key=lambda o: (o.file, o.scheduled_at, o.key)
    )
    for occ in occurrences:
        if occ.key in seen:
            out.errors.append(
                Problem(
                    occ.file,
                    occ.line,
                    0,
                    f"{occ.key}: two occurrences have this key; the second is ignored",
                    "duplicate_key",
                )
            )
            continue
        seen.add(occ.key)
        history = by_key.get(occ.key, [])
        post = _live(history)
        gen = generations.get(occ.key) if occ.generate is not None else None
        if occ.generate is not None and gen is None:
            gen = GenState(key="")  # not resolved (a plan without a backend): shown as needing a generation
        generated = gen.url if gen is not None else None
        next_generation = max((generation_of(p) for p in history), default=-1) + 1
        if post is None:
            if occ.scheduled_at <= now:
                out.skipped_past.append(occ)
                continue
            out.create.append(_item("create", occ, generation=next_generation, generate=gen))
            continue
        if post.status != PostStatus.SCHEDULED:
            out.unchanged.append(_item("unchanged", occ, post, reason=post.status))
            continue
        if occ.scheduled_at <= now:
            out.unchanged.append(_item("unchanged", occ, post, reason="past"))
            out.notices.append(
                f"{occ.key.partition('/')[2]}: its time {iso(occ.scheduled_at)} is past; post "
                f"{post.id} is left as it is"
            )
            continue
        if not targets_match(occ.targets, post):
            changes, _ = compare(occ, post, media_hash, url_hash, generated, loaded.networks)
            out.create.append(
                _item(
                    "create",
                    occ,
                    generation=next_generation,
                    replaces=post.id,
                    changes=["targets", *changes],
                    generate=gen,
                )
            )
            out.cancel.append(_item("cancel", occ, post, reason="targets_changed"))
            continue
        changes, before = compare(occ, post, media_hash, url_hash, generated, loaded.networks)
        if changes:
            out.update.append(
                _item(
                    "update",
                    occ,
                    post,
                    changes=changes,
                    before=before,
                    generate=gen if "mediaUrls" in changes else None,
                )
            )
        else:
            out.unchanged.append(_item("unchanged", occ, post))

    live_keys = {o.key for o in loaded.occurrences}
    for key, history in sorted(by_key.items()):
        if key in seen or key in live_keys:  # live_keys: a live occurrence outside `only`
            continue
        file = file_of_key(key, loaded.set_name)
        if file is None or not scope.covers(file) or file in scope.broken:
            continue
        for post in history:
            if post.status != PostStatus.SCHEDULED:
                continue
            item = _post_item("cancel", key, file, post, reason="gone")
            (out.cancel if prune else out.vanished).append(item)

    if out.skipped_past:
        names = ", ".join(o.key.partition("/")[2] for o in out.skipped_past[:3])
        more = f" and {len(out.skipped_past) - 3} more" if len(out.skipped_past) > 3 else ""
        out.notices.append(
            f"{len(out.skipped_past)} occurrence(s) in the past skipped, never created: {names}{more}"
        )
    if out.vanished:
        out.vanished_notice = (
            f"{len(out.vanished)} scheduled post(s) of this set have no occurrence in the files "
            f"any more ({', '.join(i.label() for i in out.vanished[:3])}"
            f"{' …' if len(out.vanished) > 3 else ''}): kept; --prune cancels them"
        )
        out.notices.append(out.vanished_notice)
    for broken in sorted(scope.broken):
        if scope.covers(broken):
            out.notices.append(f"{broken}: not valid, so its posts are left as they are until it is fixed")
    return out
