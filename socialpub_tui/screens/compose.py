"""Compose a post, edit a scheduled one, or duplicate one as a new draft.

    ComposeScreen()                          # a new post (the app's `n`)
    ComposeScreen(post)                      # edit a scheduled post: PATCH, its targets fixed
    ComposeScreen(post, duplicate=True)      # a new post prefilled from `post`; nothing is sent until ctrl+s
    ComposeScreen(media=[Media(url, "video", "…")])  # a new post with media attached (e.g. a generation's file)

ctrl+g attaches the file of a completed generation (GenerationPickerScreen), as the path box attaches a local one.

The screen is dismissed with the post the API answered (None when the user backs out), after announcing it
(`app.announce`). What each target would refuse is checked locally as the user types (`socialpub_tui.checks`:
the schemas' per-network limits, the API's codes) and shown next to the target with its character counter; the
API's own per-target answers (400 `invalid_targets`) are shown at the same place. A new post carries an
idempotency key made when the screen opens, so a second ctrl+s — or a retry after a lost answer — returns the
post already created instead of a second one.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.suggester import Suggester
from textual.widgets import (
    Checkbox,
    Header,
    Input,
    Label,
    OptionList,
    ProgressBar,
    RadioButton,
    RadioSet,
    Select,
    Static,
    TextArea,
)
from textual.widgets.option_list import Option

from socialpub_tui import times
from socialpub_tui.checks import Problem, check_target, counter, media_kind
from socialpub_tui.look import inert
from socialpub_tui.screens.attachments import Media, local_file
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.options_form import OptionsForm

if TYPE_CHECKING:
    from backend.schemas.accounts import AccountOut
    from backend.schemas.posts import PostOut

MAX_MEDIA = 10
SCHEDULE_TICK_S = 20.0  # the "in 3 h 20 min" of the schedule preview is redrawn this often


@dataclass
class TargetChoice:
    """One account the post can go to. `key` names its row (the account id; platform#n for an old target)."""

    key: str
    platform: str
    account_id: str | None
    name: str
    note: str = ""  # e.g. `default`, `needs_reauth`

    def wire(self) -> Any:
        return {"platform": self.platform, "channelId": self.account_id} if self.account_id else self.platform


def complete_path(value: str) -> str | None:
    """The first file or folder completing the path typed so far (`~` kept as typed), hidden ones only when
    asked for with a leading dot; a folder ends with `/`. Blocking."""
    if not value:
        return None
    typed_dir, _, prefix = value.rpartition("/")
    folder = Path(typed_dir or ("/" if value.startswith("/") else ".")).expanduser()
    try:
        names = sorted(
            entry.name + ("/" if entry.is_dir() else "")
            for entry in folder.iterdir()
            if entry.name.startswith(prefix) and (prefix.startswith(".") or not entry.name.startswith("."))
        )
    except OSError:
        return None
    if not names:
        return None
    return (typed_dir + "/" if "/" in value else "") + names[0]


class PathSuggester(Suggester):
    """Completes the media path as it is typed (→ or end accepts the suggestion)."""

    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return await asyncio.to_thread(complete_path, value)


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


class ComposeScreen(Screen["PostOut | None"]):
    """Text, targets, media, schedule, per-network options; ctrl+s sends."""

    CSS_PATH = "compose.tcss"
    BINDINGS = [
        Binding("ctrl+s", "send", "Send", id="compose.send", priority=True),
        Binding("escape", "back", "Back", id="compose.back"),
        Binding("delete", "remove_media", "Remove media", id="compose.remove_media"),
        Binding("ctrl+g", "pick_generation", "Media from generations", id="compose.generation"),
    ]

    def __init__(
        self, post: PostOut | None = None, *, duplicate: bool = False, media: list[Media] | None = None
    ) -> None:
        super().__init__()
        self.source = post
        self.editing = post is not None and not duplicate
        self.duplicate = post is not None and duplicate
        # a duplicate of a scheduled post is scheduled too (at its wall time): never "Now" by surprise
        self._duplicates_a_schedule = self.duplicate and post is not None and post.scheduled_at is not None
        self.idempotency_key = None if self.editing else f"tui-{uuid.uuid4().hex}"
        self.media: list[Media] = [
            Media(url, media_kind(url), f"{media_kind(url) or 'media'} · {url.rsplit('/', 1)[-1]}")
            for url in (post.media_urls if post else [])
        ]
        self._given_media = bool(media)
        self.media.extend(media or [])
        self.choices: list[TargetChoice] = []
        # what each targeted account's network lets its creator choose (GET /v1/accounts/{id}/choices), per
        # account id: the answer, or the failure's sentence; and what each network's options form shows now
        self.account_choices: dict[str, Any] = {}
        self._asked_choices: set[str] = set()
        self._shown_choices: dict[str, tuple[str, ...]] = {}
        self.server_problems: dict[str, list[Problem]] = {}
        self.uploading = False
        self.sending = False
        self.sent: PostOut | None = None
        self._initial: tuple[Any, ...] = ()
        self._initial_targets: set[str] = set()
        # A post's text is edited as shown: inert (an ESC or a BEL in it would otherwise reach the terminal from the
        # editor), line breaks and tabs kept. Sent unchanged, the text as it was goes back (body).
        self.shown_text = (
            inert(self.source.content, newlines=True, tabs=True) if self.source is not None else ""
        )

    # ---- layout -------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="compose-body"):
            yield Label("Text", classes="section")
            yield TextArea(self.shown_text, id="compose-text", soft_wrap=True, show_line_numbers=False)
            yield Label(
                "Targets" + (" (fixed: cancel and create a new post to change them)" if self.editing else ""),
                classes="section",
            )
            yield Vertical(id="compose-targets")
            yield Label("Media", classes="section")
            with Horizontal(id="compose-media-row"):
                yield Input(
                    placeholder="path of an image or video (→ completes, enter uploads it)",
                    id="compose-media-path",
                    suggester=PathSuggester(),
                )
            yield ProgressBar(id="compose-upload", show_eta=False)
            yield Static("", id="compose-media-error", markup=False)
            yield OptionList(id="compose-media")
            yield Label("When", classes="section")
            with RadioSet(id="compose-when"):
                at = self.editing or self._duplicates_a_schedule
                yield RadioButton("Now", id="when-now", value=not at, disabled=self.editing)
                yield RadioButton("At a time", id="when-at", value=at)
            with Horizontal(id="compose-at"):
                yield Input(placeholder="date: 2027-01-16, today, tomorrow", id="compose-date")
                yield Input(placeholder="time: 09:00", id="compose-time")
                yield Input(placeholder="time zone (IANA, e.g. Europe/Paris)", id="compose-zone")
            yield Static("", id="compose-when-preview")
            for network in self.app.networks:  # type: ignore[attr-defined]  # the server's: plugins too
                if network.options:
                    yield OptionsForm(network.name, network.label, network.options)
        yield Static("", id="compose-status")
        yield Footer()

    def on_mount(self) -> None:
        post = self.source
        if self.editing and post is not None:
            self.title = "Edit post"
            self.sub_title = post.id
        elif self.duplicate and post is not None:
            self.title = "New post"
            self.sub_title = f"duplicate of {post.id}"
        else:
            self.title = "New post"
            self.sub_title = ""
        self._prefill_schedule()
        self._prefill_options()
        self.query_one("#compose-upload").display = False
        self.query_one("#compose-media-error").display = False
        # a post's media as they were shown when attached in this app (the file's name, the generation), not by
        # the key the media host gave them; media attached elsewhere keep their kind and key
        labels: dict[str, str] = self.app.media_labels  # type: ignore[attr-defined]
        for m in self.media:
            labels.setdefault(m.url, m.label)
        self.media = [Media(m.url, m.kind, labels.get(m.url, m.label)) for m in self.media]
        self._draw_media()
        self.set_interval(SCHEDULE_TICK_S, self.update_schedule_preview)
        self.query_one("#compose-text", TextArea).focus()
        if self.editing and post is not None:
            self._set_choices(
                [
                    TargetChoice(
                        t.account_id or f"{t.platform}-{i}", t.platform, t.account_id, t.account_name
                    )
                    for i, t in enumerate(post.targets)
                ],
                fixed=True,
            )
        else:
            self.load_accounts()
        self.app.register_draft(self)  # type: ignore[attr-defined]  # ctrl+q and the mode keys ask before dropping it
        if self.source is not None and self.shown_text != self.source.content:
            self.notify(
                "The text holds control characters (an escape sequence, a bell…): they are shown escaped (\\x1b); "
                "left unchanged, the text is kept as it was.",
                title="Control characters",
                severity="warning",
            )
        self._initial = self._form_state()
        if self._given_media:  # media handed in (a generation's file): leaving asks before dropping them
            self._initial = (self._initial[0], (), *self._initial[2:])
        self.refresh_checks()

    def _prefill_schedule(self) -> None:
        zone = self.app.zone  # type: ignore[attr-defined]
        now = self.app.now()  # type: ignore[attr-defined]
        self.query_one("#compose-zone", Input).value = zone.name or ""
        instant = (
            times.parse_instant(self.source.scheduled_at)
            if (self.editing or self.duplicate) and self.source and self.source.scheduled_at
            else None
        )
        if instant is not None:
            local = zone.local(instant)
            if self.duplicate and instant <= now:  # a past time: the same wall time, tomorrow
                local = datetime.combine((zone.local(now) + timedelta(days=1)).date(), local.time())
            self.query_one("#compose-date", Input).value = local.strftime("%Y-%m-%d")
            self.query_one("#compose-time", Input).value = local.strftime("%H:%M")
        else:
            self.query_one("#compose-date", Input).value = (zone.local(now) + timedelta(days=1)).strftime(
                "%Y-%m-%d"
            )
            self.query_one("#compose-time", Input).value = "09:00"
        self._show_at_fields()
        self.update_schedule_preview()

    def option_forms(self) -> list[OptionsForm]:
        return list(self.query(OptionsForm))

    def _prefill_options(self) -> None:
        options = self.source.options if self.source else {}
        for form in self.option_forms():
            form.fill(options.get(form.network) or {})

    # ---- targets ------------------------------------------------------------------------------------------
    @work(exclusive=True, group="compose-accounts")
    async def load_accounts(self) -> None:
        try:
            listing = await self.app.client.list_accounts()  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001
            self.app.report(exc, "reading the connected accounts")  # type: ignore[attr-defined]
            return
        accounts: list[AccountOut] = sorted(
            listing.items, key=lambda a: (a.platform, not a.is_default, a.name)
        )
        choices = [
            TargetChoice(a.id, a.platform, a.id, a.name, "" if a.status == "active" else a.status)
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
        schema = self.app.networks.options_schema(network) or {}  # type: ignore[attr-defined]
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
        networks = self.app.networks  # type: ignore[attr-defined]
        out: dict[str, list[Problem]] = {}
        for row in selected:
            platform = row.choice.platform
            problems = check_target(networks, platform, content, kinds, options)
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
                used, limit = counter(self.app.networks, row.choice.platform, content)  # type: ignore[attr-defined]
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
            found = await self.app.client.account_choices(account_id)  # type: ignore[attr-defined]
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
            line.append(f"{times.iso_utc(schedule)} ({times.relative(schedule, self.app.now())})")  # type: ignore[attr-defined]
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

    # ---- schedule -----------------------------------------------------------------------------------------
    def scheduling(self) -> bool:
        return self.query_one("#when-at", RadioButton).value

    def schedule(self) -> tuple[datetime | None, str | None]:
        """(the UTC instant, None), (None, None) for now, or (None, why the time is refused)."""
        if not self.scheduling():
            return None, None
        date = self.query_one("#compose-date", Input).value.strip()
        hour = self.query_one("#compose-time", Input).value.strip()
        zone = self.query_one("#compose-zone", Input).value.strip() or None
        if not date or not hour:
            return None, "give a date and a time"
        if len(hour) == 4 and hour[1] == ":":
            hour = "0" + hour  # 9:00 -> 09:00
        now = self.app.now()  # type: ignore[attr-defined]
        try:
            instant = times.resolve(f"{date} {hour}", zone, now=now)
        except times.TimeError as exc:
            return None, str(exc)
        if instant <= now:
            return None, f"{times.describe(instant, zone)} is already past"
        return instant, None

    def update_schedule_preview(self) -> None:
        preview = self.query_one("#compose-when-preview", Static)
        if not self.scheduling():
            preview.update(Text("Published as soon as it is sent.", style="dim"))
            self._draw_status()
            return
        instant, error = self.schedule()
        if error or instant is None:
            preview.update(Text(f"✗ {error}", style="red"))
        else:
            zone = self.query_one("#compose-zone", Input).value.strip() or None
            text = Text(f"→ {times.describe(instant, zone)}")
            text.append(f" · {times.relative(instant, self.app.now())}", style="bold")  # type: ignore[attr-defined]
            date = self.query_one("#compose-date", Input).value.strip()
            hour = self.query_one("#compose-time", Input).value.strip()
            twice = times.ambiguity(f"{date} {hour}", zone, instant)
            if twice:
                text.append(f"\n{twice.replace('--at ', 'the time ')}", style="yellow")
            preview.update(text)
        self._draw_status()

    def _show_at_fields(self) -> None:
        self.query_one("#compose-at").display = self.scheduling()

    # ---- media --------------------------------------------------------------------------------------------
    def _draw_media(self) -> None:
        media_list = self.query_one("#compose-media", OptionList)
        media_list.clear_options()
        media_list.add_options(
            [Option(Text(f"{i + 1}. {inert(m.label)}"), id=str(i)) for i, m in enumerate(self.media)]
        )
        media_list.display = bool(self.media)

    @on(Input.Submitted, "#compose-media-path")
    def _path_given(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.upload(event.value.strip())

    @work(exclusive=True, group="compose-upload")
    async def upload(self, text: str) -> None:
        error = self.query_one("#compose-media-error", Static)
        error.display = False
        if len(self.media) >= MAX_MEDIA:
            error.update(f"A post has at most {MAX_MEDIA} media.")
            error.display = True
            return
        path, size = await asyncio.to_thread(local_file, text)
        if size is None:
            error.update(f"{path}: no such file")
            error.display = True
            return
        bar = self.query_one("#compose-upload", ProgressBar)
        bar.update(total=max(size, 1), progress=0)
        bar.display = True
        self.uploading = True
        path_input = self.query_one("#compose-media-path", Input)
        path_input.disabled = True
        self._draw_status()
        try:
            media = await self.app.client.upload_media_file(
                path, progress=lambda sent: bar.update(progress=sent)
            )  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001
            error.update(f"{path.name}: {getattr(exc, 'message', exc)}")
            error.display = True
            self.app.report(exc, f"uploading {path.name}")  # type: ignore[attr-defined]
            return
        finally:  # success or not: the field is the user's again, and the status line says so at once
            self.uploading = False
            bar.display = False
            path_input.disabled = False
            path_input.focus()
            self._draw_status()
        size_text = f"{media.bytes / 1024:.0f} KB" if media.bytes >= 1024 else f"{media.bytes} B"
        dims = f" · {media.width}×{media.height}" if media.width and media.height else ""
        self.attach_media(Media(media.url, media.type, f"{media.type} · {path.name}{dims} · {size_text}"))
        path_input.value = ""
        self._user_changed()
        self._draw_media()
        self.refresh_checks()

    def attach_media(self, media: Media) -> None:
        """Add a media to the post, and remember how it was shown for when the post is edited in this app."""
        self.media.append(media)
        self.app.media_labels[media.url] = media.label  # type: ignore[attr-defined]

    def action_pick_generation(self) -> None:
        from socialpub_tui.screens.generations import GenerationPickerScreen

        def picked(g: Any) -> None:
            if g is None or not g.media_url:
                return
            if len(self.media) >= MAX_MEDIA:
                self.notify(f"A post has at most {MAX_MEDIA} media.", severity="warning")
                return
            if any(m.url == g.media_url for m in self.media):
                self.notify(f"{g.id} is attached already.", severity="warning")
                return
            prompt = " ".join(g.prompt.split())
            self.attach_media(Media(g.media_url, g.type, f"{g.type} · {g.id} · {prompt[:30]}"))
            self._user_changed()
            self._draw_media()
            self.refresh_checks()

        self.app.push_screen(GenerationPickerScreen(), picked)

    def action_remove_media(self) -> None:
        media_list = self.query_one("#compose-media", OptionList)
        index = media_list.highlighted
        if index is None or not (0 <= index < len(self.media)):
            return
        del self.media[index]
        self._user_changed()
        self._draw_media()
        self.refresh_checks()

    # ---- changes ------------------------------------------------------------------------------------------
    def _user_changed(self) -> None:
        self.server_problems.clear()

    def _form_state(self) -> tuple[Any, ...]:
        """What the user can change, but the targets (compared apart: they arrive later)."""
        values = tuple(i.value for i in self.query(Input) if i.id != "compose-media-path")
        checks = tuple(c.value for c in self.query(Checkbox) if not c.has_class("target-check"))
        selects = tuple(s.value for s in self.query(Select))
        return (
            self.query_one("#compose-text", TextArea).text,
            tuple(m.url for m in self.media),
            self.scheduling(),
            values,
            checks,
            selects,
        )

    def is_dirty(self) -> bool:
        return (
            self._form_state() != self._initial
            or {r.choice.key for r in self.selected_rows()} != self._initial_targets
        )

    def holds_unsent_draft(self) -> bool:
        """Leaving would drop something the user wrote and did not send (escape asks first; so does ctrl+q)."""
        return self.sent is None and self.is_dirty()

    def unsent_sentence(self) -> str:
        if self.editing and self.source is not None:
            return f"Your changes to {self.source.id} were not saved"
        return "The post you are writing was not sent"

    def on_unmount(self) -> None:
        self.app.forget_draft(self)  # type: ignore[attr-defined]

    @on(TextArea.Changed, "#compose-text")
    def _text_changed(self) -> None:
        self._user_changed()
        self.refresh_checks()

    @on(Checkbox.Changed)
    def _checked(self, event: Checkbox.Changed) -> None:
        self._user_changed()
        self.refresh_checks()

    @on(Select.Changed)
    def _selected(self) -> None:
        self.refresh_checks()

    @on(Input.Changed, "#compose-date, #compose-time, #compose-zone")
    def _when_typed(self) -> None:
        self.server_problems.clear()
        self.update_schedule_preview()
        self.refresh_checks()

    @on(Input.Changed, ".options Input")
    def _option_typed(self) -> None:
        self._user_changed()
        self.refresh_checks()

    @on(RadioSet.Changed, "#compose-when")
    def _when_changed(self) -> None:
        self._user_changed()
        self._show_at_fields()
        self.update_schedule_preview()
        self.refresh_checks()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "remove_media":
            return True if self.media else None
        if action == "send":
            return None if self.sending or self.sent is not None else True
        return True

    # ---- sending ------------------------------------------------------------------------------------------
    def body(self) -> tuple[dict[str, Any] | None, str | None]:
        """The request body (POST for a new post, PATCH for an edit), or (None, why it cannot be sent yet)."""
        selected = self.selected_rows()
        if not selected:
            return None, "pick at least one target"
        if self.uploading:
            return None, "an upload is under way: wait for it to finish"
        schedule, schedule_error = self.schedule()
        if schedule_error:
            return None, schedule_error
        problems = self.target_problems()
        bad = [r for r in selected if problems.get(r.choice.key)]
        if bad:
            names = ", ".join(f"{r.choice.platform} · {inert(r.choice.name)}" for r in bad)
            return None, f"{names} would refuse this post: see ✗ next to the target"
        content = self.query_one("#compose-text", TextArea).text
        if self.source is not None and content == self.shown_text:
            content = self.source.content  # unchanged: the text as it was, control characters included
        options = self.options_wire({r.choice.platform for r in selected})
        if self.editing:
            patch: dict[str, Any] = {"content": content, "mediaUrls": [m.url for m in self.media]}
            if schedule is None:
                return None, "a scheduled post keeps a time: give a date and a time"
            patch["scheduledAt"] = times.iso_utc(schedule)
            if options or (self.source is not None and self.source.options):
                patch["options"] = options
            return patch, None
        body: dict[str, Any] = {
            "targets": [r.choice.wire() for r in selected],
            "content": content,
            "idempotencyKey": self.idempotency_key,
        }
        if self.media:
            body["mediaUrls"] = [m.url for m in self.media]
        if schedule is not None:
            body["scheduledAt"] = times.iso_utc(schedule)
        if options:
            body["options"] = options
        return body, None

    def action_send(self) -> None:
        if self.sending or self.sent is not None:
            return  # a second ctrl+s while the first is answered: nothing (the idempotency key covers the rest)
        body, why = self.body()
        if body is None:
            self.refresh_checks()
            self.query_one("#compose-status", Static).update(Text(f"Not sent: {why}", style="bold red"))
            self.notify(f"Not sent: {why}", severity="warning")
            return
        self.sending = True
        self.refresh_bindings()
        self._draw_status()
        self.send(body)

    @work(exclusive=True, group="compose-send")
    async def send(self, body: dict[str, Any]) -> None:
        from socialpub_tui.client.errors import ApiError

        client = self.app.client  # type: ignore[attr-defined]
        try:
            if self.editing and self.source is not None:
                post = await client.edit_post(self.source.id, body)
            else:
                post = await client.create_post(body)
        except ApiError as exc:
            self.sending = False
            self.refresh_bindings()
            if not self._show_server_problems(exc):
                self.app.report(exc, "sending the post")  # type: ignore[attr-defined]
            self.refresh_checks()
            self.query_one("#compose-status", Static).update(
                Text(f"Not sent — {inert(exc.code)}: {inert(exc.message)}", style="bold red")
            )
            return
        except Exception as exc:  # noqa: BLE001
            self.sending = False
            self.refresh_bindings()
            self.app.report(exc, "sending the post")  # type: ignore[attr-defined]
            self._draw_status()
            return
        self.sent = post
        replayed = getattr(post, "_http_status", None) == 200 and not self.editing
        action = "edited" if self.editing else "duplicated" if self.duplicate else "created"
        if replayed:
            self.notify(
                f"{post.id} was already created by this screen: nothing new was sent.", title="Already sent"
            )
        else:
            when = (
                f"scheduled for {self.app.zone.format(post.scheduled_at)}"
                if post.scheduled_at
                else "publishing now"
            )  # type: ignore[attr-defined]
            verb = "Saved" if self.editing else "Created"
            self.notify(f"{verb} {post.id}, {when}.", title=verb)
            self.app.announce(post, action)  # type: ignore[attr-defined]
        self.dismiss(post)

    def _show_server_problems(self, exc: Any) -> bool:
        """Put the API's per-target details next to their targets. True when at least one found its target."""
        placed = False
        self.server_problems.clear()
        rows = self.selected_rows()
        for detail in exc.details or []:
            if not isinstance(detail, dict) or "platform" not in detail:
                continue
            code = str(detail.get("error", exc.code))
            problem = Problem(code, str(detail.get("message") or code))
            channel = detail.get("channelId") or detail.get("accountId")
            matching = [
                r
                for r in rows
                if (channel and r.choice.account_id == channel)
                or (not channel and r.choice.platform == detail["platform"])
            ]
            for row in matching:
                self.server_problems.setdefault(row.choice.key, []).append(problem)
                placed = True
        return placed

    # ---- leaving ------------------------------------------------------------------------------------------
    def action_back(self) -> None:
        if not self.holds_unsent_draft():
            self.dismiss(None)
            return
        from socialpub_tui.screens.confirm import ConfirmScreen

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        question = (
            "Discard the changes to this post?" if self.editing else "Discard this post? Nothing was sent."
        )
        self.app.push_screen(ConfirmScreen(question, yes="Discard", no="Keep editing"), answered)
