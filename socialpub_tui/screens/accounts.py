"""f4: the connected accounts — network, name, username, kind, status (coloured), token expiry (the server's
`tokenWarning` — a token that cannot be refreshed nearing its expiry, an account to reconnect — highlights the row
and is shown as a line; from a service without it, any token within `EXPIRY_WARNING`), the default account of each
network; and, for a sandbox account, what its emulated network received (GET /v1/sandbox/published) in the panel
below, for the account under the cursor; `accounts doctor`'s findings (GET /v1/accounts/doctor): a marker on an
account's row (✗ an error, ⚠ a warning), its findings and those of its network's app (a live account's) with
their fixes in the panel, the app errors and API version warnings (30 days before its sunset) of a network with a
live account under the table; `d` runs the doctor again and says what it found.

Both fetches run in exclusive workers: the list on mount / `r` / a post changed, the panel each time the cursor
lands on another account (a newer selection makes the older fetch stale: it is cancelled, and a late answer for
an account no longer selected is dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from backend.schemas.accounts import AccountList, AccountOut, DoctorFinding, DoctorReport
from backend.schemas.sandbox import SandboxPublication
from socialpub_tui.client.errors import ApiError
from socialpub_tui.look import inert, status_colour
from socialpub_tui.messages import PostChanged
from socialpub_tui.screens.add_sandbox import AddSandboxScreen
from socialpub_tui.shell import shell
from socialpub_tui.times import parse_instant, relative
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.tables import RowTable

EXPIRY_WARNING = timedelta(days=7)
PUBLISHED_SHOWN = 20


@dataclass
class AccountsLoaded(Message):
    accounts: AccountList | None
    doctor: DoctorReport | None = None
    announce: bool = False  # `d`: say what the doctor found


@dataclass
class PublishedLoaded(Message):
    account_id: str
    items: list[SandboxPublication] | None


def clip(text: str, width: int) -> str:
    """A name in at most `width` characters, shown inert."""
    text = inert(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def expiry(account: AccountOut, now: datetime) -> tuple[str, str | None]:
    """(`reauth` | `expired` | `soon` | `ok` | `none`, the warning line or None).

    The server says what needs doing (`tokenWarning`: a token that cannot be refreshed nearing its expiry, an
    account to reconnect); a token it refreshes by itself is no concern. A service without that extension:
    any token within EXPIRY_WARNING of its expiry is warned about."""
    at = parse_instant(account.token_expires_at) if account.token_expires_at else None
    if "token_warning" in account.model_fields_set:
        if not account.token_warning:
            return ("none" if at is None else "ok"), None
        line = f"{inert(account.name)} ({account.platform}): {inert(account.token_warning)}"
        if account.status == "needs_reauth":
            return "reauth", line
        return ("expired" if at is not None and at <= now else "soon"), line
    if at is None:
        return "none", None
    if at <= now:
        return "expired", (
            f"{inert(account.name)} ({account.platform}): its token expired {relative(at, now)}: "
            "reconnect it, its posts will fail until then"
        )
    if at - now <= EXPIRY_WARNING:
        return "soon", (
            f"{inert(account.name)} ({account.platform}): its token expires {relative(at, now)}: "
            "reconnect it before then"
        )
    return "ok", None


MARKS = {"error": ("✗", "bold red"), "warning": ("⚠", "bold yellow")}


def worst(findings: list[DoctorFinding]) -> str | None:
    """ "error", "warning" or None: the marker of a row."""
    severities = {f.severity for f in findings}
    return "error" if "error" in severities else "warning" if severities else None


def finding_text(f: DoctorFinding, prefix: str = "") -> Text:
    mark, style = MARKS[f.severity]
    text = Text()
    text.append(f"{mark} {prefix}{f.code}", style=style)
    text.append(f": {inert(f.message)}")
    text.append(f"\n    fix: {inert(f.fix)}", style="dim")
    return text


class AccountsScreen(Screen[None]):
    CSS_PATH = "accounts.tcss"
    BINDINGS = [
        Binding("r", "reload", "Refresh", id="accounts.refresh"),
        Binding("a", "add_sandbox", "Add sandbox account", id="accounts.add_sandbox"),
        Binding("d", "doctor", "Doctor", id="accounts.doctor"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.accounts: list[AccountOut] = []
        self.selected_id: str | None = None
        self.doctor: DoctorReport | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="acc-title")
        yield RowTable(id="acc-table", zebra_stripes=True, cell_padding=0)
        yield Static(id="acc-warnings")
        yield Static(id="acc-published-title")
        yield Static(id="acc-published")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # Sized to fit 80 columns: one space after each cell instead of the default two around it.
        table.add_column("", key="doctor")  # the doctor's marker: ✗ an error, ⚠ a warning
        for label, key in (
            ("account", "account"),
            ("username", "username"),
            ("kind", "kind"),
            ("status", "status"),
            ("token", "expires"),
            ("default", "default"),
        ):
            table.add_column(label + " ", key=key)
        self.query_one("#acc-title", Static).update("Accounts · loading…")
        shell(self).post_changed.subscribe(self, self._post_changed)
        self._load()
        table.focus()

    def on_screen_resume(self) -> None:
        self._load()

    def _post_changed(self, change: PostChanged) -> None:
        self._load()

    def action_reload(self) -> None:
        self._load()

    def action_doctor(self) -> None:
        self._load(announce=True)

    def action_add_sandbox(self) -> None:
        def chosen(answer: tuple[str, str, str] | None) -> None:
            if answer is not None:
                self._add_sandbox(*answer)

        self.app.push_screen(AddSandboxScreen(), chosen)

    @work(group="accounts-add")
    async def _add_sandbox(self, platform: str, name: str, behaviour: str) -> None:
        try:
            account = await shell(self).client.add_sandbox_account(platform, name, behaviour)
        except Exception as exc:  # noqa: BLE001  (shown with its code)
            shell(self).report(exc, "Add sandbox account")
            return
        self.selected_id = account.id
        self.notify(f"{account.platform} · {account.name} ({behaviour}) connected", title="Account added")
        self._load()

    # ---- the list ---------------------------------------------------------------------------------------
    @work(exclusive=True, group="accounts-load")
    async def _load(self, announce: bool = False) -> None:
        try:
            found = await shell(self).client.list_accounts()
        except Exception as exc:  # noqa: BLE001  (shown with its code)
            shell(self).report(exc, "List accounts")
            self.post_message(AccountsLoaded(None))
            return
        doctor: DoctorReport | None = None
        try:
            doctor = await shell(self).client.accounts_doctor()
        except ApiError as exc:
            if announce or exc.code not in ("not_found", "method_not_allowed"):  # another service: none
                shell(self).report(exc, "Accounts doctor")
        except Exception as exc:  # noqa: BLE001  (shown with its code)
            shell(self).report(exc, "Accounts doctor")
        self.post_message(AccountsLoaded(found, doctor, announce))

    def _findings(self, acc: AccountOut) -> list[DoctorFinding]:
        if self.doctor is None:
            return []
        return next((list(a.findings) for a in self.doctor.accounts if a.id == acc.id), [])

    def _app_findings(self, platform: str) -> list[DoctorFinding]:
        if self.doctor is None:
            return []
        return next((list(n.findings) for n in self.doctor.networks if n.platform == platform), [])

    def _announce(self, report: DoctorReport | None) -> None:
        if report is None:
            return
        every = [f for entry in [*report.networks, *report.accounts] for f in entry.findings]
        errors = sum(1 for f in every if f.severity == "error")
        warnings = len(every) - errors
        if not every:
            self.notify("Nothing to fix.", title="Doctor")
            return
        self.notify(
            f"{errors} error(s), {warnings} warning(s): each with its fix in an account's panel; every one in "
            "`socialpub accounts doctor`",
            title="Doctor",
            severity="error" if errors else "warning",
        )

    def on_accounts_loaded(self, message: AccountsLoaded) -> None:
        if message.accounts is None:
            self.query_one("#acc-title", Static).update("Accounts · could not be listed (r to retry)")
            return
        listing = message.accounts
        self.accounts = list(listing.items)
        self.doctor = message.doctor
        if message.announce:
            self._announce(message.doctor)
        now = shell(self).now()
        zone = shell(self).zone
        table = self.query_one(DataTable)
        keep = self.selected_id
        table.clear()
        warnings: list[str] = []
        # the names and usernames as wide as they are, while the terminal has room: the other columns take at
        # most 36 (kind, status, token, default), the doctor's marker 1, the margins and a scrollbar 4, a
        # network's badge 3
        room = max(30, self.app.size.width - 36 - 1 - 4 - 3)
        name_w = min(max((len(a.name) for a in self.accounts), default=0) + 1, max(19, room * 3 // 5))
        user_w = min(max((len(a.username) for a in self.accounts), default=0) + 1, max(13, room - name_w))
        for acc in self.accounts:
            state, warning = expiry(acc, now)
            if warning:
                warnings.append(warning)
            row_style = (
                "bold yellow" if state == "soon" else "bold red" if state in ("expired", "reauth") else ""
            )
            at = parse_instant(acc.token_expires_at) if acc.token_expires_at else None
            if state == "reauth":
                expires = Text("⚠ reconnect ", style=row_style)
            elif at is None:
                expires = Text("never ", style="dim")
            elif state in ("soon", "expired"):
                expires = Text(f"⚠ {relative(at, now)} ", style=row_style)
            else:
                expires = Text(f"{zone.local(at):%Y-%m-%d} ")
            marker = worst(self._findings(acc))
            badge = shell(self).networks.badge(acc.platform)
            kind = acc.kind if acc.kind != "sandbox" or acc.behaviour in (None, "ok") else "sandbox*"
            table.add_row(
                Text(MARKS[marker][0], style=MARKS[marker][1]) if marker else Text(" "),
                Text(f"{badge} {clip(acc.name, name_w - 1)} ", style=row_style),
                Text(f"{clip(acc.username, user_w - 1)} ", style=row_style or "dim"),
                Text(f"{kind} ", style=row_style),
                Text(f"{acc.status} ", style=status_colour(acc.status)),
                expires,
                Text("✓" if acc.is_default else "", style="bold green"),
                key=acc.id,
            )
        title = Text()
        title.append(f"Accounts · {len(self.accounts)} connected", style="bold")
        title.append(f" · {listing.used} of {listing.limit} the plan allows")
        self.query_one("#acc-title", Static).update(title)
        # the app errors of a network with a live account first (every post to it fails), then the tokens
        live = {a.platform for a in self.accounts if a.kind == "live"}
        app_errors = [  # and an API version ending within 30 days: what to set before every post fails
            (platform, f)
            for platform in sorted(live)
            for f in self._app_findings(platform)
            if f.severity == "error" or f.code.startswith("api_version_")
        ]
        banner = Text()
        for platform, f in app_errors:
            label = shell(self).networks.label(platform)
            mark, style = MARKS[f.severity]
            banner.append(("\n" if banner else "") + f"{mark} {label} app: {inert(f.message)}", style=style)
        for line in warnings:
            banner.append(
                ("\n" if banner else "") + "⚠ " + line,
                style="bold yellow" if " expires " in line else "bold red",
            )
        warn = self.query_one("#acc-warnings", Static)
        warn.update(banner)
        warn.display = bool(warnings or app_errors)
        if not self.accounts:
            self._show_published(None, [], "No account connected: `a` connects a sandbox account.")
            return
        ids = [a.id for a in self.accounts]
        row = ids.index(keep) if keep in ids else 0
        table.move_cursor(row=row)
        self._select(ids[row], force=True)

    # ---- the selected account's sandbox publications ------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._select(str(event.row_key.value))

    def _account(self, account_id: str | None) -> AccountOut | None:
        return next((a for a in self.accounts if a.id == account_id), None)

    def _select(self, account_id: str, force: bool = False) -> None:
        if account_id == self.selected_id and not force:
            return
        self.selected_id = account_id
        acc = self._account(account_id)
        if acc is None:
            return
        if acc.kind != "sandbox":
            self._show_published(acc, [], "A live account: what it published is on the network itself.")
            return
        self._show_published(acc, None, "loading…")
        self._load_published(account_id)

    @work(exclusive=True, group="accounts-published")
    async def _load_published(self, account_id: str) -> None:
        try:
            found = await shell(self).client.sandbox_published(account_id=account_id, limit=PUBLISHED_SHOWN)
            items: list[SandboxPublication] | None = list(found.items)
        except Exception as exc:  # noqa: BLE001  (shown with its code)
            shell(self).report(exc, "Sandbox publications")
            items = None
        self.post_message(PublishedLoaded(account_id, items))

    def on_published_loaded(self, message: PublishedLoaded) -> None:
        if message.account_id != self.selected_id:
            return  # the cursor has moved on
        acc = self._account(message.account_id)
        if message.items is None:
            self._show_published(acc, [], "could not be read (r to retry)")
        else:
            self._show_published(acc, message.items, "nothing received yet" if not message.items else "")

    def _show_published(
        self, acc: AccountOut | None, items: list[SandboxPublication] | None, note: str
    ) -> None:
        head = Text()
        if acc is not None:
            head.append(
                f"Received by the emulated {acc.platform}" if acc.kind == "sandbox" else acc.platform,
                style="bold",
            )
            head.append(f" · {inert(acc.name)}" + (f" @{inert(acc.username)}" if acc.username else ""))
            if acc.kind == "sandbox" and acc.behaviour not in (None, "ok"):
                head.append(f" · behaviour {acc.behaviour} (*)", style="yellow")
            if items:
                head.append(f" · latest {len(items)}", style="dim")
        self.query_one("#acc-published-title", Static).update(head)
        body = Text(no_wrap=True, overflow="ellipsis")
        found = self._findings(acc) if acc is not None else []
        if acc is not None and acc.kind == "live":
            found += self._app_findings(acc.platform)
        for f in found:
            body.append_text(finding_text(f))
            body.append("\n")
        if note:
            body.append(note, style="dim")
        zone = shell(self).zone
        for i, item in enumerate(items or []):
            if i or note:
                body.append("\n")
            body.append(zone.format(item.created_at), style="blue")
            body.append(
                f"  {inert(item.status):<9}",
                style=status_colour("succeeded" if item.status == "published" else "inbox_delivered"),
            )
            body.append(f" {inert(item.kind or ''):<8} ", style="dim")
            what = item.title or item.text or ""  # what the emulated network received: shown inert
            body.append(inert(" ".join(what.split())) or "(no text)")
            if item.media:
                body.append(f"  [{len(item.media)} media]", style="dim")
            if item.url:
                body.append(f"\n  ↳ {inert(item.url)}", style="dim")
        self.query_one("#acc-published", Static).update(body)
