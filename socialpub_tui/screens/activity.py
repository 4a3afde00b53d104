"""f5: activity — the plan and the credit balance (GET /v1/workspace), the posts that finished per local day and
the success rate of their targets over the last 30 days as plots (GET /v1/activity, counted by the server: the
client never pages through every post), and the latest failed targets with their failReason / failType, newest
first. `d` switches between 7, 30 and 90 days; `r` refreshes. Both calls run together in one exclusive worker.
`k` shows the credits history in place of the failures: each charge and refund of a generation, the plan's grants,
an operator's changes, with the balance after each (GET /v1/credits, an extension), newest first.
`w` shows the webhooks panel in place of the failures (beneath them in a terminal of TALL rows or more): the
endpoints failing or disabled and the latest failed deliveries with their status codes (GET /v1/webhooks, then
each endpoint's failed deliveries, read only while the panel is in view; an extension: a server without it shows
the panel as unavailable). `s` redelivers the selected delivery's event to its endpoint, `e` re-enables the selected
disabled endpoint. While the panel is out of view, the failures' title says how many endpoints are failing.
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
from backend.schemas.webhooks import DeliveryOut, WebhookOut
from backend.schemas.workspace import WorkspaceOut
from socialpub_tui.bindings import explained
from socialpub_tui.client.errors import ApiError
from socialpub_tui.look import inert, status_colour
from socialpub_tui.messages import PostChanged
from socialpub_tui.shell import shell
from socialpub_tui.times import DisplayZone, parse_instant
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.tables import RowTable, fill
from socialpub_tui.widgets.webhooks_panel import (
    ADD_HINT,
    DELIVERIES,
    WebhooksPanel,
    WebhooksView,
    latest_failed,
)

PERIODS = (7, 30, 90)
FAILURE_COLUMNS = ("failed at", "network", "account", "type", "reason")
FAILURES = 20
CREDIT_ENTRIES = 50
TALL = 40  # from this height on, the webhooks panel is shown beneath the failures (else in their place)
AT_ONCE = 4  # endpoints whose deliveries are read at the same time
REASON_LABELS = {
    "charge": "charged",
    "refund": "refunded",
    "grant": "plan grant",
    "admin": "operator change",
    "opening": "opening balance",
}


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


@dataclass
class WebhooksLoaded(Message):
    view: WebhooksView


def missing_extension(exc: BaseException) -> bool:
    """A 404/405 of a server without the webhooks routes (the client's message says it is an extension) — not a
    `webhook_not_found` or `event_not_found`."""
    return (
        isinstance(exc, ApiError)
        and exc.status in (404, 405)
        and exc.code in ("not_found", "method_not_allowed")
    )


class ActivityScreen(Screen[None]):
    CSS_PATH = "activity.tcss"
    BINDINGS = [
        Binding("d", "cycle_days", "Days", id="activity.days"),
        Binding("r", "reload", "Refresh", id="activity.refresh"),
        *explained("o", "open", "Open post", "activity.open"),
        Binding("k", "toggle_credits", "Credits", id="activity.credits"),
        Binding("w", "toggle_webhooks", "Webhooks", id="activity.webhooks"),
        *explained("s", "redeliver", "Redeliver", "activity.redeliver"),
        *explained("e", "enable_webhook", "Re-enable", "activity.enable-webhook"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.days = 30
        self.failures: list[ActivityFailure] = []
        self._shown: ActivityOut | None = None
        self.panel = "failures"  # what the bottom shows: failures | webhooks | credits
        self.credits: CreditHistory | None = None
        self.webhooks = WebhooksView()
        self._focus_webhooks = False  # `w` was pressed: focus the panel's deliveries once they are read

    @property
    def showing_credits(self) -> bool:
        return self.panel == "credits"

    @property
    def tall(self) -> bool:
        return self.app.size.height >= TALL

    def webhooks_in_view(self) -> bool:
        return self.panel == "webhooks" or (self.panel == "failures" and self.tall)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="act-summary")
        with Horizontal(id="act-plots"):
            yield PlotextPlot(id="act-posts")
            yield PlotextPlot(id="act-rate")
        yield Static(id="act-failures-title")
        yield RowTable(id="act-failures", zebra_stripes=True, cell_padding=0)
        yield Static(id="act-credits-title")
        yield RowTable(id="act-credits", zebra_stripes=True, cell_padding=0)
        yield WebhooksPanel(id="act-webhooks")
        yield Footer()

    def on_mount(self) -> None:
        fill(self.query_one("#act-failures", DataTable), FAILURE_COLUMNS, [])
        credits = self.query_one("#act-credits", DataTable)
        for name in ("at", "amount", "balance after", "what", "generation / note"):
            credits.add_column(name + " ", key=name)
        self._show_panel()
        self.query_one("#act-summary", Static).update("loading…")
        shell(self).post_changed.subscribe(self, self._post_changed)
        self._load(self.days)  # (the webhooks are read on the resume that follows, once)

    def on_screen_resume(self) -> None:
        self._load(self.days)
        self._load_webhooks()
        if self.showing_credits:
            self._load_credits()

    def _post_changed(self, change: PostChanged) -> None:
        self._load(self.days)

    def action_reload(self) -> None:
        self._load(self.days)
        self._load_webhooks()
        if self.showing_credits:
            self._load_credits()

    # ---- the credits history (k) --------------------------------------------------------------------------
    def action_toggle_credits(self) -> None:
        self.panel = "failures" if self.panel == "credits" else "credits"
        self._show_panel()
        if self.showing_credits:
            self._load_credits()

    def _show_panel(self) -> None:
        tall = self.tall
        self.set_class(tall, "tall")
        failures = self.panel == "failures" or (self.panel == "webhooks" and tall)
        for name in ("#act-failures-title", "#act-failures"):
            self.query_one(name).display = failures
        for name in ("#act-credits-title", "#act-credits"):
            self.query_one(name).display = self.showing_credits
        self.query_one(WebhooksPanel).display = self.webhooks_in_view()
        if self.showing_credits and self.credits is None:
            self.query_one("#act-credits-title", Static).update(
                Text("Credits history · loading…", style="bold")
            )
        if self.panel == "webhooks":
            self.query_one(WebhooksPanel).focus_table()
        else:
            self.query_one("#act-credits" if self.showing_credits else "#act-failures", DataTable).focus()
        self._show_failures_title()
        self.refresh_bindings()

    @work(exclusive=True, group="activity-credits")
    async def _load_credits(self) -> None:
        try:
            history = await shell(self).client.credits(limit=CREDIT_ENTRIES)
        except Exception as exc:  # noqa: BLE001 — shown with its code (a server without the extension says so)
            shell(self).report(exc, "Credits history")
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
        title.append(
            f" · balance {history.balance} · "
            + (
                "the latest movement"
                if len(history.items) == 1
                else f"{len(history.items)} latest movements, newest first"
            )
            + " · k shows the failures",
            style="dim",
        )
        self.query_one("#act-credits-title", Static).update(title)
        table = self.query_one("#act-credits", DataTable)
        table.clear()
        zone = shell(self).zone
        for e in history.items:
            at = parse_instant(e.at)
            colour = "red" if e.amount < 0 else "green" if e.amount > 0 else "white"
            what = (e.generation_id or "") + (" · " if e.generation_id and e.note else "") + (e.note or "")
            table.add_row(
                f"{zone.local(at):%d %b %H:%M} " if at else "- ",
                Text(f"{e.amount:+d} ", style=colour),
                f"{e.balance_after} ",
                Text(inert(REASON_LABELS.get(e.reason, e.reason)) + " "),
                Text(clip(" ".join(what.split()), max(20, self.app.size.width - 13 - 8 - 14 - 17 - 2))),
                key=e.id,
            )

    def action_cycle_days(self) -> None:
        self.days = PERIODS[(PERIODS.index(self.days) + 1) % len(PERIODS)] if self.days in PERIODS else 30
        self._load(self.days)

    @work(exclusive=True, group="activity-load")
    async def _load(self, days: int) -> None:
        client = shell(self).client
        tz = iana_name(shell(self).zone)
        workspace, activity = await asyncio.gather(
            client.get_workspace(),
            client.activity(days=days, tz=tz, failures=FAILURES),
            return_exceptions=True,
        )
        for result, what in ((workspace, "Workspace"), (activity, "Activity")):
            if isinstance(result, BaseException):
                shell(self).report(result, what)
        self.post_message(
            ActivityLoaded(
                days,
                None if isinstance(workspace, BaseException) else workspace,
                None if isinstance(activity, BaseException) else activity,
            )
        )

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
            text.append(inert(plan.name), style="bold")
            if plan.subscribed != plan.name:
                text.append(f" (subscribed {inert(plan.subscribed)})", style="yellow")
            if plan.status:
                text.append(f" {plan.status}", style=status_colour(plan.status))
            if plan.period_end:
                text.append(f" until {shell(self).zone.format(plan.period_end)}", style="dim")
            text.append(" · credits ", style="dim")
            text.append(f"{ws.credits.balance}", style="bold green" if ws.credits.balance > 0 else "bold red")
            text.append(f" (+{plan.monthly_credits} a month)", style="dim")
            if ws.free_publications_left and plan.name == "FREE":
                text.append(f" · {ws.free_publications_left} free publications left", style="dim")
        else:
            text.append("workspace could not be read (r to retry)", style="red")
        if act is not None:
            posts, targets = act.totals.posts, act.totals.targets
            ok, done = (
                targets.succeeded + targets.inbox_delivered,
                targets.succeeded + targets.inbox_delivered + targets.failed,
            )
            rate = act.totals.success_rate
            text.append(f"\nLast {act.days} days · success ", style="dim")
            text.append(
                "-" if rate is None else f"{rate:.0%}",
                style="bold " + ("green" if rate is not None and rate >= 0.95 else "yellow"),
            )
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
        plt.stacked_bar(
            xs,
            [completed, partial, failed],
            labels=["completed", "partial", "failed"],
            color=["green", "orange", "red"],
            width=0.8,
        )
        plt.xticks(ticks, [labels[i] for i in ticks])
        top = max([c + p + f for c, p, f in zip(completed, partial, failed, strict=True)] + [1])
        step = max(1, -(-top // 5))
        plt.yticks(list(range(0, top + 1, step)))
        plt.title("Posts finished per day")
        posts.refresh()
        rate = self.query_one("#act-rate", PlotextPlot)
        plt = rate.plt
        plt.clear_figure()
        days_with = [
            (i, d)
            for i, d in enumerate(act.per_day)
            if d.targets.succeeded + d.targets.inbox_delivered + d.targets.failed
        ]
        if days_with:
            ys = [
                100
                * (d.targets.succeeded + d.targets.inbox_delivered)
                / (d.targets.succeeded + d.targets.inbox_delivered + d.targets.failed)
                for _, d in days_with
            ]
            plt.plot([i for i, _ in days_with], ys, marker="braille", color="cyan")
            plt.scatter([i for i, _ in days_with], ys, marker="dot", color="cyan")
        plt.ylim(0, 100)
        plt.yticks([0, 25, 50, 75, 100])
        plt.xlim(0, max(1, len(xs) - 1))
        plt.xticks(ticks, [labels[i] for i in ticks])
        plt.title("Target success rate per day (%)")
        rate.refresh()

    def _show_failures_title(self) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Latest failures", style="bold")
        alert = self.webhooks.alert() if self.webhooks.state == "loaded" else ""
        if alert and not self.webhooks_in_view():
            title.append(f" · webhooks: {alert} (w)", style="bold red")
        act = self._shown
        if act is not None:
            title.append(
                f" · {len(act.failures)} shown, newest first · enter opens the post"
                if act.failures
                else " · none in this period",
                style="dim",
            )
        self.query_one("#act-failures-title", Static).update(title)

    def _show_failures(self, act: ActivityOut) -> None:
        self._shown = act
        self._show_failures_title()
        table = self.query_one("#act-failures", DataTable)
        keep = table.cursor_row
        self.failures = list(act.failures)
        zone = shell(self).zone
        # the terminal's width (known from the start, unlike this screen's before its first layout): the time 13,
        # the network 10, the fail type 11, the margins and a scrollbar 4; the account's name as wide as the
        # longest (up to a third of what is left), the reason the rest
        left = max(40, self.app.size.width - 13 - 10 - 11 - 4)
        name_w = min(max((len(f.account_name) for f in act.failures), default=0), max(18, left // 3))
        room = max(20, left - name_w - 1)
        rows: list[tuple[str, list[str | Text]]] = []
        for i, f in enumerate(act.failures):
            at = parse_instant(f.completed_at) if f.completed_at else None
            kind = f.fail_type or "-"
            reason = " ".join((f.fail_reason or "").split())
            rows.append(
                (
                    str(i),
                    [
                        f"{zone.local(at):%d %b %H:%M} " if at else "- ",
                        f"{f.platform} ",
                        clip(f.account_name, name_w) + " ",
                        Text(f"{kind} ", style="yellow" if kind == "retriable" else "red"),
                        clip(reason, room),
                    ],
                )
            )
        fill(table, FAILURE_COLUMNS, rows)  # the columns rebuilt: narrower too when the terminal shrank
        if act.failures:
            table.move_cursor(row=min(keep, len(act.failures) - 1))

    def on_resize(self) -> None:
        if self._shown is not None:
            self._show_failures(self._shown)  # the reasons are clipped to the width
        self.query_one(WebhooksPanel).redraw()
        if self.has_class("tall") != self.tall:
            self._show_panel()
            if self.webhooks_in_view() and self.webhooks.deliveries is None:
                self._load_webhooks()

    def unavailable(self, action: str) -> str | None:
        """Why `action` (o, s, e) has nothing to act on now — said when its key is pressed — or None."""
        panel = self.query_one(WebhooksPanel)
        if action == "open":
            if not self.query_one("#act-failures").display:
                return "The failures are not shown: k shows them again."
            if not self.failures:
                return f"No failed post in the last {self.days} days: nothing to open."
            return None
        if action == "redeliver":
            if not self.webhooks_in_view():
                return "The webhooks are not shown: w shows them, then s redelivers the selected failed delivery."
            if panel.selected_delivery() is None:
                return "No failed delivery to redeliver." + (
                    "" if panel.deliveries else self._webhooks_hint()
                )
            return None
        if action == "enable_webhook":
            if not self.webhooks_in_view():
                return "The webhooks are not shown: w shows them, then e re-enables the selected disabled endpoint."
            endpoint = panel.selected_endpoint()
            if endpoint is None or endpoint.enabled:
                return "No disabled endpoint: e re-enables one a 410 Gone or a user disabled." + (
                    "" if panel.view.endpoints else self._webhooks_hint()
                )
            return None
        return None

    def _webhooks_hint(self) -> str:
        if self.webhooks.state == "loaded" and not self.webhooks.endpoints:
            return f" There is no webhook endpoint yet: {ADD_HINT}."
        return ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "explain":
            # the hidden twin of a key (socialpub_tui.bindings.explained): runs only when the action may not
            return False if self.unavailable(str(parameters[0])) is None else True
        if action == "open" and not self.query_one("#act-failures").display:
            return False  # not in the footer (its key still says why)
        if action in ("redeliver", "enable_webhook") and not self.webhooks_in_view():
            return False
        if action in ("open", "redeliver", "enable_webhook"):
            return None if self.unavailable(action) else True
        return True

    def action_explain(self, action: str) -> None:
        reason = self.unavailable(action)
        if reason:
            self.notify(reason, title="Nothing to do", severity="warning", timeout=6)

    def action_open(self) -> None:
        table = self.query_one("#act-failures", DataTable)
        if not self.failures or table.cursor_row >= len(self.failures):
            return
        try:
            # deferred: socialpub_tui.screens.post_detail costs ~53 ms of the TUI's launch, paid when the screen is first opened
            from socialpub_tui.screens.post_detail import PostDetailScreen
        except ImportError:
            self.notify("The post detail screen is not in this build.", severity="warning")
            return
        self.app.push_screen(PostDetailScreen(self.failures[table.cursor_row].post_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "act-failures":
            self.action_open()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id in ("act-hooks", "act-deliveries"):
            self.refresh_bindings()  # `e` depends on the endpoint selected

    # ---- the webhooks panel (w) ---------------------------------------------------------------------------
    def action_toggle_webhooks(self) -> None:
        self.panel = "failures" if self.panel == "webhooks" else "webhooks"
        self._focus_webhooks = self.panel == "webhooks"
        self._show_panel()
        if self.webhooks_in_view():
            self._load_webhooks()
        if self.tall:  # both are shown already: w moves between them, and says where it went
            where = "the webhooks" if self.panel == "webhooks" else "the failed posts"
            self.notify(
                f"On {where} (both are shown in a terminal this tall): w goes back.",
                title="Webhooks" if self.panel == "webhooks" else "Failures",
                timeout=4,
            )

    @work(exclusive=True, group="activity-webhooks")
    async def _load_webhooks(self) -> None:
        """GET /v1/webhooks; while the panel is in view, also each endpoint's latest failed deliveries (AT_ONCE
        endpoints at a time), merged."""
        client = shell(self).client
        with_deliveries = self.webhooks_in_view()
        try:
            hooks = await client.list_webhooks()
        except Exception as exc:  # noqa: BLE001 — the panel says what it can; other errors are notified
            self.post_message(WebhooksLoaded(self._unreadable(exc)))
            return
        if not with_deliveries:
            self.post_message(WebhooksLoaded(WebhooksView("loaded", hooks.items, None)))
            return
        gate = asyncio.Semaphore(AT_ONCE)

        async def failed(endpoint: WebhookOut) -> list[DeliveryOut]:
            async with gate:
                page = await client.list_deliveries(endpoint.id, status="failed", limit=DELIVERIES)
                return list(page.items)

        pages = await asyncio.gather(*(failed(e) for e in hooks.items), return_exceptions=True)
        errors = [p for p in pages if isinstance(p, BaseException)]
        if errors and not all(isinstance(e, ApiError) and e.code == "webhook_not_found" for e in errors):
            shell(self).report(errors[0], "Webhook deliveries")  # deleted meanwhile: no
        read = [p for p in pages if not isinstance(p, BaseException)]
        self.post_message(WebhooksLoaded(WebhooksView("loaded", hooks.items, latest_failed(read))))

    def _unreadable(self, exc: BaseException) -> WebhooksView:
        if missing_extension(exc):
            return WebhooksView("unavailable")
        if isinstance(exc, ApiError) and exc.status == 403:
            return WebhooksView("forbidden", note=f"this key may not read them ({exc.code}: {exc.message})")
        shell(self).report(exc, "Webhooks")
        return WebhooksView("error")

    def on_webhooks_loaded(self, message: WebhooksLoaded) -> None:
        panel = self.query_one(WebhooksPanel)
        panel.show(message.view)
        self.webhooks = panel.view
        self._show_failures_title()
        if self.panel == "webhooks" and (self._focus_webhooks or self.focused is None):
            panel.focus_table()
            self._focus_webhooks = message.view.deliveries is None  # again once the deliveries are read
        self.refresh_bindings()

    def action_redeliver(self) -> None:
        delivery = self.query_one(WebhooksPanel).selected_delivery()
        if delivery is not None:
            self._redeliver(delivery)

    @work(group="activity-webhook-actions")
    async def _redeliver(self, delivery: DeliveryOut) -> None:
        url = self.query_one(WebhooksPanel).url_of(delivery.endpoint_id)
        try:
            out = await shell(self).client.redeliver_event(
                delivery.event_id, endpoint_id=delivery.endpoint_id
            )
        except Exception as exc:  # noqa: BLE001 — notified with the API's code and message
            shell(self).report(exc, "Redeliver")
            return
        n = len(out.deliveries)
        self.notify(
            f"{delivery.event_type} {out.event_id} queued again for {url} "
            f"({n} deliver{'y' if n == 1 else 'ies'})",
            title="Redelivered",
        )
        self._load_webhooks()

    def action_enable_webhook(self) -> None:
        endpoint = self.query_one(WebhooksPanel).selected_endpoint()
        if endpoint is not None and not endpoint.enabled:
            self._enable(endpoint)

    @work(group="activity-webhook-actions")
    async def _enable(self, endpoint: WebhookOut) -> None:
        try:
            await shell(self).client.update_webhook(endpoint.id, {"enabled": True})
        except Exception as exc:  # noqa: BLE001 — notified with the API's code and message
            shell(self).report(exc, "Re-enable")
            return
        self.notify(f"{endpoint.url} gets new deliveries again", title="Endpoint re-enabled")
        self._load_webhooks()


def clip(text: str, width: int) -> str:
    """`text` (a name, a failure reason, a note) in at most `width` characters, shown inert."""
    text = inert(text)
    return text if len(text) <= width else text[: width - 1] + "…"
