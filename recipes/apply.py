"""Make a plan so, through the client: media uploaded once, posts created with their derived idempotency keys and
this set's labels, changed scheduled posts PATCHed, vanished ones cancelled (when the plan has them: --prune).

Each file is applied all-or-nothing as far as the API allows:
1. everything is checked before the first write: every target names a connected, active account (GET
   /v1/accounts), every media file can be read; a file that fails a check is not applied at all;
2. the file's media are uploaded (or found already uploaded), then its `generate:` generations created with
   their derived idempotency keys (a replay costs nothing) and waited for, before any post changes: a failed
   generation fails the file with its `error` sentence, nothing of the file applied;
3. its creates, then its updates, then its cancels; if one fails, what this run did to the file is undone
   (posts it created are cancelled, posts it updated get their previous values back) and the outcome says, item
   by item, what was applied, what failed, what was not attempted and what was undone. A cancel cannot be undone:
   cancels come last for that reason.
One file's failure never stops the other files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backend.schemas.statuses import GENERATION_FINAL, GenerationStatus, PostStatus
from recipes.media import MediaStore
from recipes.model import LABEL_KEY, LABEL_SET, LABEL_ZONE, Problem
from recipes.plan import Item, Plan, iso, problem_json, target_key
from socialpub_tui.client.errors import ApiError, WaitTimeout

ActionKind = Literal["create", "update", "cancel"]
GENERATE_TIMEOUT_S = 900.0
"""How long `apply` waits for one generation to complete (a video takes minutes); `--generate-timeout`."""
ActionStatus = Literal["done", "existing", "failed", "not_applied", "rolled_back", "rollback_failed"]


@dataclass
class Action:
    """One change of the plan and what became of it."""

    kind: ActionKind
    item: Item
    status: ActionStatus = "not_applied"
    post: Any = None  # the post created or updated (PostOut)
    error: str | None = None
    error_code: str | None = None

    @property
    def post_id(self) -> str | None:
        if self.post is not None:
            return str(self.post.id)
        return self.item.post_id

    def to_json(self) -> dict[str, Any]:
        out = self.item.to_json() | {"action": self.kind, "result": self.status}
        if self.post_id:
            out["postId"] = self.post_id
        if self.error:
            out["error"] = self.error_code or "error"
            out["message"] = self.error
        return out


FileStatus = Literal["applied", "unchanged", "failed", "invalid"]


@dataclass
class FileOutcome:
    file: str
    status: FileStatus
    actions: list[Action] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    error: str | None = None

    def summary(self) -> str:
        """What was and was not applied, in a sentence."""
        if self.status == "invalid":
            first = self.problems[0] if self.problems else None
            return f"not applied: {first.message if first else self.error}"
        if self.status == "failed":
            by: dict[str, int] = {}
            for a in self.actions:
                by[a.status] = by.get(a.status, 0) + 1
            parts = [f"{n} {s.replace('_', ' ')}" for s, n in sorted(by.items())]
            return f"failed ({self.error}); " + ", ".join(parts)
        return "applied" if self.status == "applied" else "unchanged"


@dataclass
class ApplyResult:
    plan: Plan
    files: list[FileOutcome] = field(default_factory=list)
    uploaded: int = 0
    reused: int = 0

    @property
    def ok(self) -> bool:
        return not self.plan.errors and all(f.status in ("applied", "unchanged") for f in self.files)

    def actions(self, kind: str, status: Iterable[str] = ("done", "existing")) -> list[Action]:
        wanted = set(status)
        return [a for f in self.files for a in f.actions if a.kind == kind and a.status in wanted]

    def unread(self) -> list[str]:
        """The files that did not load (their problems are the plan's errors): none of their posts was touched."""
        applied = {f.file for f in self.files}
        return sorted({p.file for p in self.plan.errors} - applied)

    def counts(self) -> dict[str, int]:
        failed = [a for f in self.files for a in f.actions if a.status != "done" and a.status != "existing"]
        return {
            "created": len(self.actions("create")),
            "updated": len(self.actions("update")),
            "cancelled": len(self.actions("cancel")),
            "unchanged": len(self.plan.unchanged),
            "notApplied": len(failed),
            "filesFailed": sum(f.status in ("failed", "invalid") for f in self.files) + len(self.unread()),
            "mediaUploaded": self.uploaded,
            "mediaReused": self.reused,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "created": [a.to_json() for a in self.actions("create")],
            "updated": [a.to_json() for a in self.actions("update")],
            "cancelled": [a.to_json() for a in self.actions("cancel")],
            "unchanged": [i.to_json() for i in self.plan.unchanged],
            "failed": [
                a.to_json() for f in self.files for a in f.actions if a.status not in ("done", "existing")
            ],
            "errors": [problem_json(p) for p in self.plan.errors]
            + [
                {"file": f.file, "line": 0, "column": 0, "code": "apply_failed", "message": f.summary()}
                for f in self.files
                if f.status == "failed"
            ]
            + [problem_json(p) for f in self.files if f.status == "invalid" for p in f.problems],
            "files": [{"file": f.file, "status": f.status, "summary": f.summary()} for f in self.files]
            + [
                {"file": name, "status": "invalid", "summary": "not valid: nothing applied (see errors)"}
                for name in self.unread()
            ],
            "notices": list(self.plan.notices),
            "summary": self.counts(),
        }


# ---- checks before any write -------------------------------------------------------------------------------


def check_targets(items: Iterable[Item], accounts: list[Any]) -> list[Problem]:
    """Every target of the posts to create names an active account of the workspace (a plain network name: its
    default account)."""

    by_id = {a.id: a for a in accounts}
    defaults = {a.platform for a in accounts if a.status == "active"}
    problems: list[Problem] = []
    for item in items:
        occ = item.occurrence
        if occ is None:
            continue
        for target in occ.targets:
            platform, channel = target_key(target)
            why = None
            if channel is None and platform not in defaults:
                why = f"no active {platform} account is connected (socialpub accounts list)"
            elif channel is not None:
                acc = by_id.get(channel)
                if acc is None or acc.platform != platform:
                    why = f"channelId {channel!r} is not a {platform} account of this workspace"
                elif acc.status != "active":
                    why = f"the {platform} account {acc.name!r} is {acc.status}"
            if why:
                problems.append(
                    Problem(occ.file, occ.line, 0, f"entry {occ.entry!r}: {why}", "channel_not_connected")
                )
    return problems


def check_media(items: Iterable[Item]) -> list[Problem]:
    """Every media file can still be read (recipes.load checked they exist when it read the files)."""
    problems: list[Problem] = []
    for item in items:
        occ = item.occurrence
        if occ is None:
            continue
        for path in occ.media:
            if not path.is_file():
                problems.append(
                    Problem(
                        occ.file,
                        occ.line,
                        0,
                        f"entry {occ.entry!r}: media {path} cannot be read",
                        "media_not_found",
                    )
                )
        if item.generate is not None and occ.generate is not None:
            for source in occ.generate.sources:
                if not isinstance(source, str) and not source.is_file():
                    problems.append(
                        Problem(
                            occ.file,
                            occ.line,
                            0,
                            f"entry {occ.entry!r}: the start image {source} of `generate:` cannot be read",
                            "media_not_found",
                        )
                    )
    return problems


# ---- executing -------------------------------------------------------------------------------------------


def create_body(item: Item, urls: list[str], set_name: str) -> dict[str, Any]:
    occ = item.occurrence
    assert occ is not None
    body: dict[str, Any] = {
        "targets": list(occ.targets),
        "content": occ.content,
        "mediaUrls": urls,
        "scheduledAt": iso(occ.scheduled_at),
        "idempotencyKey": item.idempotency_key,
        "labels": {LABEL_SET: set_name, LABEL_KEY: occ.key, LABEL_ZONE: occ.zone},
    }
    if occ.options:
        body["options"] = dict(occ.options)
    return body


def patch_body(item: Item, urls: list[str] | None) -> dict[str, Any]:
    occ = item.occurrence
    assert occ is not None
    body: dict[str, Any] = {}
    if "content" in item.changes:
        body["content"] = occ.content
    if "mediaUrls" in item.changes and urls is not None:
        body["mediaUrls"] = urls
    if "scheduledAt" in item.changes:
        body["scheduledAt"] = iso(occ.scheduled_at)
    if "options" in item.changes:
        body["options"] = dict(occ.options)
    return body


def _error(err: Exception) -> tuple[str, str]:
    code = getattr(err, "code", None) or type(err).__name__
    message = str(err)
    details = getattr(err, "details", None) or []
    for d in details[:3]:
        if isinstance(d, dict) and d.get("message"):
            message += f"; {d.get('platform') or d.get('field') or ''} {d['message']}".rstrip()
    return str(code), message


class Applier:
    """Applies plans through one client. `on_action(action)` is called after each change (done or failed), for
    progress bars and the watcher's log."""

    def __init__(
        self,
        client: Any,
        media: MediaStore,
        *,
        on_action: Callable[[Action], None] | None = None,
        on_upload: Callable[[str], None] | None = None,
        on_generation: Callable[[Item, Any], None] | None = None,
        generate_timeout: float | None = GENERATE_TIMEOUT_S,
    ) -> None:
        self.client = client
        self.media = media
        self.on_action = on_action
        self.on_upload = on_upload
        self.on_generation = on_generation
        self.generate_timeout = generate_timeout
        self._accounts: list[Any] | None = None
        self.generations: list[Any] = []  # the generations this applier created or found (final states)

    def accounts(self, refresh: bool = False) -> list[Any]:
        if self._accounts is None or refresh:
            self._accounts = list(self.client.list_accounts().items)
        return self._accounts

    def apply(self, plan: Plan) -> ApplyResult:
        result = ApplyResult(plan)
        uploaded0, reused0 = self.media.uploaded, self.media.reused
        by_file = plan.by_file()
        try:
            if by_file:
                accounts = self.accounts(refresh=True)
                checks = {
                    f: check_targets((i for i in items if i.kind == "create"), accounts)
                    + check_media(i for i in items if i.kind in ("create", "update"))
                    for f, items in by_file.items()
                }
            else:
                checks = {}
            for file, items in by_file.items():
                if checks[file]:
                    outcome = FileOutcome(file, "invalid", [Action(_kind(i), i) for i in items], checks[file])
                else:
                    outcome = self.apply_file(plan.set_name, file, items)
                result.files.append(outcome)
        finally:
            self.media.state.save()
        result.uploaded = self.media.uploaded - uploaded0
        result.reused = self.media.reused - reused0
        return result

    def apply_file(self, set_name: str, file: str, items: list[Item]) -> FileOutcome:
        order = {"create": 0, "update": 1, "cancel": 2}
        actions = [Action(_kind(i), i) for i in sorted(items, key=lambda i: order[i.kind])]
        outcome = FileOutcome(file, "applied", actions)
        urls: dict[str, list[str]] = {}
        uploading: Path | None = None
        try:  # media first: uploading changes no post
            for a in actions:
                occ = a.item.occurrence
                if occ is not None and (a.kind == "create" or "mediaUrls" in a.item.changes):
                    urls[a.item.key] = []
                    for uploading in occ.media:
                        urls[a.item.key].append(self._url(uploading))
        except (ApiError, OSError) as err:
            code, message = _error(err)
            name = f" ({uploading.name})" if uploading is not None else ""
            outcome.status, outcome.error = "failed", f"media upload failed{name}: {message}"
            for a in actions:
                a.error, a.error_code = "not attempted: a media upload of this file failed", code
            return outcome
        for a in (
            actions
        ):  # then the generations (idempotent, once per occurrence and spec): still no post changed
            if a.kind == "cancel" or a.item.generate is None or a.item.key not in urls:
                continue
            try:
                generation = self._generate(a.item)
            except (ApiError, OSError) as err:
                code, message = _error(err)
                if isinstance(err, WaitTimeout) and getattr(self.client, "embedded", False):
                    message += (
                        "; the embedded backend makes it inside this command, so it stops here: it ends "
                        "failed, its credits refunded, when a socialpub command next runs the worker. Give "
                        "it a longer --generate-timeout, or apply against a server (`socialpub serve`)"
                    )
                generation, error = None, f"generation for {a.item.label()} failed: {message}"
            else:
                code, error = "generation_failed", None
                if generation.status != GenerationStatus.COMPLETED or not generation.media_url:
                    error = f"generation {generation.id} for {a.item.label()} failed: {generation.error or 'no file'}"
            if error is not None:
                outcome.status, outcome.error = "failed", error
                a.status, a.error, a.error_code = "failed", error, code
                for rest in actions:
                    if rest is not a:
                        rest.error, rest.error_code = "not attempted: a generation of this file failed", code
                self._notify(a)
                return outcome
            assert generation is not None
            urls[a.item.key] = [str(generation.media_url), *urls[a.item.key]]
        for n, a in enumerate(actions):
            try:
                self._do(a, set_name, urls)
            except (ApiError, OSError) as err:
                a.status = "failed"
                a.error_code, a.error = _error(err)
                outcome.status = "failed"
                outcome.error = f"{a.kind} {a.item.label()}: {a.error}"
                self._notify(a)
                for rest in actions[n + 1 :]:
                    rest.error = "not attempted: an earlier change of this file failed"
                self._roll_back(actions[:n])
                return outcome
            self._notify(a)
        return outcome

    def _generate(self, item: Item) -> Any:
        """The item's generation, created with its derived idempotencyKey (a replay answers the one made already,
        nothing charged again), waited for until completed or failed (`generate_timeout`: WaitTimeout)."""
        occ, state = item.occurrence, item.generate
        assert occ is not None and occ.generate is not None and state is not None
        spec = occ.generate
        sources = [s if isinstance(s, str) else self._url(s) for s in spec.sources]
        generation = self.client.create_generation(spec.body(sources), idempotency_key=state.key)
        self._on_generation(item, generation)
        if generation.status not in GENERATION_FINAL:
            generation = self.client.wait_generation(
                generation.id, timeout=self.generate_timeout, on_update=lambda g: self._on_generation(item, g)
            )
        self.generations.append(generation)
        return generation

    def _on_generation(self, item: Item, generation: Any) -> None:
        if self.on_generation is not None:
            self.on_generation(item, generation)

    def _url(self, path: Any) -> str:
        before = self.media.uploaded
        url = self.media.url_for(path)
        if self.on_upload is not None and self.media.uploaded > before:
            self.on_upload(str(path))
        return url

    def _do(self, a: Action, set_name: str, urls: dict[str, list[str]]) -> None:
        item = a.item
        if a.kind == "create":
            for _ in range(5):
                try:
                    post = self.client.create_post(create_body(item, urls[item.key], set_name))
                except ApiError as err:
                    if err.code != "idempotency_key_reused":
                        raise
                    item.generation += (
                        1  # the key made another post (another body) meanwhile: a fresh generation
                    )
                    continue
                replayed = getattr(post, "_http_status", None) == 200
                if replayed and post.status == PostStatus.CANCELLED:
                    item.generation += (
                        1  # the key's post was cancelled since it was listed: a fresh generation
                    )
                    continue
                a.post, a.status = post, "existing" if replayed else "done"
                return
            raise RuntimeError(
                f"{item.key}: every idempotency key tried belongs to a cancelled post or to another request"
            )
        if a.kind == "update":
            a.post = self.client.edit_post(item.post_id, patch_body(item, urls.get(item.key)))
            a.status = "done"
            return
        self.client.cancel_post(item.post_id)
        a.status = "done"

    def _roll_back(self, done: list[Action]) -> None:
        for a in reversed(done):
            if a.status != "done":
                continue
            try:
                if a.kind == "create":
                    self.client.cancel_post(a.post.id)
                elif a.kind == "update":
                    old = a.item.post
                    body = {
                        k: v
                        for k, v in (
                            ("content", old.content),
                            ("mediaUrls", list(old.media_urls)),
                            ("scheduledAt", old.scheduled_at),
                            ("options", dict(old.options or {})),
                        )
                        if k in a.item.changes
                    }
                    self.client.edit_post(old.id, body)
                else:
                    continue  # a cancel cannot be undone (cancels come last for that reason)
                a.status = "rolled_back"
                a.error = "undone: a later change of this file failed"
            except Exception as err:  # noqa: BLE001 - reported item by item
                a.status = "rollback_failed"
                a.error_code, message = _error(err)
                a.error = f"applied, and could not be undone: {message}"

    def _notify(self, a: Action) -> None:
        if self.on_action is not None:
            self.on_action(a)


def _kind(item: Item) -> ActionKind:
    if item.kind == "unchanged":
        raise ValueError("an unchanged item is no action")
    return item.kind
