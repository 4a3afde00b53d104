"""The activity screen's webhooks panel (docs/webhooks.md): the endpoints that are failing or disabled, and the
latest failed deliveries across every endpoint, newest first, each with the receiver's status code.

The panel only draws: the activity screen reads `GET /v1/webhooks` and each endpoint's
`GET /v1/webhooks/:id/deliveries?status=failed` in a worker and hands the outcome over as a `WebhooksView`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from backend.schemas.webhooks import DeliveryOut, WebhookOut
from socialpub_tui.look import inert
from socialpub_tui.shell import shell
from socialpub_tui.times import parse_instant
from socialpub_tui.widgets.tables import RowTable, fill

DELIVERIES = 20  # failed deliveries shown (and asked of each endpoint)
ADD_HINT = "socialpub webhooks add URL"
SLACK = 4  # columns left free: a vertical scrollbar (2) when the rows outgrow the table, and a margin
_EPOCH = datetime.min.replace(tzinfo=UTC)


@dataclass
class WebhooksView:
    """What the panel shows. `state`: `loaded`, `loading`, `unavailable` (the server has no webhooks extension),
    `forbidden` (this API key may not read them) or `error` (could not be read; the app notified why).
    `deliveries` is None when they were not read this time (the panel keeps the ones it shows)."""

    state: str = "loading"
    endpoints: list[WebhookOut] = field(default_factory=list)
    deliveries: list[DeliveryOut] | None = None
    note: str = ""

    @property
    def problems(self) -> list[WebhookOut]:
        """The endpoints worth a look: disabled first, then failing, each the longest-failing first."""
        bad = [e for e in self.endpoints if not e.enabled or e.failing]
        return sorted(bad, key=lambda e: (e.enabled, e.failing_since or e.updated_at))

    def alert(self) -> str:
        """`1 failing, 1 disabled` (empty when every endpoint is healthy or nothing is known)."""
        failing = sum(1 for e in self.endpoints if e.enabled and e.failing)
        disabled = sum(1 for e in self.endpoints if not e.enabled)
        parts = [f"{failing} failing"] * bool(failing) + [f"{disabled} disabled"] * bool(disabled)
        return ", ".join(parts)


def latest_failed(pages: list[list[DeliveryOut]], limit: int = DELIVERIES) -> list[DeliveryOut]:
    """The failed deliveries of every endpoint merged, newest first (by when they ended), at most `limit`."""
    merged = [d for page in pages for d in page]
    merged.sort(key=lambda d: parse_instant(ended(d)) or _EPOCH, reverse=True)
    return merged[:limit]


def ended(d: DeliveryOut) -> str:
    """When a delivery ended: completed, else its last attempt, else when it was created."""
    return d.completed_at or (d.attempt_log[-1].at if d.attempt_log else d.created_at)


def code_text(code: int | None) -> Text:
    """A receiver's status code in a colour: 5xx red, 410 magenta (it disabled the endpoint), other 4xx and 3xx
    yellow; `-` when no answer came (refused, timed out)."""
    if code is None:
        return Text("-   ", style="red")
    style = "red" if code >= 500 else "magenta" if code == 410 else "yellow" if code >= 300 else "green"
    return Text(f"{code} ", style=style)


def error_text(d: DeliveryOut) -> str:
    """A failed delivery's error on one line; one refused by a setting says which (the endpoint is not at fault;
    the title says the command that changes it, `socialpub webhooks deliveries` the whole sentence)."""
    if d.refused_by:
        return f"refused by the {d.refused_by} setting"
    return " ".join((d.last_error or "").split()) or "-"


HOOK_COLUMNS = ("endpoint", "problem", "last")
DELIVERY_COLUMNS = ("failed at", "event", "code", "error", "endpoint")


def clip(text: str, width: int) -> str:
    """`text` (an event type, a receiver's error) in at most `width` characters, shown inert."""
    text = inert(text)
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def clip_url(url: str, width: int, *, scheme: bool = True) -> str:
    """A URL in `width` characters, cut in the middle (the host and the path's end both tell endpoints apart);
    without its scheme unless `scheme`. Shown inert."""
    url = inert(url)
    if not scheme:
        url = url.split("://", 1)[-1]
    if len(url) <= width:
        return url
    head = max(1, (width - 1) * 3 // 5)
    tail = max(0, width - 1 - head)
    return url[:head] + "…" + (url[-tail:] if tail else "")


class WebhooksPanel(Vertical):
    """Title line, the endpoints with a problem, the latest failed deliveries."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]  # Textual's widget keywords (id, classes, …) passed through
        self.view = WebhooksView()
        self.deliveries: list[DeliveryOut] = []
        self.endpoints: list[WebhookOut] = []  # the ones listed (with a problem)
        self._urls: dict[str, str] = {}
        self._shown_ids: dict[str, list[str]] = {}  # the ids of each table's rows, in order

    def compose(self) -> ComposeResult:
        yield Static(id="act-webhooks-title")
        yield RowTable(id="act-hooks", zebra_stripes=True, cell_padding=0)
        yield RowTable(id="act-deliveries", zebra_stripes=True, cell_padding=0)

    def on_mount(self) -> None:
        self.show(self.view)

    # ---- what is selected ---------------------------------------------------------------------------------
    def selected_delivery(self) -> DeliveryOut | None:
        table = self.query_one("#act-deliveries", DataTable)
        if not self.deliveries or not table.display or table.cursor_row >= len(self.deliveries):
            return None
        return self.deliveries[table.cursor_row]

    def selected_endpoint(self) -> WebhookOut | None:
        table = self.query_one("#act-hooks", DataTable)
        if not self.endpoints or not table.display or table.cursor_row >= len(self.endpoints):
            return None
        return self.endpoints[table.cursor_row]

    def url_of(self, endpoint_id: str) -> str:
        return self._urls.get(endpoint_id, endpoint_id)

    def focus_table(self) -> None:
        for name in ("#act-deliveries", "#act-hooks"):
            table = self.query_one(name, DataTable)
            if table.display:
                table.focus()
                return
        self.screen.set_focus(None)

    # ---- drawing ------------------------------------------------------------------------------------------
    def show(self, view: WebhooksView) -> None:
        if view.deliveries is None and view.state == "loaded" and self.view.state == "loaded":
            view.deliveries = self.view.deliveries  # not read this time: keep what is shown
        self.view = view
        self._urls = {e.id: e.url for e in view.endpoints}
        self.query_one("#act-webhooks-title", Static).update(self._title(view))
        listed = view.state == "loaded" and bool(view.endpoints)
        self.endpoints = view.problems if listed else []
        self.deliveries = list(view.deliveries or []) if listed else []
        hooks = self.query_one("#act-hooks", DataTable)
        hooks.display = bool(self.endpoints)
        deliveries = self.query_one("#act-deliveries", DataTable)
        deliveries.display = bool(self.deliveries)
        self._fill()

    def redraw(self) -> None:
        """Again, for the width (the URLs and errors are clipped to it)."""
        self._fill()

    def _fill(self) -> None:
        zone = shell(self).zone
        width = self.app.size.width
        hooks = self.query_one("#act-hooks", DataTable)
        keep = hooks.cursor_row, self._shown_ids.get("hooks", [])
        # endpoint | problem (28, or 44 when wide) | last (5)
        problem_room = 28 if width < 120 else 44
        room = max(20, width - problem_room - 5 - SLACK)
        rows: list[tuple[str, list[str | Text]]] = []
        for e in self.endpoints:
            if not e.enabled:
                problem = Text(
                    clip(f"disabled: {e.disabled_reason or 'by a user'}", problem_room - 1) + " ",
                    style="magenta",
                )
            else:
                since = parse_instant(e.failing_since) if e.failing_since else None
                problem = Text(
                    f"failing since {zone.local(since):%d %b %H:%M} " if since else "failing ", style="red"
                )
            rows.append((e.id, [clip_url(e.url, room - 1) + " ", problem, code_text(e.last_status_code)]))
        fill(hooks, HOOK_COLUMNS, rows)
        hooks.move_cursor(row=self._same_row(keep, [e.id for e in self.endpoints], "hooks"))
        table = self.query_one("#act-deliveries", DataTable)
        keep = table.cursor_row, self._shown_ids.get("deliveries", [])
        # failed at (13) | event (≤23) | code (4) | error | endpoint: the event types and the errors as wide as the
        # longest one needs (the errors up to 3/5 of what is left), the URLs the rest
        event_room = min(23, max((len(d.event_type) + 1 for d in self.deliveries), default=6))
        room = max(30, width - 13 - event_room - 4 - SLACK)
        errors = [error_text(d) for d in self.deliveries]
        error_room = min(max((len(e) + 1 for e in errors), default=6), room * 3 // 5)
        url_room = room - error_room
        rows = []
        for d, error in zip(self.deliveries, errors, strict=True):
            at = parse_instant(ended(d))
            rows.append(
                (
                    d.id,
                    [
                        f"{zone.local(at):%d %b %H:%M} " if at else "- ",
                        clip(d.event_type, event_room - 1) + " ",
                        code_text(d.last_status_code),
                        Text(clip(error, error_room - 1) + " ", style="yellow" if d.refused_by else ""),
                        Text(clip_url(self.url_of(d.endpoint_id), url_room, scheme=False), style="dim"),
                    ],
                )
            )
        fill(table, DELIVERY_COLUMNS, rows)
        table.move_cursor(row=self._same_row(keep, [d.id for d in self.deliveries], "deliveries"))

    def _same_row(self, keep: tuple[int, list[str]], ids: list[str], name: str) -> int:
        """The row of what the cursor was on (by id: a redelivery adds a row above it), else the same row."""
        row, before = keep
        self._shown_ids[name] = ids
        if 0 <= row < len(before) and before[row] in ids:
            return ids.index(before[row])
        return max(0, min(row, len(ids) - 1))

    def _title(self, view: WebhooksView) -> Text:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Webhooks", style="bold")
        if view.state == "loading":
            title.append(" · loading…", style="dim")
        elif view.state == "unavailable":
            title.append(" · not offered by this server (a socialpub extension)", style="dim")
        elif view.state == "forbidden":
            title.append(f" · {inert(view.note or 'this API key may not read them')}", style="yellow")
        elif view.state == "error":
            title.append(" · could not be read (r to retry)", style="red")
        elif not view.endpoints:
            title.append(" · no endpoints yet; add one with ", style="dim")
            title.append(ADD_HINT, style="bold")
        else:
            n = len(view.endpoints)
            alert = view.alert()
            title.append(f" · {n} endpoint{'s' if n != 1 else ''}", style="dim")
            title.append(f": {alert}" if alert else ", all healthy", style="red" if alert else "green")
            if view.deliveries is None:
                title.append(" · reading the deliveries…", style="dim")
            elif view.deliveries:
                n = len(view.deliveries)
                refused = [d for d in view.deliveries if d.refused_by]
                if refused:  # what to do first, while the width lasts
                    setting = refused[0].refused_by
                    title.append(
                        f" · {len(refused)} refused by the {setting} setting: socialpub admin {setting} on, "
                        "then s redelivers",
                        style="yellow",
                    )
                else:
                    title.append(
                        f" · {'the latest failed delivery' if n == 1 else f'{n} latest failed deliveries, newest first'}"
                        " · s redelivers",
                        style="dim",
                    )
            else:
                title.append(" · no failed deliveries", style="dim")
        return title
