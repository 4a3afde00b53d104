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

The screen is one class in four rooms: this module (layout, schedule, changes, leaving), `compose_targets`
(the target rows, their checks and options, the status line), `compose_media` (upload, generations' files) and
`compose_send` (the body, the send, the API's per-target answers); each part is a Screen class ComposeScreen
inherits, so its handlers (`@on`, `@work`) register as they did.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
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

from socialpub_tui import times
from socialpub_tui.checks import Problem, media_kind
from socialpub_tui.look import inert
from socialpub_tui.screens.attachments import Media
from socialpub_tui.screens.compose_media import MediaPane, PathSuggester
from socialpub_tui.screens.compose_send import Sending
from socialpub_tui.screens.compose_targets import TargetChoice, TargetsPane
from socialpub_tui.screens.confirm import ConfirmScreen
from socialpub_tui.shell import shell
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.options_form import OptionsForm

if TYPE_CHECKING:
    from backend.schemas.posts import PostOut

SCHEDULE_TICK_S = 20.0  # the "in 3 h 20 min" of the schedule preview is redrawn this often


class ComposeScreen(TargetsPane, MediaPane, Sending, Screen["PostOut | None"]):
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
            for network in shell(self).networks:  # the server's: plugins too
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
        labels: dict[str, str] = shell(self).media_labels
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
        shell(self).register_draft(self)  # ctrl+q and the mode keys ask before dropping it
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
        zone = shell(self).zone
        now = shell(self).now()
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
        now = shell(self).now()
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
            text.append(f" · {times.relative(instant, shell(self).now())}", style="bold")
            date = self.query_one("#compose-date", Input).value.strip()
            hour = self.query_one("#compose-time", Input).value.strip()
            twice = times.ambiguity(f"{date} {hour}", zone, instant)
            if twice:
                text.append(f"\n{twice.replace('--at ', 'the time ')}", style="yellow")
            preview.update(text)
        self._draw_status()

    def _show_at_fields(self) -> None:
        self.query_one("#compose-at").display = self.scheduling()

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
        shell(self).forget_draft(self)

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

    # ---- leaving ------------------------------------------------------------------------------------------
    def action_back(self) -> None:
        if not self.holds_unsent_draft():
            self.dismiss(None)
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.dismiss(None)

        question = (
            "Discard the changes to this post?" if self.editing else "Discard this post? Nothing was sent."
        )
        self.app.push_screen(ConfirmScreen(question, yes="Discard", no="Keep editing"), answered)
