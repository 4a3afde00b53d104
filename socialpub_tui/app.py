"""The socialpub TUI: a social manager's cockpit. `socialpub tui` (and `make run`) open it.

The app is built with its client injected (`SocialpubApp(client, clock=…, zone=…)`): it speaks /v1 through that
`AsyncClient` only — the embedded backend in this process, or a remote server of a profile. Tests pass a client
on a temporary data dir and a fixed clock.

Layout: five top-level modes (posts, calendar, accounts, activity, generations), each a screen in `screens/`;
detail, compose and help are pushed on top. A mode's key (f2…f6) brings the user to that mode's own screen (the
list), closing what was pushed on it — but never an unsent draft: a compose screen holding one stays, shown.
ctrl+q quits at once, unless a compose screen of any mode holds an unsent draft, or (embedded) this process's worker
is making a generation that quitting would stop: then it asks first. Every call to the backend runs in a Textual
worker (`@work`, exclusive where a newer request makes an older one stale); results reach widgets as typed messages
(`messages.py`). Every action has a binding with a description (shown in the footer) and an entry in the command
palette (`commands.py`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.theme import Theme

from socialpub_tui import startup_done
from socialpub_tui.client.errors import ApiError, ConfigError, NetworkError
from socialpub_tui.client.networks import Networks
from socialpub_tui.commands import SocialpubCommands
from socialpub_tui.look import inert
from socialpub_tui.messages import PostChanged
from socialpub_tui.screens.confirm import ConfirmScreen
from socialpub_tui.screens.help import HelpScreen
from socialpub_tui.shell import HoldsDraft, Shell
from socialpub_tui.times import DisplayZone

if TYPE_CHECKING:
    from backend.schemas.posts import PostOut
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.screens.attachments import Media
    from socialpub_tui.settings import TuiSettings


log = logging.getLogger("socialpub.tui")


def _keys_terminal() -> bool:
    """Whether the app's keys come from an open terminal (Textual's driver reads sys.__stdin__): after a hang-up
    the descriptor is no longer one (isatty is False, reads see EOF)."""
    try:
        return os.isatty(sys.__stdin__.fileno())  # type: ignore[union-attr]  # None without a stdin: caught below
    except (AttributeError, ValueError, OSError):
        return False


def utc_now() -> datetime:
    return datetime.now(UTC)


def _lazy(module: str, name: str) -> Callable[[], Screen[Any]]:
    """A mode's screen factory that imports the screen's module when the mode is first shown."""

    def make() -> Screen[Any]:
        import importlib

        return getattr(importlib.import_module(module), name)()  # type: ignore[no-any-return]  # a mode's screen class, found by name in its module

    return make


class SocialpubApp(App[None]):
    """The TUI. `client` is owned by the app (closed when it exits) unless `owns_client=False`. `settings`: what
    the TUI keeps across restarts (the theme; `socialpub_tui.settings`), None to keep nothing."""

    CSS_PATH = "app.tcss"
    TITLE = "socialpub"
    COMMANDS = App.COMMANDS | {SocialpubCommands}
    MODES = {
        "posts": _lazy("socialpub_tui.screens.posts", "PostsScreen"),
        "calendar": _lazy("socialpub_tui.screens.calendar", "CalendarScreen"),
        "accounts": _lazy("socialpub_tui.screens.accounts", "AccountsScreen"),
        "activity": _lazy("socialpub_tui.screens.activity", "ActivityScreen"),
        "generations": _lazy("socialpub_tui.screens.generations", "GenerationsScreen"),
    }
    DEFAULT_MODE = "posts"
    # What the client leaves out of the launch (the embedded backend's worker: ~150-200 ms of imports and first
    # claims in a thread) starts this long after the first screen's data is drawn, so that it competes neither
    # with drawing it nor with the first keys pressed; at the latest READY_AT_THE_LATEST_S after mount.
    BACKGROUND_AFTER_S = 1.0
    READY_AT_THE_LATEST_S = 3.0
    QUIT_READ_S = 1.0  # ctrl+q's look for generations in production (embedded) gives up after this long
    # How often the app checks that its terminal is still there. A closed terminal (a tmux session killed, an
    # ssh connection dropped) sends SIGHUP to its session's leader only: under `make run` that is make, which
    # waits for its child, so the TUI would get no signal and Textual's input thread would spin on the
    # hung-up input. Exit code 129 is the shell's for a hang-up (128 + SIGHUP).
    TERMINAL_CHECK_S = 1.0
    HANGUP_RETURN_CODE = 129
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        Binding("f1,question_mark", "help", "Help", id="help"),
        # the modes' keys are shown in the header (format_title), every screen's, so that the footer has room for
        # the screen's own keys (at 120 columns it was cut before f6); they stay in the palette and in f1's list
        Binding("f2", "show_mode('posts')", "Posts", id="mode.posts", show=False),
        Binding("f3", "show_mode('calendar')", "Calendar", id="mode.calendar", show=False),
        Binding("f4", "show_mode('accounts')", "Accounts", id="mode.accounts", show=False),
        Binding("f5", "show_mode('activity')", "Activity", id="mode.activity", show=False),
        Binding("f6", "show_mode('generations')", "Generations", id="mode.generations", show=False),
        Binding("n", "compose", "New post", id="compose"),
    ]

    def __init__(
        self,
        client: AsyncClient,
        *,
        clock: Callable[[], datetime] = utc_now,
        zone: DisplayZone | None = None,
        backend_label: str = "embedded",
        owns_client: bool = True,
        settings: TuiSettings | None = None,
    ) -> None:
        super().__init__()
        self.client = client
        self.clock = clock
        self.zone = zone or DisplayZone(None)
        self.backend_label = backend_label
        self.settings = settings
        self._owns_client = owns_client
        self._first_screen_drawn = False
        # every open screen that may hold a draft, with the mode whose stack holds it (`register_draft`)
        self.drafts: dict[HoldsDraft, str] = {}
        self._quit_question: Screen[Any] | None = None
        self.sub_title = backend_label
        # A post changed through this app (created, edited, cancelled, retried, moved): every screen showing
        # posts subscribes (`self.app.post_changed.subscribe(self, callback)`) and refreshes what it shows.
        self.post_changed: Signal[PostChanged] = Signal(self, "post_changed")
        # how each media attached in this app was shown (its file's name, its generation), by URL: the edit screen
        # shows a post's media so too, not by the key the media host gave them
        self.media_labels: dict[str, str] = {}
        # the server's networks (GET /v1/networks): badges, colours, limits, options; read as the app mounts
        self.networks = Networks()

    async def on_load(self) -> None:
        """The server's networks, read before the first screen is composed (its badges, filters, forms)."""
        try:
            self.networks = await self.client.networks()
        except Exception as exc:  # noqa: BLE001  a server that cannot answer: every network shows by its name
            log.warning("the server's networks could not be read (%s): names only", exc)

    async def on_mount(self) -> None:
        if self.settings is not None:
            if (
                self.settings.theme in self.available_themes
            ):  # a theme this Textual does not know: the default
                self.theme = self.settings.theme
            self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.set_timer(self.READY_AT_THE_LATEST_S, self.client.ready)
        if not self.is_headless and _keys_terminal():
            self.set_interval(self.TERMINAL_CHECK_S, self._leave_if_the_terminal_is_gone)
        await self.switch_mode(self.DEFAULT_MODE)

    def _leave_if_the_terminal_is_gone(self) -> None:
        """The terminal hung up (nobody can see or answer a question): exit at once, drafts or not."""
        if not _keys_terminal():
            log.warning("the terminal is gone (hung up): the TUI exits")
            self.exit(return_code=self.HANGUP_RETURN_CODE)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's own palette commands, but for those that are socialpub's already (Quit: ctrl+q, which asks
        before dropping a draft; Keys: f1) or that trap the user: Maximize turned `escape` into "minimize", so a
        maximized compose seemed not to leave on escape (issue 33)."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Quit", "Keys", "Maximize", "Minimize"):
                yield command

    def format_title(self, title: str, sub_title: str) -> Content:
        """Every screen's header: the modes with their keys (`f2 Posts  f3 Calendar …`), the one shown
        highlighted, then the screen's own title when it is not the mode's, and where the backend is (dim)."""
        current = self.current_mode
        parts: list[tuple[str, str] | str] = []
        for binding in self.BINDINGS:  # 59 cells for the five: they fit the header of an 80-column terminal
            if not isinstance(binding, Binding) or not (binding.id or "").startswith("mode."):
                continue
            mode = (binding.id or "").removeprefix("mode.")
            if parts:
                parts.append((" ", ""))
            parts += [
                (f"{binding.key} ", "bold $accent"),
                (binding.description, "reverse bold" if mode == current else ""),
            ]
        mode_names = {
            b.description
            for b in self.BINDINGS
            if isinstance(b, Binding) and (b.id or "").startswith("mode.")
        }
        if title and title != self.TITLE and title not in mode_names:
            parts += [("  ", ""), (title, "bold")]
        if sub_title:
            parts += [(" — ", "dim"), (sub_title, "dim")]
        return Content.assemble(*parts)

    def _theme_changed(self, theme: Theme) -> None:
        if self.settings is not None and theme.name != self.settings.theme:
            self.settings.theme = theme.name
            self.save_settings()

    @work(thread=True, exclusive=True, group="settings")
    def save_settings(self) -> None:
        """Keep the settings for the next start (a file write: in a thread, so the app keeps answering)."""
        if self.settings is None:
            return
        try:
            self.settings.save()
        except OSError as exc:
            self.call_from_thread(
                self.notify, f"The theme could not be kept for the next start: {exc}", severity="warning"
            )

    def first_screen_drawn(self) -> None:
        """The first screen shows its data (or could not read it: the posts screen says so): the launch is over
        (the garbage collector's default thresholds again); BACKGROUND_AFTER_S later, the client starts what it
        left out of the launch — the embedded backend's worker (once)."""
        if not self._first_screen_drawn:
            self._first_screen_drawn = True
            startup_done()  # the garbage collector's default thresholds (socialpub_tui/__init__.py)
            self.set_timer(self.BACKGROUND_AFTER_S, self.client.ready)

    async def on_unmount(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    # ---- what every screen shares -------------------------------------------------------------------------
    def now(self) -> datetime:
        """The app's clock (aware, UTC). Tests fix it."""
        return self.clock()

    def announce(self, post: PostOut, action: str) -> None:
        """Tell every subscribed screen that `post` changed (`action`: created, edited, cancelled, …)."""
        self.post_changed.publish(PostChanged(post, action))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification (a screen's or a widget's `notify` comes here) is plain text, shown inert: it often
        carries a name, a URL or an API message that echoes what was sent, which must neither drive the terminal
        nor be read as markup. Ours use no markup (`markup` is accepted, and ignored)."""
        super().notify(inert(message), title=inert(title), severity=severity, timeout=timeout, markup=False)

    def report(self, exc: BaseException, action: str = "") -> None:
        """Show a failed call as a notification carrying the API's code and message."""

        prefix = f"{action}: " if action else ""
        if isinstance(exc, ApiError):
            text = f"{prefix}{exc.message}" + (f" ({detail})" if (detail := _details_text(exc)) else "")
            self.notify(text, title=exc.code, severity="error", timeout=8)
        elif isinstance(exc, NetworkError | ConfigError):
            self.notify(
                f"{prefix}{exc}", title=getattr(exc, "code", "network_error"), severity="error", timeout=8
            )
        else:
            self.notify(f"{prefix}{exc}", title=type(exc).__name__, severity="error", timeout=8)

    def register_draft(self, screen: HoldsDraft) -> None:
        """`screen` (mounted in the current mode) may hold a draft until it is unmounted (`forget_draft`)."""
        self.drafts[screen] = self.current_mode

    def forget_draft(self, screen: HoldsDraft) -> None:
        self.drafts.pop(screen, None)

    def unsent_drafts(self) -> list[tuple[HoldsDraft, str]]:
        """The screens of every mode holding an unsent draft, with their mode."""
        return [(screen, mode) for screen, mode in self.drafts.items() if screen.holds_unsent_draft()]

    # ---- actions ------------------------------------------------------------------------------------------
    async def action_quit(self) -> None:
        """ctrl+q: quit at once — unless a draft was not sent, or a generation this process is making would stop:
        then ask (y or a second ctrl+q quits; n or escape goes back: to the draft, showing its mode)."""
        if self._quit_question is not None and self.screen is self._quit_question:
            self.exit()
            return
        drafts = self.unsent_drafts()

        if drafts:
            screen, mode = drafts[0]
            where = "" if mode == self.current_mode else f" (in {mode.capitalize()}: {self._mode_key(mode)})"
            more = (
                f" — and {len(drafts) - 1} more draft{'s' if len(drafts) > 2 else ''}"
                if len(drafts) > 1
                else ""
            )
            question = (
                f"Quit socialpub? {screen.unsent_sentence()}{where}{more}: quitting drops it. "
                "(ctrl+q again quits.)"
            )
            no = "Back to the draft"
        else:
            producing = await self._generations_in_production()
            if not producing:
                self.exit()
                return
            mode = self.current_mode
            count = f"{len(producing)} generations are" if len(producing) > 1 else f"{producing[0]} is"
            question = (
                f"Quit socialpub? {count} being made by this process's worker: quitting stops it, and "
                "its credits come back when socialpub next starts on this data dir. (ctrl+q again quits.)"
            )
            no = "Stay"

        def answered(quit_now: bool | None) -> None:
            self._quit_question = None
            if quit_now:
                self.exit()
            elif mode != self.current_mode:
                self.call_later(self.action_show_mode, mode)  # back to the draft: its mode shows it

        self._quit_question = ConfirmScreen(question, yes="Quit", no=no)
        await self.push_screen(self._quit_question, answered)

    async def _generations_in_production(self) -> list[str]:
        """The ids of the generations the embedded backend's worker is producing (quitting stops them: the next
        worker on the data dir fails them and refunds their credits). Against a server, none: its worker goes on.
        A read that fails or takes over QUIT_READ_S does not hold up quitting."""
        if not self.client.embedded:
            return []
        try:
            listing = await asyncio.wait_for(
                self.client.list_generations(status=["processing"], limit=10), self.QUIT_READ_S
            )
        except Exception:  # noqa: BLE001  (quitting must not depend on the backend answering)
            return []
        return [g.id for g in listing.items]

    async def action_show_mode(self, mode: str) -> None:
        """A mode's key: that mode, at its own screen (the posts list, the calendar, …): what was pushed on it
        (a post's detail, a generation's) is closed — down to a screen holding an unsent draft, which is shown
        instead and never dropped this way."""
        if mode != self.current_mode:
            await self.switch_mode(mode)
        while len(self.screen_stack) > 1 and not self._holds_unsent_draft(self.screen):
            await self.pop_screen()
        if self._holds_unsent_draft(self.screen):
            self.notify("This post was not sent: ctrl+s sends it, escape leaves it.", title="Draft kept")

    def _holds_unsent_draft(self, screen: Screen[Any]) -> bool:
        return any(screen is draft for draft, _ in self.unsent_drafts())

    def _mode_key(self, mode: str) -> str:
        return next(
            (b.key for b in self.BINDINGS if isinstance(b, Binding) and b.action == f"show_mode('{mode}')"),
            mode,
        )

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_compose(self) -> None:
        # deferred: socialpub_tui.screens.compose costs ~30 ms of the TUI's launch, paid when the screen is first opened
        from socialpub_tui.screens.compose import ComposeScreen

        if not isinstance(self.screen, ComposeScreen):
            self.push_screen(ComposeScreen())

    def compose_post(self, media: list[Media]) -> None:
        """A new post with these media attached (a screen offering its file to a post calls this: the screens
        never import the compose screen, which imports theirs)."""
        # deferred: socialpub_tui.screens.compose costs ~36 ms of the TUI's launch, paid when the screen is first opened
        from socialpub_tui.screens.compose import ComposeScreen

        self.push_screen(ComposeScreen(media=media))


def _details_text(exc: Any) -> str:
    """An API error's details for a notification: each names what it is about (a request field, or the network
    of a per-target problem), and a detail that repeats the message (one per target, say) is not said again."""
    parts: list[str] = []
    for d in exc.details:
        if not isinstance(d, dict):
            continue
        where = d.get("platform") or d.get("field") or ""
        message = str(d.get("message") or d.get("error") or "")
        if not where and (not message or message in exc.message):
            continue
        line = (
            f"{where}: {message}" if where and message and message not in exc.message else (where or message)
        )
        if line and line not in parts:
            parts.append(line)
    return "; ".join(parts)


def _is_a_shell(app: SocialpubApp) -> Shell:
    """The type check that SocialpubApp offers every screen what the screens ask of it (socialpub_tui/shell.py)."""
    return app
