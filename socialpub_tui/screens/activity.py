"""f5: activity — the plan and the credit balance (GET /v1/workspace), the posts that finished per local day and
the success rate of their targets over the last 30 days as plots (GET /v1/activity, counted by the server: the
client never pages through every post), and the latest failed targets with their failReason / failType, newest
first. `d` switches between 7, 30 and 90 days; `r` refreshes. Both calls run together in one exclusive worker.
`k` shows the credits history in place of the failures: each charge and refund of a generation, the plan's grants,
an operator's changes, with the balance after each (GET /v1/credits, an extension), newest first.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual_plotext import PlotextPlot

from backend.schemas.activity import ActivityFailure, ActivityOut
from backend.schemas.credits import CreditHistory
from backend.schemas.workspace import WorkspaceOut
from socialpub_tui.look import status_colour
from socialpub_tui.messages import PostChanged
from socialpub_tui.times import DisplayZone, parse_instant
from socialpub_tui.widgets.footer import Footer

PERIODS = (7, 30, 90)
FAILURES = 20
CREDIT_ENTRIES = 50
REASON_LABELS = {"charge": "charged", "refund": "refunded", "grant": "plan grant", "admin": "operator change",
                 "opening": "opening balance"}


def iana_name(zone: DisplayZone) -> str:
    """The IANA name the server counts days in: the display zone's, else the system's ($TZ, /etc/localtime),
    else UTC."""
    if zone.name:
        return zone.name
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return "UTC"
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "UTC"


@dataclass
class ActivityLoaded(Message):
    days: int
    workspace: WorkspaceOut | None
    activity: ActivityOut | None


@dataclass
class CreditsLoaded(Message):
    history: CreditHistory | None


class ActivityScreen(Screen[None]):
    CSS_PATH = "activity.tcss"
    BINDINGS = [
        Binding("d", "cycle_days", "7/30/90 days", id="activity.days"),
        Binding("r", "reload", "Refresh", id="activity.refresh"),
        Binding("o", "open", "Open failed post", id="activity.open"),
        Binding("k", "toggle_credits", "Credits history", id="activity.credits"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.days = 30
        self.failures: list[ActivityFailure] = []
        self._shown: ActivityOut | None = None
        self.showing_credits = False
        self.credits: CreditHistory | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="act-summary")
        with Horizontal(id="act-plots"):
            yield PlotextPlot(id="act-posts")
            yield PlotextPlot(id="act-rate")
        yield Static(id="act-failures-title")
        yield DataTable(id="act-failures", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield Static(id="act-credits-title")
        yield DataTable(id="act-credits", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#act-failures", DataTable)
        for name in ("failed at", "network", "account", "type", "reason"):
            table.add_column(name + " ", key=name)  # one space after each column (cell_padding=0)
        credits = self.query_one("#act-credits", DataTable)
        for name in ("at", "amount", "balance after", "what", "generation / note"):
            credits.add_column(name + " ", key=name)
        self._show_panel()
        self.query_one("#act-summary", Static).update("loading…")
        self.app.post_changed.subscribe(self, self._post_changed)  # type: ignore[attr-defined]
        self._load(self.days)

    def on_screen_resume(self) -> None:
        self._load(self.days)
        if self.showing_credits:
            self._load_credits()

    def _post_changed(self, change: PostChanged) -> None:
        self._load(self.days)

    def action_reload(self) -> None:
        self._load(self.days)
        if self.showing_credits:
            self._load_credits()

    # ---- the credits history (k) --------------------------------------------------------------------------
    def action_toggle_credits(self) -> None:
        self.showing_credits = not self.showing_credits
        self._show_panel()
        if self.showing_credits:
            self._load_credits()

    def _show_panel(self) -> None:
        for name in ("#act-failures-title", "#act-failures"):
            self.query_one(name).display = not self.showing_credits
        for name in ("#act-credits-title", "#act-credits"):
            self.query_one(name).display = self.showing_credits
        if self.showing_credits and self.credits is None:
            self.query_one("#act-credits-title", Static).update(Text("Credits history · loading…", style="bold"))
        self.query_one("#act-credits" if self.showing_credits else "#act-failures", DataTable).focus()
        self.refresh_bindings()

    @work(exclusive=True, group="activity-credits")
    async def _load_credits(self) -> None:
        try:
            history = await self.app.client.credits(limit=CREDIT_ENTRIES)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 — shown with its code (a server without the extension says so)
            self.app.report(exc, "Credits history")  # type: ignore[attr-defined]
            self.post_message(CreditsLoaded(None))
            return
        self.post_message(CreditsLoaded(history))

    def on_credits_loaded(self, message: CreditsLoaded) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Credits history", style="bold")
        if message.history is None:
            title.append(" · could not be read (r to retry)", style="red")
            self.query_one("#act-credits-title", Static).update(title)
            return
        self.credits = history = message.history
        title.append(f" · balance {history.balance} · {len(history.items)} latest movements, newest first · "
                     "k shows the failures", style="dim")
        self.query_one("#act-credits-title", Static).update(title)
        table = self.query_one("#act-credits", DataTable)
        table.clear()
        zone = self.app.zone  # type: ignore[attr-defined]
        for e in history.items:
            at = parse_instant(e.at)
            colour = "red" if e.amount < 0 else "green" if e.amount > 0 else "white"
            what = (e.generation_id or "") + (" · " if e.generation_id and e.note else "") + (e.note or "")
            table.add_row(f"{zone.local(at):%d %b %H:%M} " if at else "- ", Text(f"{e.amount:+d} ", style=colour),
                          f"{e.balance_after} ", REASON_LABELS.get(e.reason, e.reason) + " ",
                          clip(" ".join(what.split()), max(20, self.app.size.width - 13 - 8 - 14 - 17 - 2)),
                          key=e.id)

    def action_cycle_days(self) -> None:
        self.days = PERIODS[(PERIODS.index(self.days) + 1) % len(PERIODS)] if self.days in PERIODS else 30
        self._load(self.days)

    @work(exclusive=True, group="activity-load")
    async def _load(self, days: int) -> None:
        client = self.app.client  # type: ignore[attr-defined]
        tz = iana_name(self.app.zone)  # type: ignore[attr-defined]
        workspace, activity = await asyncio.gather(client.get_workspace(),
                                                   client.activity(days=days, tz=tz, failures=FAILURES),
                                                   return_exceptions=True)
        for result, what in ((workspace, "Workspace"), (activity, "Activity")):
            if isinstance(result, BaseException):
                self.app.report(result, what)  # type: ignore[attr-defined]
        self.post_message(ActivityLoaded(days, None if isinstance(workspace, BaseException) else workspace,
                                         None if isinstance(activity, BaseException) else activity))

    def on_activity_loaded(self, message: ActivityLoaded) -> None:
        if message.days != self.days:
            return  # a period no longer asked for
        self._show_summary(message.workspace, message.activity)
        if message.activity is not None:
            self._show_plots(message.activity)
            self._show_failures(message.activity)

    # ---- what is shown ------------------------------------------------------------------------------------
    def _show_summary(self, ws: WorkspaceOut | None, act: ActivityOut | None) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        if ws is not None:
            plan = ws.plan
            text.append("Plan ", style="dim")
            text.append(plan.name, style="bold")
            if plan.subscribed != plan.name:
                text.append(f" (subscribed {plan.subscribed})", style="yellow")
            if plan.status:
                text.append(f" {plan.status}", style=status_colour(plan.status))
            if plan.period_end:
                text.append(f" until {self.app.zone.format(plan.period_end)}", style="dim")  # type: ignore[attr-defined]
            text.append(" · credits ", style="dim")
            text.append(f"{ws.credits.balance}", style="bold green" if ws.credits.balance > 0 else "bold red")
            text.append(f" (+{plan.monthly_credits} a month)", style="dim")
            if ws.free_publications_left and plan.name == "FREE":
                text.append(f" · {ws.free_publications_left} free publications left", style="dim")
        else:
            text.append("workspace could not be read (r to retry)", style="red")
        if act is not None:
            posts, targets = act.totals.posts, act.totals.targets
            ok, done = targets.succeeded + targets.inbox_delivered, targets.succeeded + targets.inbox_delivered + targets.failed
            rate = act.totals.success_rate
            text.append(f"\nLast {act.days} days · success ", style="dim")
            text.append("-" if rate is None else f"{rate:.0%}",
                        style="bold " + ("green" if rate is not None and rate >= 0.95 else "yellow"))
            text.append(f" ({ok}/{done} targets)", style="dim")
            total = posts.completed + posts.partial + posts.failed
            text.append(f" · {total} post{'s' if total != 1 else ''}: ", style="bold")
            text.append(f"{posts.completed} completed", style=status_colour("completed"))
            text.append(f" · {posts.partial} partial", style=status_colour("partial"))
            text.append(f" · {posts.failed} failed", style=status_colour("failed"))
            text.append(f" · {act.timezone}", style="dim")
        self.query_one("#act-summary", Static).update(text)

    def _show_plots(self, act: ActivityOut) -> None:
        labels = [d.date[5:] for d in act.per_day]  # MM-DD
        xs = list(range(len(labels)))
        # few enough labels that none collide in half the terminal (plotext drops colliding ones unpredictably)
        count = max(2, (self.app.size.width // 2) // 12)
        step = max(1, -(-len(xs) // count))
        ticks = xs[::step]
        posts = self.query_one("#act-posts", PlotextPlot)
        plt = posts.plt
        plt.clear_figure()
        completed = [d.posts.completed for d in act.per_day]
        partial = [d.posts.partial for d in act.per_day]
        failed = [d.posts.failed for d in act.per_day]
        plt.stacked_bar(xs, [completed, partial, failed], labels=["completed", "partial", "failed"],
                        color=["green", "orange", "red"], width=0.8)
        plt.xticks(ticks, [labels[i] for i in ticks])
        top = max([c + p + f for c, p, f in zip(completed, partial, failed, strict=True)] + [1])
        step = max(1, -(-top // 5))
        plt.yticks(list(range(0, top + 1, step)))
        plt.title("Posts finished per day")
        posts.refresh()
        rate = self.query_one("#act-rate", PlotextPlot)
        plt = rate.plt
        plt.clear_figure()
        days_with = [(i, d) for i, d in enumerate(act.per_day)
                     if d.targets.succeeded + d.targets.inbox_delivered + d.targets.failed]
        if days_with:
            ys = [100 * (d.targets.succeeded + d.targets.inbox_delivered)
                  / (d.targets.succeeded + d.targets.inbox_delivered + d.targets.failed) for _, d in days_with]
            plt.plot([i for i, _ in days_with], ys, marker="braille", color="cyan")
            plt.scatter([i for i, _ in days_with], ys, marker="dot", color="cyan")
        plt.ylim(0, 100)
        plt.yticks([0, 25, 50, 75, 100])
        plt.xlim(0, max(1, len(xs) - 1))
        plt.xticks(ticks, [labels[i] for i in ticks])
        plt.title("Target success rate per day (%)")
        rate.refresh()

    def _show_failures(self, act: ActivityOut) -> None:
        title = Text()
        title.append("Latest failures", style="bold")
        title.append(f" · {len(act.failures)} shown, newest first · enter opens the post" if act.failures
                     else " · none in this period", style="dim")
        self.query_one("#act-failures-title", Static).update(title)
        self._shown = act
        table = self.query_one("#act-failures", DataTable)
        keep = table.cursor_row
        table.clear()
        self.failures = list(act.failures)
        zone = self.app.zone  # type: ignore[attr-defined]
        # the terminal's width (known from the start, unlike this screen's before its first layout)
        room = max(20, self.app.size.width - 13 - 10 - 19 - 11 - 2)
        for i, f in enumerate(act.failures):
            at = parse_instant(f.completed_at) if f.completed_at else None
            kind = f.fail_type or "-"
            reason = " ".join((f.fail_reason or "").split())
            table.add_row(f"{zone.local(at):%d %b %H:%M} " if at else "- ", f"{f.platform} ",
                          clip(f.account_name, 18) + " ", Text(f"{kind} ", style="yellow" if kind == "retriable" else "red"),
                          clip(reason, room), key=str(i))
        if act.failures:
            table.move_cursor(row=min(keep, len(act.failures) - 1))

    def on_resize(self) -> None:
        if self._shown is not None:
            self._show_failures(self._shown)  # the reasons are clipped to the width

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":
            return not self.showing_credits
        return True

    def action_open(self) -> None:
        table = self.query_one("#act-failures", DataTable)
        if not self.failures or table.cursor_row >= len(self.failures):
            return
        try:
            from socialpub_tui.screens.post_detail import PostDetailScreen
        except ImportError:
            self.notify("The post detail screen is not in this build.", severity="warning")
            return
        self.app.push_screen(PostDetailScreen(self.failures[table.cursor_row].post_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "act-failures":
            self.action_open()


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
