"""Post detail: one post, every target, what went wrong and what can be done about it.

Pushed by the posts and calendar screens as `PostDetailScreen(post_id)`. It reads the post through the client,
redraws it while a target is still pending or publishing (and when the post changes anywhere in the app), and
offers what the post's state allows: open or copy a target's link, edit or cancel a scheduled post, retry the
retriable failures (the `socialpub posts retry` semantics: `calls.retry_body`, idempotent), duplicate it as a
new draft. An action the state does not allow is shown disabled in the footer (check_action), never refused
after the key was pressed.
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

from socialpub_tui.client import calls
from socialpub_tui.look import status_colour
from socialpub_tui.times import parse_instant, relative
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.media_preview import MediaPreview

if TYPE_CHECKING:
    from backend.schemas.posts import PostOut, TargetOut
    from socialpub_tui.messages import PostChanged

LIVE_TARGET_STATES = ("pending", "publishing")
MAX_REFRESH_S = 5.0  # a live post is read again at least this often (the client's poll interval when shorter)
SCHEDULED_RECHECK_S = 60.0  # a scheduled post is read again this often (edited elsewhere, or its time came)

# the reasons of failures are shown in full above the table: the link and the times come first
COLUMNS = [("network", "Network"), ("account", "Account"), ("status", "Status"), ("fail", "Fail type"),
           ("link", "Link"), ("completed", "Completed"), ("next", "Next attempt"), ("reason", "Reason"),
           ("external", "External id")]


def is_live(post: PostOut) -> bool:
    """Something is still moving: the post is being sent, or a target waits for its next attempt."""
    return post.status == "processing" or any(t.status in LIVE_TARGET_STATES for t in post.targets)


def target_label(t: TargetOut) -> str:
    return f"{t.platform} · {t.account_name}"


def summary_lines(post: PostOut, now: Any) -> list[Text]:
    """At a glance: each failed target with whether retrying can help, each target waiting for a next attempt."""
    lines: list[Text] = []
    retriable = calls.retry_body(post)[0] is not None
    for t in post.targets:
        if t.status == "failed":
            line = Text()
            line.append("✗ ", style="bold red")
            line.append(f"{target_label(t)} failed", style="bold")
            line.append(f": {t.fail_reason or 'no reason given'}")
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
                line.append(f" ({t.fail_reason})")
            lines.append(line)
    return lines


class PostDetailScreen(Screen[None]):
    """One post: head line, what failed, the targets table, the text, the media."""

    CSS_PATH = "post_detail.tcss"
    BINDINGS = [
        Binding("escape", "back", "Back", id="detail.back"),
        Binding("o", "open_link", "Open link", id="detail.open_link"),
        Binding("y", "copy_link", "Copy link", id="detail.copy_link"),
        Binding("e", "edit", "Edit", id="detail.edit"),
        Binding("c", "cancel_post", "Cancel post", id="detail.cancel"),
        Binding("r", "retry", "Retry failed", id="detail.retry"),
        Binding("d", "duplicate", "Duplicate", id="detail.duplicate"),
        Binding("ctrl+r", "reload", "Refresh", id="detail.refresh"),
    ]

    def __init__(self, post_id: str) -> None:
        super().__init__()
        self.post_id = post_id
        self.post: PostOut | None = None
        self._refresh_timer: Timer | None = None
        self._media_shown: list[str] | None = None
        self._busy = False  # a change (cancel, retry) is under way: its key does nothing until it is answered

    # ---- layout -------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="detail-body"):
            yield Static(f"{self.post_id} · loading…", id="detail-head", markup=False)
            yield Static("", id="detail-summary")
            yield DataTable(id="detail-targets", cursor_type="row", zebra_stripes=True)
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
        self.app.post_changed.subscribe(self, self._heard)  # type: ignore[attr-defined]
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
            post = await self.app.client.get_post(self.post_id)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 — shown with its code; the screen stays usable
            self.app.report(exc, f"reading {self.post_id}")  # type: ignore[attr-defined]
            self.post_message(self.Read(None, str(exc)))
            return
        self.post_message(self.Read(post))

    def on_post_detail_screen_read(self, message: Read) -> None:
        if message.post is None:
            self.query_one("#detail-head", Static).update(f"{self.post_id} · could not be read ({message.problem})")
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
        self.query_one("#detail-text", Static).update(post.content or "(no text)")
        self._draw_media(post)
        self.refresh_bindings()
        self._plan_refresh(post)

    def _plan_refresh(self, post: PostOut) -> None:
        if self._refresh_timer is not None:
            self._refresh_timer.stop()
            self._refresh_timer = None
        interval = min(float(getattr(self.app.client, "poll_interval", MAX_REFRESH_S)), MAX_REFRESH_S)  # type: ignore[attr-defined]
        if is_live(post):
            delay = interval
            waits = [parse_instant(t.next_attempt_at) for t in post.targets if t.next_attempt_at]
            if post.status != "processing" and waits and all(w is not None for w in waits):
                # only targets waiting for a later attempt: no need to ask before the first of them is due
                due = min(w for w in waits if w is not None)
                delay = max(interval, min((due - self.app.now()).total_seconds(), SCHEDULED_RECHECK_S))  # type: ignore[attr-defined]
        elif post.status == "scheduled":
            delay = SCHEDULED_RECHECK_S
            due = parse_instant(post.scheduled_at) if post.scheduled_at else None
            if due is not None:
                delay = max(interval, min((due - self.app.now()).total_seconds() + interval, delay))  # type: ignore[attr-defined]
        else:
            return
        self._refresh_timer = self.set_timer(delay, self.load)

    # ---- drawing ------------------------------------------------------------------------------------------
    def _draw_head(self, post: PostOut) -> None:
        zone = self.app.zone  # type: ignore[attr-defined]
        now = self.app.now()  # type: ignore[attr-defined]
        head = Text()
        head.append(post.id, style="bold")
        head.append("  ")
        head.append(f" {post.status} ", style=f"bold reverse {status_colour(post.status)}")
        if post.scheduled_at:
            when = parse_instant(post.scheduled_at)
            head.append(f"  {'for' if post.status in ('scheduled', 'cancelled') else 'was due'} "
                        f"{zone.format(post.scheduled_at)}")
            if when is not None and post.status == "scheduled":
                head.append(f" ({relative(when, now)})", style="dim")
        else:
            head.append("  sent at once", style="dim")
        head.append(f"  · created {zone.format(post.created_at)}", style="dim")
        if post.idempotency_key:
            head.append(f"  · key {post.idempotency_key}", style="dim")
        self.query_one("#detail-head", Static).update(head)

    def _draw_summary(self, post: PostOut) -> None:
        lines = summary_lines(post, self.app.now())  # type: ignore[attr-defined]
        summary = self.query_one("#detail-summary", Static)
        summary.display = bool(lines)
        summary.update(Text("\n").join(lines))

    def _draw_targets(self, post: PostOut) -> None:
        table = self.query_one("#detail-targets", DataTable)
        zone = self.app.zone  # type: ignore[attr-defined]
        now = self.app.now()  # type: ignore[attr-defined]
        cursor = table.cursor_row
        table.clear()
        for i, t in enumerate(post.targets):
            waiting = ""
            if t.next_attempt_at and t.status in LIVE_TARGET_STATES:
                instant = parse_instant(t.next_attempt_at)
                waiting = f"{relative(instant, now)} ({zone.format(t.next_attempt_at)})" if instant else t.next_attempt_at
            fail_colour = "red" if t.fail_type == "permanent" else "yellow"
            table.add_row(
                Text(t.platform), Text(t.account_name), Text(t.status, style=status_colour(t.status)),
                Text(t.fail_type or "", style=fail_colour), Text(t.post_url or ""),
                Text(zone.format(t.completed_at) if t.completed_at else ""), Text(waiting),
                Text(t.fail_reason or ""), Text(t.external_post_id or ""), key=str(i))
        if post.targets:
            table.move_cursor(row=min(max(cursor, 0), len(post.targets) - 1))

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
        row = self.query_one("#detail-targets", DataTable).cursor_row
        return self.post.targets[row] if 0 <= row < len(self.post.targets) else None

    def selected_link(self) -> str | None:
        """The link of the highlighted target; else the only link of the post."""
        target = self.selected_target()
        if target is not None and target.post_url:
            return target.post_url
        links = [t.post_url for t in self.post.targets if t.post_url] if self.post else []
        return links[0] if len(links) == 1 else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        post = self.post
        if action in ("open_link", "copy_link"):
            return True if self.selected_link() else None
        if action in ("edit", "cancel_post"):
            return True if post is not None and post.status == "scheduled" and not self._busy else None
        if action == "retry":
            return True if post is not None and calls.retry_body(post)[0] is not None and not self._busy else None
        if action == "duplicate":
            return True if post is not None else None
        return True

    @on(DataTable.RowHighlighted, "#detail-targets")
    def _row_moved(self) -> None:
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
            self.app.call_from_thread(self.notify, f"No browser could open {link}: copy it with y", severity="warning")

    def action_edit(self) -> None:
        from socialpub_tui.screens.compose import ComposeScreen

        if self.post is not None and self.post.status == "scheduled":
            self.app.push_screen(ComposeScreen(self.post), self._after_compose)

    def action_duplicate(self) -> None:
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
        from socialpub_tui.screens.confirm import ConfirmScreen

        post = self.post
        if post is None or post.status != "scheduled":
            return
        when = self.app.zone.format(post.scheduled_at)  # type: ignore[attr-defined]
        targets = ", ".join(target_label(t) for t in post.targets)
        question = f"Cancel {post.id}, scheduled for {when} to {targets}? Nothing will be published."

        def answered(yes: bool | None) -> None:
            if yes:
                self.cancel_post()

        self.app.push_screen(ConfirmScreen(question, yes="Cancel post", no="Keep it"), answered)

    @work(exclusive=True, group="detail-change")
    async def cancel_post(self) -> None:
        client = self.app.client  # type: ignore[attr-defined]
        self._busy = True
        self.refresh_bindings()
        try:
            await client.cancel_post(self.post_id)
            post = await client.get_post(self.post_id)
        except Exception as exc:  # noqa: BLE001
            self.app.report(exc, f"cancelling {self.post_id}")  # type: ignore[attr-defined]
            self.load()
            return
        finally:
            self._busy = False
        self.notify(f"Cancelled {self.post_id}: nothing will be published.", title="Cancelled")
        self.app.announce(post, "cancelled")  # type: ignore[attr-defined]
        self.show(post)

    def action_retry(self) -> None:
        if self.post is not None and calls.retry_body(self.post)[0] is not None and not self._busy:
            self.retry()

    @work(exclusive=True, group="detail-change")
    async def retry(self) -> None:
        client = self.app.client  # type: ignore[attr-defined]
        self._busy = True
        self.refresh_bindings()
        try:
            new, original = await client.retry_post(self.post_id)
        except Exception as exc:  # noqa: BLE001
            self.app.report(exc, f"retrying {self.post_id}")  # type: ignore[attr-defined]
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
            self.notify(f"Already retried as {new.id} ({new.status}); nothing new was created. To retry again, "
                        f"retry {new.id}.", title="Already retried", timeout=8)
        else:
            self.notify(f"Created {new.id} retrying {names}.", title="Retrying", timeout=8)
            self.app.announce(new, "retried")  # type: ignore[attr-defined]
        self.app.switch_screen(PostDetailScreen(new.id))
