"""Post detail: one post, every target, what went wrong and what can be done about it.

Pushed by the posts and calendar screens as `PostDetailScreen(post_id)`. It reads the post through the client,
redraws it while a target is still pending or publishing (and when the post changes anywhere in the app), and
offers what the post's state allows: open or copy a target's link, edit or cancel a scheduled post, retry the
retriable failures (the `socialpub posts retry` semantics: `calls.retry_body`, idempotent), duplicate it as a
new draft. An action the state does not allow is shown disabled in the footer (check_action); its key pressed
anyway says why (`unavailable`), instead of doing nothing.

The targets table has the focus: arrows choose a target, and the keys act on it at once. It shows every field of a
target in the width of the screen: the long texts (account, reason, external id, link) share what the short ones
leave (`fit_widths`), cut with `…`, and the chosen target's are shown in full beneath the table.
"""

from __future__ import annotations

import webbrowser
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Static

from backend.schemas.statuses import PostStatus, TargetStatus
from socialpub_tui.bindings import explained
from socialpub_tui.client import calls
from socialpub_tui.look import fail_colour, inert, status_colour, target_status
from socialpub_tui.screens.confirm import ConfirmScreen
from socialpub_tui.shell import shell
from socialpub_tui.times import parse_instant, relative
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.media_preview import MediaPreview

if TYPE_CHECKING:
    from backend.schemas.posts import PostOut, TargetOut
    from socialpub_tui.messages import PostChanged

LIVE_TARGET_STATES = (TargetStatus.PENDING, TargetStatus.PUBLISHING)
MAX_REFRESH_S = 5.0  # a live post is read again at least this often (the client's poll interval when shorter)
SCHEDULED_RECHECK_S = 60.0  # a scheduled post is read again this often (edited elsewhere, or its time came)

# A target's fields in the spec's order. A target is either done (completedAt) or waiting (nextAttemptAt): one
# column says which. The long texts share the width the others leave (ELASTIC), each cut no narrower than
# MIN_ELASTIC; the chosen target's are shown in full beneath the table.
COLUMNS = [
    ("network", "Network"),
    ("account", "Account"),
    ("status", "Status"),
    ("reason", "Reason"),
    ("fail", "Fail type"),
    ("external", "External id"),
    ("link", "Link"),
    ("when", "Completed / next"),
]
ELASTIC = ("account", "reason", "external", "link")
MIN_ELASTIC = 6
CELL_PADDING = 1  # the table's padding each side of a cell
# the actions the post's state may not allow (check_action, `unavailable`)
STATEFUL_ACTIONS = ("open_link", "copy_link", "edit", "cancel_post", "retry", "duplicate")


def is_live(post: PostOut) -> bool:
    """Something is still moving: the post is being sent, or a target waits for its next attempt (not the targets
    of a cancelled post: they keep `pending`, and nothing will move them)."""
    if post.status == PostStatus.CANCELLED:
        return False
    return post.status == PostStatus.PROCESSING or any(t.status in LIVE_TARGET_STATES for t in post.targets)


def target_label(t: TargetOut) -> str:
    return f"{t.platform} · {inert(t.account_name)}"


def fit_widths(
    natural: dict[str, int],
    available: int,
    least: dict[str, int] | None = None,
    elastic: tuple[str, ...] = ELASTIC,
    minimum: int = MIN_ELASTIC,
) -> dict[str, int]:
    """The width of each column (`natural`: its widest cell or label) so that the table fits `available` cells:
    the columns not in `elastic` keep theirs; the elastic ones share the rest, the narrow ones first (each keeps
    its natural width when it fits its share), none under `minimum` or its `least` (its label: then the table is
    wider than `available`, and scrolls)."""
    least = least or {}
    widths = dict(natural)
    padding = 2 * CELL_PADDING * len(natural)
    room = available - padding - sum(w for key, w in natural.items() if key not in elastic)
    flexible = sorted((key for key in elastic if key in natural), key=lambda key: natural[key])
    for i, key in enumerate(flexible):
        share = room // (len(flexible) - i)
        widths[key] = min(natural[key], max(minimum, least.get(key, 0), share))
        room -= widths[key]
    return widths


def short_link(url: str | None) -> str:
    """A link as its cell shows it: without `https://` and `www.`, so that a cut one still names its site."""
    if not url:
        return ""
    return url.split("://", 1)[-1].removeprefix("www.")


def cut(text: Text, width: int) -> Text:
    """`text` in at most `width` cells, ending with `…` when cut."""
    if text.cell_len <= width:
        return text
    text = text.copy()
    text.truncate(width, overflow="ellipsis")
    return text


