"""The compose screen's targets and their checks: a row per connected account (its checkbox, its character
counter, what it would refuse), the per-network options sent with them, and the status line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, Static, TextArea

from socialpub_tui import times
from socialpub_tui.checks import Problem, check_target, counter
from socialpub_tui.look import inert
from socialpub_tui.shell import shell

if TYPE_CHECKING:
    from backend.schemas.accounts import AccountOut


@dataclass
class TargetChoice:
    """One account the post can go to. `key` names its row (the account id; platform#n for an old target)."""

    key: str
    platform: str
    account_id: str | None
    name: str
    note: str = ""  # e.g. `default`, `needs_reauth`
    text_limit: int | None = None  # the account's own bound on the text (its server's), else the network's

    def wire(self) -> Any:
        return {"platform": self.platform, "channelId": self.account_id} if self.account_id else self.platform


class TargetCheck(Checkbox):
    """A target's checkbox: `up` and `down` move between the targets (past the last or the first, on to the
    next or the previous field, as tab does)."""

    BINDINGS = [
        Binding("down", "step(1)", "Next target", show=False, id="compose.target.next"),
        Binding("up", "step(-1)", "Previous target", show=False, id="compose.target.previous"),
    ]

    def action_step(self, by: int) -> None:
        boxes = [box for box in self.screen.query(TargetCheck) if box.focusable]
        where = boxes.index(self) + by if self in boxes else -1
        if 0 <= where < len(boxes):
            boxes[where].focus()
        elif by > 0:
            self.screen.focus_next()
        else:
            self.screen.focus_previous()


class TargetRow(Horizontal):
    """[x] network · account   12 / 2,200   ✗ what it would refuse"""

    def __init__(self, choice: TargetChoice, *, selected: bool, fixed: bool, enabled: bool = True) -> None:
        super().__init__(id=f"row-{choice.key}", classes="target-row")
        self.choice = choice
        self._selected = selected
        self._fixed = fixed
        self._enabled = enabled
        self.check_width = 36  # the checkbox's width: the compose screen sizes every row's alike

    @property
    def label(self) -> str:
        return f"{self.choice.platform} · {inert(self.choice.name, markup=True)}" + (
            f" ({inert(self.choice.note, markup=True)})" if self.choice.note else ""
        )

    def compose(self) -> ComposeResult:
        label = self.label
        check = TargetCheck(
            label,
            self._selected,
            id=f"tgt-{self.choice.key}",
            classes="target-check",
            disabled=self._fixed or not self._enabled,
        )
        check.styles.width = self.check_width
        yield check
        yield Static("", classes="target-count")
        yield Static("", classes="target-problem", markup=False)

    @property
    def selected(self) -> bool:
        boxes = self.query(Checkbox)
        return boxes.first().value if boxes else self._selected  # before its children are mounted

    def show(self, used: int | None, limit: int | None, problems: list[Problem], shown: bool = True) -> None:
        """The counter (`used / limit`; `used` alone for a network the server did not describe) and the problems;
        nothing when the row is not selected (`shown` False)."""
        if not self.query(".target-problem"):
            self.call_after_refresh(self.show, used, limit, problems, shown)
            return
        count = self.query_one(".target-count", Static)
        problem = self.query_one(".target-problem", Static)
        if not shown or used is None:
            count.update("")
            problem.update("")
            self.remove_class("has-problem")
            return
        if limit is None:
            count.update(Text(f"{used:,}"))
        else:
            count.update(Text(f"{used:,} / {limit:,}", style="bold red" if used > limit else ""))
        if problems:
            problem.update(Text("✗ " + "; ".join(inert(p.message) for p in problems), style="red"))
            self.add_class("has-problem")
        else:
            problem.update(Text("✓", style="green"))
            self.remove_class("has-problem")


class TargetsPane(Screen[Any]):
    """ComposeScreen's targets and checks (a part of it: it runs on a ComposeScreen)."""

    # ---- targets ------------------------------------------------------------------------------------------
    @work(exclusive=True, group="compose-accounts")
    async def load_accounts(self) -> None:
        try:
            listing = await shell(self).client.list_accounts()
        except Exception as exc:  # noqa: BLE001
            shell(self).report(exc, "reading the connected accounts")
            return
        accounts: list[AccountOut] = sorted(
            listing.items, key=lambda a: (a.platform, not a.is_default, a.name)
        )
        choices = [
            TargetChoice(
                a.id, a.platform, a.id, a.name, "" if a.status == "active" else a.status, a.text_limit
            )
            for a in accounts
            if a.status != "disconnected"
        ]
        preselected: set[str] = set()
        if self.duplicate and self.source is not None:
            for t in self.source.targets:
                if t.account_id and any(c.key == t.account_id for c in choices):
                    preselected.add(t.account_id)
                else:  # an old target without account id: the network's default account
                    default = next((a for a in accounts if a.platform == t.platform and a.is_default), None)
                    if default is not None:
                        preselected.add(default.id)
        inactive = {a.id for a in accounts if a.status != "active"}
        preselected -= inactive  # a duplicate does not pick an account that cannot publish (needs_reauth)
        await self._mount_choices(choices, preselected, inactive)

    def _set_choices(self, choices: list[TargetChoice], *, fixed: bool) -> None:
        self.choices = choices
        self._initial_targets = {c.key for c in choices}
        box = self.query_one("#compose-targets", Vertical)
        rows = [TargetRow(c, selected=True, fixed=fixed) for c in choices]
        self._size_rows(rows)
        box.mount_all(rows)
        self.call_after_refresh(self.refresh_checks)

    def _size_rows(self, rows: list[TargetRow]) -> None:
        """Every target's checkbox as wide as the longest label needs (the box, padding and a space: 8), up to
        half the terminal: a name is cut only when there is no room (it was at 36, `Sandbox Facebook P…`)."""
        width = min(max((len(r.label) for r in rows), default=0) + 8, max(36, self.app.size.width // 2))
        for row in rows:
            row.check_width = max(36, width)

    async def _mount_choices(
        self, choices: list[TargetChoice], preselected: set[str], inactive: set[str]
    ) -> None:
        self.choices = choices
        self._initial_targets = set(preselected)
        box = self.query_one("#compose-targets", Vertical)
        await box.remove_children()
        if not choices:
            await box.mount(
                Static(
                    "No connected account: connect one (f4, or `socialpub accounts`) first.", classes="muted"
                )
            )
        rows = [
            TargetRow(c, selected=c.key in preselected, fixed=False, enabled=c.key not in inactive)
            for c in choices
        ]
        self._size_rows(rows)
        await box.mount_all(rows)
        self.refresh_checks()

    def rows(self) -> list[TargetRow]:
        return list(self.query(TargetRow))

    def selected_rows(self) -> list[TargetRow]:
        return [r for r in self.rows() if r.selected]

    # ---- checks -------------------------------------------------------------------------------------------
    def options_wire(self, platforms: set[str]) -> dict[str, Any]:
        """`options` as sent: each target network's settings (its form), only for the networks targeted."""
        return {form.network: form.values() for form in self.option_forms() if form.network in platforms}

    def options_problem(self, network: str, options: dict[str, Any]) -> Problem | None:
        """What the network's options schema plainly refuses (a text over its maxLength, too many items), else
        None; the server checks the rest (e.g. YouTube's way of counting tags) and answers at the same place."""
        for form in self.option_forms():
            if form.network == network and form.problems():
                return Problem("option_choice", form.problems()[0])
        schema = shell(self).networks.options_schema(network) or {}
        for name, value in (options.get(network) or {}).items():
            prop = (schema.get("properties") or {}).get(name) or {}
            for branch in prop.get("anyOf") or [prop]:
                if isinstance(value, str) and "maxLength" in branch and len(value) > branch["maxLength"]:
                    return Problem("validation_error", f"{name}: at most {branch['maxLength']} characters")
                if isinstance(value, list) and "maxItems" in branch and len(value) > branch["maxItems"]:
                    return Problem("validation_error", f"{name}: at most {branch['maxItems']} items")
        return None

    def target_problems(self) -> dict[str, list[Problem]]:
        """Every selected target's problems: the local checks, then what the API answered last."""
        content = self.query_one("#compose-text", TextArea).text
        kinds = [m.kind for m in self.media]
        selected = self.selected_rows()
        options = self.options_wire({r.choice.platform for r in selected})
        networks = shell(self).networks
        out: dict[str, list[Problem]] = {}
        for row in selected:
            platform = row.choice.platform
            problems = check_target(networks, platform, content, kinds, options, row.choice.text_limit)
            bad_options = self.options_problem(platform, options)
            if bad_options is not None:
                problems.append(bad_options)
            for p in self.server_problems.get(row.choice.key, []):
                if p.code not in {q.code for q in problems}:
                    problems.append(p)
            out[row.choice.key] = problems
        return out

    def refresh_checks(self) -> None:
        content = self.query_one("#compose-text", TextArea).text
        problems = self.target_problems()
        platforms: set[str] = set()
        for row in self.rows():
            if row.selected:
                platforms.add(row.choice.platform)
                used, limit = counter(
                    shell(self).networks, row.choice.platform, content, row.choice.text_limit
                )
                row.show(used, limit, problems.get(row.choice.key, []))
            else:
                row.show(None, None, [], shown=False)
        for form in self.option_forms():
            form.display = form.network in platforms
        self._sync_choices()
        self._draw_status(problems)

    # ---- what the accounts' networks let their creator choose ----------------------------------------------
    def _sync_choices(self) -> None:
        """Each options form shows what its targeted accounts' network lets their creator choose now: asked once
        per account (load_choices), drawn when the answers or the targeted accounts change."""
        forms = {form.network: form for form in self.option_forms()}
        wanted: dict[str, list[str]] = {}
        for row in self.selected_rows():
            if row.choice.account_id and row.choice.platform in forms:
                wanted.setdefault(row.choice.platform, []).append(row.choice.account_id)
        for network, form in forms.items():
            ids = tuple(wanted.get(network, ()))
            for account_id in ids:
                if account_id not in self._asked_choices:
                    self._asked_choices.add(account_id)
                    self.load_choices(account_id)
            answered = tuple(i for i in ids if i in self.account_choices)
            if self._shown_choices.get(network) == answered:
                continue
            self._shown_choices[network] = answered
            found = [
                self.account_choices[i] for i in answered if not isinstance(self.account_choices[i], str)
            ]
            failures = [self.account_choices[i] for i in answered if isinstance(self.account_choices[i], str)]
            form.apply_choices(found, failures[0] if failures else None)

    @work(group="compose-choices")
    async def load_choices(self, account_id: str) -> None:
        try:
            found = await shell(self).client.account_choices(account_id)
        except Exception as exc:  # noqa: BLE001  (unreachable network, older server: the schema's values, said)
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            found = (
                f"Could not read what this account lets you choose ({inert(message)}): every value is shown; "
                "the server checks the choice when the post is sent."
            )
        self.account_choices[account_id] = found
        self._sync_choices()

    def _draw_status(self, problems: dict[str, list[Problem]] | None = None) -> None:
        status = self.query_one("#compose-status", Static)
        if self.sending:
            status.update(Text("Sending…", style="bold"))
            return
        if self.uploading:
            status.update(Text("Uploading… (ctrl+s waits for the upload to finish)", style="bold"))
            return
        problems = self.target_problems() if problems is None else problems
        selected = self.selected_rows()
        bad = sum(1 for p in problems.values() if p)
        schedule, schedule_error = self.schedule()
        line = Text()
        line.append(f"{len(selected)} target{'s' if len(selected) != 1 else ''}, {len(self.media)} media · ")
        if schedule_error:
            line.append(schedule_error, style="red")
        elif schedule is None:
            line.append("publish now")
        else:
            line.append(f"{times.iso_utc(schedule)} ({times.relative(schedule, shell(self).now())})")
        if schedule_error:
            pass
        elif not selected and not self.editing:
            line.append(" · pick at least one target", style="yellow")
        elif bad:
            line.append(f" · {bad} target{'s' if bad != 1 else ''} would refuse it (✗)", style="red")
        else:
            line.append(
                " · ctrl+s " + ("saves" if self.editing else "schedules" if schedule else "publishes"),
                style="green",
            )
        status.update(line)
