"""`socialpub recipes watch`: keep a recipe folder applied while it is edited.

At start the whole folder is planned and applied (as `apply`), once the file watcher is listening. Then
`watchfiles` reports changes, grouped: a burst of writes (an editor's save, a copy of several files) becomes one
batch once the folder has been quiet for `step_ms` (at most `debounce_ms` after the first change). For each batch:

- the folder's YAML files are listed, and read again unless unchanged since they were last read (same size and
  modification time) and valid — and, when the batch added or removed other files (media), unless they could
  be affected: a file is read again when it names a removed file, or when its text could hold a glob (`*`, `?`,
  or `[` on a line with `/` or `.`), since an added image may complete its glob;
- each file's *fingerprint* — its occurrences and the content hashes of their media — is compared with the last
  one applied; the files whose fingerprint changed, and the files that disappeared, are planned and applied,
  nothing else. So a media file written after the YAML that names it counts for that YAML (the YAML was invalid
  — media not found — and becomes valid), and an image replaced in place changes its hash;
- the posts of those files are looked up by occurrence key (`runner.posts_for_keys`: a request a key when there
  are a few, the whole set otherwise), so a batch costs the same in a set of 20 posts or of 20,000.

A file that does not load (broken YAML, a missing media file) is reported once per distinct problem and its last
good state is kept: its posts stay as they are until it is fixed. A deleted (or renamed-away) file's scheduled
posts are cancelled only when the watcher was started with `--prune`; otherwise it says they were kept.
Each action is logged with the local time: `2026-11-24T10:00:03+01:00 created launch.yaml#launch → post_…`.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from recipes.apply import Action, Applier, ApplyResult
from recipes.load import check_set_name, load_file, recipe_files
from recipes.media import MediaStore
from recipes.model import FileResult, Loaded
from recipes.runner import make_plan, posts_for_keys
from socialpub_tui.look import inert, json_text

RECIPE_SUFFIXES = (".yaml", ".yml")
_GLOBBY = re.compile(r"[*?]|^[^\n]*\[[^\n]*[/.]", re.MULTILINE)


def could_glob(path: Path) -> bool:
    """Whether a recipe file's text could hold a media glob (false positives only cost a re-read)."""
    try:
        return bool(_GLOBBY.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return True


@dataclass
class Cached:
    stamp: tuple[int, int]  # size, mtime_ns
    result: FileResult
    globby: bool


@dataclass
class Batch:
    """What a batch of changes means for the YAML files read before it."""

    initial: bool = True
    added_other: bool = False  # a file other than YAML was added
    removed_other: tuple[str, ...] = ()  # files (or folders) other than YAML removed

    @classmethod
    def of(cls, changes: set[tuple[Any, str]]) -> Batch:
        added = removed = False
        gone: list[str] = []
        for kind, path in changes:
            if path.endswith(RECIPE_SUFFIXES):
                continue
            name = getattr(kind, "name", str(kind))
            added = added or name == "added"
            if name == "deleted":
                removed = True
                gone.append(path)
        return cls(False, added, tuple(gone) if removed else ())

    def reread(self, cached: Cached) -> bool:
        if self.initial or not cached.result.ok:
            return True
        if (self.added_other or self.removed_other) and cached.globby:
            return True
        return any(
            str(p) == g or str(p).startswith(g.rstrip("/") + "/")
            for g in self.removed_other
            for o in cached.result.occurrences
            for p in o.media
        )


def now_local(zone: tzinfo | None = None) -> str:
    """Now in `zone` (None: the system's), ISO 8601 with its offset."""
    return datetime.now(zone).astimezone(zone).isoformat(timespec="seconds")


def fingerprint(f: FileResult, hasher: Callable[[Path], str | None]) -> str:
    """What a file asks for, as one hash: its occurrences (every field) and its media's content."""
    h = hashlib.sha256()
    for o in sorted(f.occurrences, key=lambda o: o.key):
        h.update(
            repr(
                (
                    o.key,
                    o.scheduled_at.isoformat(),
                    o.content,
                    o.targets,
                    sorted(o.options.items()),
                    [(str(p), hasher(p)) for p in o.media],
                    o.generate.digest(hasher) if o.generate is not None else None,
                )
            ).encode()
        )
    return h.hexdigest()


def describe(action: Action, zone: tzinfo | None = None) -> str:
    """One line of the log for an action, its time in `zone` (None: the system's)."""
    item = action.item
    label = item.label()
    post = action.post_id or "-"
    if action.kind == "create":
        when = item.scheduled_at.astimezone(zone).isoformat(timespec="minutes") if item.scheduled_at else ""
        verb = "found existing" if action.status == "existing" else "created"
        extra = f" (replaces {item.replaces})" if item.replaces else ""
        text = f"{verb} {label} at {when} → {post}{extra}"
    elif action.kind == "update":
        text = f"updated {label} ({', '.join(item.changes)}) → {post}"
    else:
        why = "targets changed" if item.reason == "targets_changed" else "gone from the files"
        text = f"cancelled {label} ({why}) → {post}"
    if action.status not in ("done", "existing"):
        text = f"{action.status.replace('_', ' ').upper()}: {text}: {action.error}"
    return text


@dataclass
class Watcher:
    """Plans and applies a folder's changes. `run(stop)` blocks until `stop` is set (or Ctrl-C)."""

    root: Path
    client: Any
    store: MediaStore
    set_name: str | None = None
    default_zone: str | None = None
    shown_zone: tzinfo | None = None  # the log's times (--utc / --tz); None: the system's zone
    prune: bool = False
    log: Callable[[str], None] = print
    debounce_ms: int = 1600
    step_ms: int = 50
    good: dict[str, str] = field(default_factory=dict)  # file -> fingerprint last applied
    applied: dict[str, FileResult] = field(default_factory=dict)  # file -> its result last applied
    cache: dict[str, Cached] = field(default_factory=dict)  # file -> what was read, when
    reported: dict[str, tuple[str, ...]] = field(default_factory=dict)  # file -> problems last reported
    folder_gone: bool = False  # the watched folder itself disappeared: run() returns
    batches: int = 0
    json_lines: bool = False

    def _shown(self, path: str) -> str:
        p = Path(path)
        return p.relative_to(self.root).as_posix() if p.is_relative_to(self.root) else path

    def emit(self, text: str, event: str = "note", **data: Any) -> None:
        """A log line `<local time> <text>`, or with `json_lines` one JSON object a line: time, event (created,
        updated, cancelled, failed, uploaded, invalid, valid, watching, error, note, stopped), message, and the
        item's fields for an action (file, entry, key, scheduledAt, postId, …)."""
        if self.json_lines:
            self.log(json_text({"time": now_local(self.shown_zone), "event": event, "message": text, **data}))
        else:
            self.log(f"{now_local(self.shown_zone)} {inert(text)}")  # names and errors from the files: inert

    def _on_action(self, action: Action) -> None:
        event = {"create": "created", "update": "updated", "cancel": "cancelled"}[action.kind]
        if action.status not in ("done", "existing"):
            event = "failed"
        self.emit(describe(action, self.shown_zone), event, **action.to_json())

    def read(self, batch: Batch) -> Loaded:
        """The folder as `recipes.load.load` reads it, reusing what `batch` leaves valid (see the module)."""

        name = self.set_name if self.set_name is not None else self.root.resolve().name
        check_set_name(name)
        networks = self.client.networks()  # the server's (read once by the client)
        loaded = Loaded(root=self.root, set_name=name, networks=networks)
        cache: dict[str, Cached] = {}
        for path in recipe_files(self.root):
            rel = path.relative_to(self.root).as_posix()
            try:
                st = path.stat()
            except OSError:
                continue  # deleted while listed: the next batch says so
            stamp = (st.st_size, st.st_mtime_ns)
            hit = self.cache.get(rel)
            if hit is None or hit.stamp != stamp or batch.reread(hit):
                hit = Cached(
                    stamp,
                    load_file(
                        path,
                        rel=rel,
                        shown=rel,
                        set_name=name,
                        networks=networks,
                        default_zone=self.default_zone,
                    ),
                    could_glob(path),
                )
            cache[rel] = hit
            loaded.files.append(hit.result)
        self.cache = cache
        return loaded

    def sync(self, initial: bool = False, changes: set[tuple[Any, str]] | None = None) -> ApplyResult | None:
        """Read the folder, plan the files that changed since the last good state, apply them."""
        batch = Batch() if initial or changes is None else Batch.of(changes)
        if not self.root.is_dir():  # deleted, renamed, unmounted: not "every file was deleted" (--prune)
            self.folder_gone = True
            self.emit(
                f"the folder {self.root} is gone (deleted, moved or unmounted): nothing was cancelled; "
                "watch stops",
                "folder_gone",
            )
            return None
        try:
            loaded = self.read(batch)
        except Exception as exc:  # noqa: BLE001 - the folder itself could not be read: report, keep waiting
            self.emit(f"cannot read {self.root}: {exc}")
            return None
        prints: dict[str, str] = {}
        for f in loaded.files:
            problems = tuple(str(p) for p in f.problems)
            if problems:
                if self.reported.get(f.file) != problems:
                    for line in problems:
                        self.emit(f"invalid {line}", "invalid", file=f.file)
                    self.emit(f"{f.file}: keeping its last good state; waiting for a fix")
                    self.reported[f.file] = problems
                continue
            if f.file in self.reported:
                self.emit(f"{f.file} is valid again", "valid", file=f.file)
                del self.reported[f.file]
            prints[f.file] = fingerprint(f, self.store.hasher)
        present = {f.file for f in loaded.files}
        dirty = {name for name, fp in prints.items() if self.good.get(name) != fp}
        gone = {name for name in self.good if name not in present}
        for name in list(self.reported):
            if name not in present:
                del self.reported[name]
        if not dirty and not gone and not initial:
            return None
        only = None if initial else dirty | gone
        posts = None
        if not initial:
            by_file = {f.file: f for f in loaded.files}
            keys = {o.key for name in dirty for o in by_file[name].occurrences}
            keys |= {
                o.key for name in dirty | gone if name in self.applied for o in self.applied[name].occurrences
            }
            posts = posts_for_keys(self.client, loaded.set_name, keys)
        plan = make_plan(
            self.client, loaded, self.store, prune=self.prune, whole_set=True, only=only, posts=posts
        )
        said_by_gone = {i.file for i in plan.vanished} <= gone  # the line about gone files below says it
        for notice in plan.notices:
            if "not valid" in notice or (said_by_gone and notice is plan.vanished_notice):
                continue  # invalid files were reported above, once
            self.emit(notice)
        if gone and not self.prune:
            self.emit(
                f"{', '.join(sorted(gone))}: gone from the folder; its scheduled posts are kept "
                "(start `watch --prune` to cancel them)"
            )
        applier = Applier(
            self.client,
            self.store,
            on_action=self._on_action,
            on_upload=lambda p: self.emit(f"uploaded {self._shown(p)}", "uploaded", path=p),
        )
        result = applier.apply(plan)
        failed = {f.file for f in result.files if f.status in ("failed", "invalid")}
        for f in result.files:
            if f.status in ("failed", "invalid"):
                self.emit(f"{f.file}: {f.summary()}", "failed", file=f.file)
        by_name = {f.file: f for f in loaded.files}
        for name in prints:
            if (initial or name in dirty) and name not in failed:
                self.good[name] = prints[name]
                self.applied[name] = by_name[name]
        for name in gone:
            self.good.pop(name, None)
            self.applied.pop(name, None)
        if initial:
            counts = result.counts()
            self.emit(
                f"watching {self.root}: {counts['created']} created, {counts['updated']} updated, "
                f"{counts['cancelled']} cancelled, {counts['unchanged']} unchanged"
                f"{'' if result.ok else ', with errors'}; deletions {'applied' if self.prune else 'kept'}",
                "watching",
                **counts,
            )
        return result

    def run(self, stop: threading.Event | None = None, ready: threading.Event | None = None) -> None:
        """The first full sync runs once the file watcher is listening (its first timeout), so nothing written
        after "watching …" is logged can be missed."""
        import watchfiles

        started = False
        for changes in watchfiles.watch(
            self.root,
            debounce=self.debounce_ms,
            step=self.step_ms,
            stop_event=stop,
            rust_timeout=200,
            yield_on_timeout=True,
            raise_interrupt=True,
        ):
            if not started:
                started = True
                self._guarded(initial=True)
                if ready is not None:
                    ready.set()
                continue
            if not changes:
                continue
            self.batches += 1
            self._guarded(changes=changes)
            if self.folder_gone:
                return

    def _guarded(self, initial: bool = False, changes: set[tuple[Any, str]] | None = None) -> None:
        try:
            self.sync(initial=initial, changes=changes)
        except Exception as exc:  # noqa: BLE001 - a backend error on one batch: report, keep watching
            self.emit(f"error: {type(exc).__name__}: {exc}; will try again on the next change", "error")