def summary_lines(post: PostOut, now: Any) -> list[Text]:
    """At a glance: each failed target with whether retrying can help, each target waiting for a next attempt, each
    warning a target carries (it went through, not quite as asked)."""
    lines: list[Text] = []
    retriable = calls.retry_body(post)[0] is not None
    for t in post.targets:
        if t.status == TargetStatus.FAILED:
            line = Text()
            line.append("✗ ", style="bold red")
            line.append(f"{target_label(t)} failed", style="bold")
            line.append(f": {inert(t.fail_reason or 'no reason given')}")
            if t.fail_type == "retriable":
                line.append(" — retriable: press r" if retriable else " — retriable", style="yellow")
            elif t.fail_type == "permanent":
                line.append(" — permanent: retrying will not help", style="red")
            lines.append(line)
        elif t.status in LIVE_TARGET_STATES and t.next_attempt_at:
            when = parse_instant(t.next_attempt_at)
            line = Text()
            line.append("… ", style="bold cyan")
            line.append(f"{target_label(t)} waits", style="bold")
            line.append(f": next attempt {relative(when, now) if when else t.next_attempt_at}")
            if t.fail_reason:
                line.append(f" ({inert(t.fail_reason)})")
            lines.append(line)
        for w in getattr(t, "warnings", None) or []:  # API `warnings` (absent from older servers)
            line = Text()
            line.append("⚠ ", style="bold yellow")
            line.append(f"{target_label(t)} warning", style="bold")
            line.append(f" {inert(w.code)}: {inert(w.message)}")
            lines.append(line)
    return lines


class PostDetailScreen(Screen[None]):
    """One post: head line, what failed, the targets table, the chosen target in full, the text, the media."""

    CSS_PATH = "post_detail.tcss"
    AUTO_FOCUS = "#detail-targets"
    BINDINGS = [
        Binding("escape", "back", "Back", id="detail.back"),
        *explained("o", "open_link", "Open link", "detail.open_link"),
        *explained("y", "copy_link", "Copy link", "detail.copy_link"),
        *explained("e", "edit", "Edit", "detail.edit"),
        *explained("c", "cancel_post", "Cancel post", "detail.cancel"),
        *explained("r", "retry", "Retry failed", "detail.retry"),
        *explained("d", "duplicate", "Duplicate", "detail.duplicate"),
        Binding("ctrl+r", "reload", "Refresh", id="detail.refresh"),
    ]

    def __init__(self, post_id: str) -> None:
        super().__init__()
        self.post_id = post_id
        self.post: PostOut | None = None
        self._refresh_timer: Timer | None = None
        self._media_shown: list[str] | None = None
        self._busy = False  # a change (cancel, retry) is under way: its key does nothing until it is answered
        # the targets table's cursor row, as its RowHighlighted messages said: what the keys act on (check_action
        # reads it without querying a table that may be gone while the screen is being closed)
        self._row = 0

    # ---- layout -------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="detail-body"):
            yield Static(f"{self.post_id} · loading…", id="detail-head", markup=False)
            yield Static("", id="detail-summary")
            yield DataTable(
                id="detail-targets", cursor_type="row", zebra_stripes=True, cell_padding=CELL_PADDING
            )
            yield Static("", id="detail-target")
            yield Static("", id="detail-text", markup=False)
            yield Horizontal(id="detail-media")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Post"
        self.sub_title = self.post_id
        table = self.query_one("#detail-targets", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.query_one("#detail-text").border_title = "Text"
        self.query_one("#detail-media").border_title = "Media"
        self.query_one("#detail-summary").display = False
        self.query_one("#detail-media").display = False
        shell(self).post_changed.subscribe(self, self._heard)
        self.load()

    # ---- reading ------------------------------------------------------------------------------------------
    @dataclass
    class Read(Message):
        """The post was read (`post`), or could not be (`problem`). A message, not a widget update from the
        worker: a screen being closed while its read is in flight drops it instead of failing."""

        post: PostOut | None
        problem: str = ""

    @work(exclusive=True, group="detail-load")
    async def load(self) -> None:
        try:
            post = await shell(self).client.get_post(self.post_id)
        except Exception as exc:  # noqa: BLE001 — shown with its code; the screen stays usable
            shell(self).report(exc, f"reading {self.post_id}")
            self.post_message(self.Read(None, str(exc)))
            return
        self.post_message(self.Read(post))

    def on_post_detail_screen_read(self, message: Read) -> None:
        if message.post is None:
            self.query_one("#detail-head", Static).update(
                f"{self.post_id} · could not be read ({inert(message.problem)})"
            )
        else:
            self.show(message.post)

    def _heard(self, change: PostChanged) -> None:
        if change.post.id == self.post_id:
            self.show(change.post)

    def show(self, post: PostOut) -> None:
        self.post = post
        self._draw_head(post)
        self._draw_summary(post)
        self._draw_targets(post)
        self._draw_selected()
        # the text as written, line breaks and tabs kept; any other control character shown escaped
        self.query_one("#detail-text", Static).update(
            inert(post.content, newlines=True, tabs=True) or "(no text)"
        )
        self._draw_media(post)
        self.refresh_bindings()
        self._plan_refresh(post)

    def _plan_refresh(self, post: PostOut) -> None:
        if self._refresh_timer is not None:
            self._refresh_timer.stop()
            self._refresh_timer = None
        interval = min(float(getattr(shell(self).client, "poll_interval", MAX_REFRESH_S)), MAX_REFRESH_S)
        if is_live(post):
            delay = interval
            waits = [parse_instant(t.next_attempt_at) for t in post.targets if t.next_attempt_at]
            if post.status != PostStatus.PROCESSING and waits and all(w is not None for w in waits):
                # only targets waiting for a later attempt: no need to ask before the first of them is due
                due = min(w for w in waits if w is not None)
                delay = max(interval, min((due - shell(self).now()).total_seconds(), SCHEDULED_RECHECK_S))
        elif post.status == PostStatus.SCHEDULED:
            delay = SCHEDULED_RECHECK_S
            due = parse_instant(post.scheduled_at) if post.scheduled_at else None
            if due is not None:
                delay = max(interval, min((due - shell(self).now()).total_seconds() + interval, delay))
        else:
            return
        self._refresh_timer = self.set_timer(delay, self.load)

    # ---- drawing ------------------------------------------------------------------------------------------
    def _draw_head(self, post: PostOut) -> None:
        zone = shell(self).zone
        now = shell(self).now()
        head = Text()
        head.append(post.id, style="bold")
        head.append("  ")
        head.append(f" {post.status} ", style=f"bold reverse {status_colour(post.status)}")
        # each time on a line of its own: a line that wrapped broke between a time and its zone (`09:00` / `CET`)
        if post.scheduled_at:
            when = parse_instant(post.scheduled_at)
            head.append(
                f"\n{'for' if post.status in ('scheduled', 'cancelled') else 'was due'} "
                f"{zone.format(post.scheduled_at)}"
            )
            if when is not None and post.status == PostStatus.SCHEDULED:
                head.append(f" ({relative(when, now)})", style="dim")
        else:
            head.append("\nsent at once", style="dim")
        head.append(f"\ncreated {zone.format(post.created_at)}", style="dim")
        if post.idempotency_key:
            head.append(f"  · key {inert(post.idempotency_key)}", style="dim")
        self.query_one("#detail-head", Static).update(head)

    def _draw_summary(self, post: PostOut) -> None:
        lines = summary_lines(post, shell(self).now())
        summary = self.query_one("#detail-summary", Static)
        summary.display = bool(lines)
        summary.update(Text("\n").join(lines))

    def when_text(self, t: TargetOut, post: PostOut) -> str:
        """When a target was completed, or when its next attempt is (`next in 4 min`)."""
        if t.completed_at:
            return shell(self).zone.format(t.completed_at)
        if t.next_attempt_at and t.status in LIVE_TARGET_STATES and post.status != PostStatus.CANCELLED:
            instant = parse_instant(t.next_attempt_at)
            return f"next {relative(instant, shell(self).now())}" if instant else t.next_attempt_at
        return ""

    def _cells(self, post: PostOut) -> list[dict[str, Text]]:
        rows = []
        for t in post.targets:
            shown = target_status(post.status, t.status)
            rows.append(
                {
                    "network": Text(t.platform),
                    "account": Text(inert(t.account_name)),
                    "status": Text(shown, style=status_colour(shown)),
                    "reason": Text(inert(t.fail_reason or "")),
                    "fail": Text(t.fail_type or "", style=fail_colour(t.fail_type)),
                    "external": Text(inert(t.external_post_id or "")),
                    "link": Text(inert(short_link(t.post_url))),
                    "when": Text(self.when_text(t, post)),
                }
            )
        return rows

    def _draw_targets(self, post: PostOut) -> None:
        table = self.query_one("#detail-targets", DataTable)
        rows = self._cells(post)
        labels = {key: len(label) for key, label in COLUMNS}
        natural = {key: max([labels[key]] + [row[key].cell_len for row in rows]) for key in labels}
        available = self.query_one("#detail-body").scrollable_content_region.width
        widths = fit_widths(natural, available, labels) if available > 0 else natural
        cursor = table.cursor_row
        table.clear()
        for i, row in enumerate(rows):
            table.add_row(*(cut(row[key], widths[key]) for key, _ in COLUMNS), key=str(i))
        if post.targets:
            table.move_cursor(row=min(max(cursor, 0), len(post.targets) - 1))

    def _draw_selected(self) -> None:
        """The chosen target in full: what the table may have cut (reason, link, external id, times)."""
        box = self.query_one("#detail-target", Static)
        target, post = self.selected_target(), self.post
        box.display = target is not None and post is not None
        if target is None or post is None:
            return
        shown = target_status(post.status, target.status)
        text = Text()
        text.append("▸ ", style="bold")
        text.append(target_label(target), style="bold")
        text.append(f"  {shown}", style=status_colour(shown))
        if target.fail_type:
            text.append(f" ({target.fail_type})", style=fail_colour(target.fail_type))
        if target.fail_reason:
            text.append(f"\n  reason: {inert(target.fail_reason)}")
        if target.post_url:
            text.append(f"\n  link: {inert(target.post_url)}")
        for w in getattr(target, "warnings", None) or []:
            text.append(f"\n  warning {inert(w.code)}: {inert(w.message)}", style="yellow")
        details = []
        if target.external_post_id:
            details.append(f"external id: {inert(target.external_post_id)}")
        zone = shell(self).zone
        if target.completed_at:
            details.append(f"completed {zone.format(target.completed_at)}")
        elif self.when_text(target, post) and target.next_attempt_at:
            instant = parse_instant(target.next_attempt_at)
            soon = f"{relative(instant, shell(self).now())} " if instant else ""
            details.append(f"next attempt {soon}({zone.format(target.next_attempt_at)})")
        if details:
            text.append("\n  " + "  ·  ".join(details), style="dim")
        box.update(text)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_targets)  # once the new layout is made

    def _fit_targets(self) -> None:
        if self.post is not None and self.is_attached:  # the long columns share the new width
            self._draw_targets(self.post)

    def _draw_media(self, post: PostOut) -> None:
        if self._media_shown == post.media_urls:
            return
        self._media_shown = list(post.media_urls)
        box = self.query_one("#detail-media", Horizontal)
        box.remove_children()
        box.display = bool(post.media_urls)
        box.border_title = f"Media ({len(post.media_urls)})"
        box.mount_all([MediaPreview(url, i + 1) for i, url in enumerate(post.media_urls)])

    # ---- which actions the state allows -------------------------------------------------------------------
    def selected_target(self) -> TargetOut | None:
        if self.post is None or not self.post.targets:
            return None
        row = self._row
        return self.post.targets[row] if 0 <= row < len(self.post.targets) else None

    def selected_link(self) -> str | None:
        """The link of the highlighted target; else the only link of the post."""
        target = self.selected_target()
        if target is not None and target.post_url:
            return target.post_url
        links = [t.post_url for t in self.post.targets if t.post_url] if self.post else []
        return links[0] if len(links) == 1 else None

    def unavailable(self, action: str) -> str | None:
        """Why the state does not allow `action` now (a sentence for the user), or None when it does."""
        post = self.post
        if action not in STATEFUL_ACTIONS:
            return None
        if post is None:
            return "The post is still being read."
        if action in ("open_link", "copy_link"):
            if self.selected_link():
                return None
            target = self.selected_target()
            whose = f"{target_label(target)} has no link" if target is not None else "No target has a link"
            if any(t.post_url for t in post.targets):
                return f"{whose}: choose a target that has one (↑ ↓)."
            return f"{whose} yet: a link comes once a network has published the post."
        if action in ("edit", "cancel_post") and post.status != PostStatus.SCHEDULED:
            verb = "edited" if action == "edit" else "cancelled"
            return f"Only a scheduled post can be {verb} — this one is {post.status}."
        if action == "retry" and calls.retry_body(post)[0] is None:
            return f"Nothing to retry: no target of this {post.status} post failed with failType retriable."
        if action in ("edit", "cancel_post", "retry") and self._busy:
            return "A change to this post is under way: wait for its answer."
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "explain":
            # the hidden twin of a key (see `explained`): runs only when the key's own action may not
            return False if self.unavailable(str(parameters[0])) is None else True
        return None if self.unavailable(action) else True

    def action_explain(self, action: str) -> None:
        reason = self.unavailable(action)
        if reason:
            self.notify(reason, title="Not available", severity="warning", timeout=6)

    @on(DataTable.RowHighlighted, "#detail-targets")
    def _row_moved(self, event: DataTable.RowHighlighted) -> None:
        self._row = event.cursor_row
        self._draw_selected()
        self.refresh_bindings()

    # ---- actions ------------------------------------------------------------------------------------------
    def action_back(self) -> None:
        self.dismiss()

    def action_reload(self) -> None:
        self.load()

    def action_copy_link(self) -> None:
        link = self.selected_link()
        if link:
            self.app.copy_to_clipboard(link)
            self.notify(f"Copied {link}", title="Link copied")

    def action_open_link(self) -> None:
        link = self.selected_link()
        if link:
            self.open_in_browser(link)

    @work(thread=True, group="detail-browser")
    def open_in_browser(self, link: str) -> None:
        """webbrowser.open blocks (it may start a program): in a thread, so the screen keeps answering."""
        opened = webbrowser.open(link)
        if not opened:
            self.app.call_from_thread(
                self.notify, f"No browser could open {link}: copy it with y", severity="warning"
            )

    def action_edit(self) -> None:
        # deferred: socialpub_tui.screens.compose costs ~26 ms of the TUI's launch, paid when the screen is first opened
        from socialpub_tui.screens.compose import ComposeScreen

        if self.post is not None and self.post.status == PostStatus.SCHEDULED:
            self.app.push_screen(ComposeScreen(self.post), self._after_compose)

    def action_duplicate(self) -> None:
        # deferred: socialpub_tui.screens.compose costs ~27 ms of the TUI's launch, paid when the screen is first opened
        from socialpub_tui.screens.compose import ComposeScreen

        if self.post is not None:
            self.app.push_screen(ComposeScreen(self.post, duplicate=True), self._after_duplicate)

    def _after_compose(self, result: PostOut | None) -> None:
        if result is not None:
            self.show(result)

    def _after_duplicate(self, result: PostOut | None) -> None:
        if result is not None and result.id != self.post_id:
            self.app.switch_screen(PostDetailScreen(result.id))

    def action_cancel_post(self) -> None:
        post = self.post
        if post is None or post.status != PostStatus.SCHEDULED:
            return
        when = shell(self).zone.format(post.scheduled_at)
        targets = ", ".join(target_label(t) for t in post.targets)
        question = f"Cancel {post.id}, scheduled for {when} to {targets}? Nothing will be published."

        def answered(yes: bool | None) -> None:
            if yes:
                self.cancel_post()

        self.app.push_screen(ConfirmScreen(question, yes="Cancel post", no="Keep it"), answered)

    @work(exclusive=True, group="detail-change")
    async def cancel_post(self) -> None:
        client = shell(self).client
        self._busy = True
        self.refresh_bindings()
        try:
            await client.cancel_post(self.post_id)
            post = await client.get_post(self.post_id)
        except Exception as exc:  # noqa: BLE001
            shell(self).report(exc, f"cancelling {self.post_id}")
            self.load()
            return
        finally:
            self._busy = False
        self.notify(f"Cancelled {self.post_id}: nothing will be published.", title="Cancelled")
        shell(self).announce(post, "cancelled")
        self.show(post)

    def action_retry(self) -> None:
        if self.post is not None and calls.retry_body(self.post)[0] is not None and not self._busy:
            self.retry()

    @work(exclusive=True, group="detail-change")
    async def retry(self) -> None:
        client = shell(self).client
        self._busy = True
        self.refresh_bindings()
        try:
            new, original = await client.retry_post(self.post_id)
        except Exception as exc:  # noqa: BLE001
            shell(self).report(exc, f"retrying {self.post_id}")
            return
        finally:
            self._busy = False
            self.refresh_bindings()
        if new is None:
            self.notify(f"Nothing to retry in {self.post_id}: no target failed with failType retriable.")
            self.show(original)
            return
        _, retried, _ = calls.retry_body(original)
        names = ", ".join(target_label(t) for t in retried)
        if getattr(new, "_http_status", None) == 200:
            self.notify(
                f"Already retried as {new.id} ({new.status}); nothing new was created. To retry again, "
                f"retry {new.id}.",
                title="Already retried",
                timeout=8,
            )
        else:
            self.notify(f"Created {new.id} retrying {names}.", title="Retrying", timeout=8)
            shell(self).announce(new, "retried")
        self.app.switch_screen(PostDetailScreen(new.id))
