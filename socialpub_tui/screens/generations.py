"""f6: generations — the images and videos made from a prompt (GET /v1/generations), with the credits they cost.

    GenerationsScreen            the mode: one line a creation (status in its colour, type, cost, age, prompt);
                                 read again every few seconds while one of them is pending or processing
    GenerationDetailScreen(id)   one creation: its state, prompt, the API's error sentence for a failed one, the
                                 preview of its file (widgets/media_preview.py); progress while it is made
    CreateGenerationScreen       the modal form: type, prompt (3-1800 characters, counted live), aspect ratio,
                                 duration (video), start images (video: local files uploaded first); the cost,
                                 the balance and the balance after from `POST /v1/generations?dryRun=true`
                                 (debounced, exclusive), submit refused when the credits are short
    GenerationPickerScreen       a completed creation to attach to a post (compose's ctrl+g)

`u` opens compose with the creation's file attached; `delete` asks first, then shows the API's answer (credits
refunded, file deleted or kept by posts). Every call runs in a worker; results reach the screens as messages.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import (
    Button,
    DataTable,
    Header,
    Input,
    Label,
    OptionList,
    ProgressBar,
    Select,
    Static,
    TextArea,
)
from textual.widgets.option_list import Option

from backend.schemas.generations import (
    ASPECT_RATIOS,
    DURATIONS,
    MAX_SOURCES,
    PROMPT_MAX,
    PROMPT_MIN,
    GenerationDeleted,
    GenerationOut,
    GenerationQuote,
)
from backend.schemas.statuses import GenerationStatus
from backend.schemas.workspace import CreditsOut
from socialpub_tui.look import inert, status_colour
from socialpub_tui.screens.attachments import Media, local_file
from socialpub_tui.screens.confirm import ConfirmScreen
from socialpub_tui.shell import shell
from socialpub_tui.times import parse_instant, relative
from socialpub_tui.widgets.dropdown import Dropdown
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.media_preview import MediaPreview
from socialpub_tui.widgets.tables import RowTable

LIVE_STATES = (GenerationStatus.PENDING, GenerationStatus.PROCESSING)  # not GENERATION_FINAL yet
LIVE_TICK_S = 2.0  # a live creation is read again this often (embedded backend)
LIVE_TICK_REMOTE_S = (
    10.0  # against a server: the spec's polling interval (every read counts against the limit)
)
PAGE = 50
QUOTE_DEBOUNCE_S = 0.3


def first_line(text: str, width: int = 60) -> str:
    """A prompt's first line in at most `width` characters, shown inert."""
    line = inert((text.strip().splitlines() or [""])[0])
    return line if len(line) <= width else line[: width - 1] + "…"


def status_text(status: str) -> Text:
    return Text(status, style=f"bold {status_colour(status)}")


def kind_label(g: GenerationOut) -> str:
    return f"video {g.duration_sec} s" if g.type == "video" and g.duration_sec else g.type


def age(g: GenerationOut, now: Any) -> str:
    created = parse_instant(g.created_at)
    return relative(created, now) if created else "-"


def live_tick(app: Any) -> float:
    return LIVE_TICK_S if getattr(app.client, "embedded", False) else LIVE_TICK_REMOTE_S


def deleted_sentence(answer: GenerationDeleted) -> str:
    """What DELETE answered, as a sentence: refund, file deleted or kept (by which posts, until when)."""
    parts = [f"{answer.id} deleted"]
    if answer.credits_refunded:
        parts.append(f"{answer.credits_refunded} credits refunded")
    if answer.media_deleted:
        parts.append("its file was deleted")
    elif answer.media_kept_by:
        until = (
            f" until {answer.media_kept_until}"
            if answer.media_kept_until
            else " until they are sent (+30 days)"
        )
        parts.append(f"its file is kept{until}: used by {', '.join(answer.media_kept_by)}")
    return "; ".join(parts) + "."


def quote_text(quote: GenerationQuote) -> Text:
    what = f"A {quote.duration_sec}-second video" if quote.type == "video" else "An image"
    text = Text()
    if quote.enough:
        text.append(f"{what} costs ")
        text.append(f"{quote.credits_cost} credits", style="bold")
        text.append(f" · balance {quote.balance} → ")
        text.append(f"{quote.balance_after}", style="bold green")
    else:
        text.append("Not enough credits: ", style="bold red")
        text.append(
            f"{what.lower()} costs {quote.credits_cost}, the balance is {quote.balance} "
            f"({quote.credits_cost - quote.balance} missing)",
            style="red",
        )
    return text


# ---- shared actions ----------------------------------------------------------------------------------------
def use_in_new_post(app: Any, g: GenerationOut) -> None:
    """Compose a new post with the creation's file attached."""
    if g.status != GenerationStatus.COMPLETED or not g.media_url:
        app.notify(f"{g.id} is {g.status}: there is no file to post yet.", severity="warning")
        return
    app.compose_post([Media(g.media_url, g.type, f"{g.type} · {g.id} · {first_line(g.prompt, 30)}")])


@dataclass
class GenerationDeletedMsg(Message):
    """A creation was deleted from this app (the API's answer)."""

    answer: GenerationDeleted


def ask_delete(screen: Screen[Any], g: GenerationOut) -> None:
    """Confirm, then DELETE in a worker of `screen`; the answer comes back to it as GenerationDeletedMsg."""

    if g.status == GenerationStatus.PROCESSING:
        screen.notify(
            f"{g.id} is being made: it can be deleted once it is completed or failed.", severity="warning"
        )
        return
    refund = (
        " Production has not started: its credits will be refunded."
        if g.status == GenerationStatus.PENDING
        else ""
    )
    question = (
        f"Delete {g.type} {g.id} ({first_line(g.prompt, 40)})?{refund} Its file is deleted unless a post "
        "not yet sent uses it."
    )

    def answered(yes: bool | None) -> None:
        if yes:
            _delete(screen, g.id)

    screen.app.push_screen(ConfirmScreen(question, yes="Delete", no="Keep"), answered)


def _delete(screen: Screen[Any], generation_id: str) -> None:
    async def run() -> None:
        app = shell(screen)
        try:
            answer = await app.client.delete_generation(generation_id)
        except Exception as exc:  # noqa: BLE001 — shown with the API's code
            app.report(exc, f"deleting {generation_id}")
            return
        app.notify(deleted_sentence(answer), title="Deleted", timeout=8)
        screen.post_message(GenerationDeletedMsg(answer))

    screen.run_worker(run(), group="gen-delete", exclusive=True)


# ---- the list ----------------------------------------------------------------------------------------------
@dataclass
class GenerationsLoaded(Message):
    items: list[GenerationOut] | None
    credits: CreditsOut | None
    select: str | None = None


class GenerationsScreen(Screen[None]):
    """The workspace's creations, newest first, and its credits."""

    CSS_PATH = "generations.tcss"
    AUTO_FOCUS = "#gen-list"
    BINDINGS = [
        Binding("enter", "open", "Open", id="gen.open"),
        Binding("n,c", "create", "New generation", id="gen.create"),
        Binding("u", "use", "Use in a new post", id="gen.use"),
        Binding("delete", "delete", "Delete", id="gen.delete"),
        Binding("r", "reload", "Refresh", id="gen.refresh"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.items: list[GenerationOut] = []
        self.credits: CreditsOut | None = None
        self._timer: Timer | None = None
        self.loads = 0  # how many answers were shown (tests: the refresh stops once nothing is live)
        # a creation made from here, to select once a list holding it is drawn (the reload the screen's resume
        # starts must not put the cursor back on the one selected before)
        self.select_next: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="gen-credits")
        yield RowTable(id="gen-list", zebra_stripes=True)
        yield Static("", id="gen-status-line")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Generations"
        table = self.query_one(DataTable)
        for key, label in (
            ("status", "Status"),
            ("type", "Type"),
            ("cost", "Cost"),
            ("age", "Age"),
            ("prompt", "Prompt"),
        ):
            table.add_column(label, key=key)
        self.load()

    def on_screen_resume(self) -> None:
        if self.loads:
            self.load(self.current.id if self.current else None)

    @property
    def current(self) -> GenerationOut | None:
        table = self.query_one(DataTable)
        if not self.items or not (0 <= table.cursor_row < len(self.items)):
            return None
        return self.items[table.cursor_row]

    @work(exclusive=True, group="gen-load")
    async def load(self, select: str | None = None) -> None:
        try:
            page = await shell(self).client.list_generations(limit=PAGE)
        except Exception as exc:  # noqa: BLE001 — shown with its code; r tries again
            shell(self).report(exc, "Generations")
            self.post_message(GenerationsLoaded(None, None, select))
            return
        self.post_message(GenerationsLoaded(list(page.items), page.credits, select))

    def on_generations_loaded(self, message: GenerationsLoaded) -> None:
        self.loads += 1
        if message.items is None:
            self.query_one("#gen-status-line", Static).update(
                Text("could not be read: r to retry", style="red")
            )
            return
        keep = self.select_next or message.select or (self.current.id if self.current else None)
        self.items = message.items
        self.credits = message.credits
        self._draw(keep)
        if self.select_next in {g.id for g in self.items}:
            self.select_next = None
        self._plan_refresh()

    def _plan_refresh(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if any(g.status in LIVE_STATES for g in self.items):
            self._timer = self.set_timer(live_tick(self.app), self.load)

    @property
    def refreshing(self) -> bool:
        return self._timer is not None

    def _draw(self, keep: str | None) -> None:
        now = shell(self).now()
        table = self.query_one(DataTable)
        table.clear()
        ages = [age(g, now) for g in self.items]
        # the prompt takes what the other columns leave (each has a cell's padding of 1 on both sides)
        room = self.app.size.width - 12 - 13 - 6 - (max(map(len, ages), default=3) + 2) - 3
        for g, shown_age in zip(self.items, ages, strict=True):
            table.add_row(
                status_text(g.status),
                kind_label(g),
                f"{g.credits_cost}",
                shown_age,
                Text(first_line(g.prompt, max(12, room))),  # a Text: a str cell would be read as markup
                key=g.id,
            )
        ids = [g.id for g in self.items]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        head = Text(no_wrap=True, overflow="ellipsis")
        if self.credits is not None:
            c = self.credits
            head.append("Credits ", style="dim")
            head.append(f"{c.balance}", style="bold green" if c.balance > 0 else "bold red")
            head.append(
                f" · image {c.cost.get('IMAGE', '?')} · video "
                + " / ".join(f"{s} s {v}" for s, v in c.clip.items()),
                style="dim",
            )
        self.query_one("#gen-credits", Static).update(head)
        live = sum(g.status in LIVE_STATES for g in self.items)
        line = Text(no_wrap=True, overflow="ellipsis")
        if not self.items:
            line.append("no generations yet: n makes one from a prompt", style="dim")
        else:
            line.append(f"{len(self.items)} generation{'s' if len(self.items) != 1 else ''}", style="dim")
            if live:
                line.append(
                    f" · {live} in production, refreshed every {live_tick(self.app):g} s", style="cyan"
                )
            line.append(" · enter opens · u posts it · n makes one", style="dim")
        self.query_one("#gen-status-line", Static).update(line)
        self.refresh_bindings()

    def on_resize(self) -> None:
        if self.loads:
            self._draw(self.current.id if self.current else None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open", "delete"):
            return self.current is not None or None
        if action == "use":
            g = self.current
            return (g is not None and g.status == GenerationStatus.COMPLETED) or None
        return True

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.refresh_bindings()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        if self.current is not None:
            self.app.push_screen(GenerationDetailScreen(self.current.id, self.current))

    def action_reload(self) -> None:
        self.load()

    def action_use(self) -> None:
        if self.current is not None:
            use_in_new_post(self.app, self.current)

    def action_delete(self) -> None:
        if self.current is not None:
            ask_delete(self, self.current)

    def on_generation_deleted_msg(self, message: GenerationDeletedMsg) -> None:
        self.load()

    def action_create(self) -> None:
        def created(g: GenerationOut | None) -> None:
            if g is not None:
                self.select_next = g.id
                self.load(g.id)

        self.app.push_screen(CreateGenerationScreen(), created)


# ---- one creation ------------------------------------------------------------------------------------------
class GenerationDetailScreen(Screen[None]):
    """One creation: state, cost, times, prompt, the error for a failed one, the preview of its file."""

    CSS_PATH = "generations.tcss"
    BINDINGS = [
        Binding("escape", "back", "Back", id="gen-detail.back"),
        Binding("u", "use", "Use in a new post", id="gen-detail.use"),
        Binding("delete", "delete", "Delete", id="gen-detail.delete"),
        Binding("r", "reload", "Refresh", id="gen-detail.refresh"),
    ]

    @dataclass
    class Read(Message):
        generation: GenerationOut | None

    def __init__(self, generation_id: str, known: GenerationOut | None = None) -> None:
        super().__init__()
        self.generation_id = generation_id
        self.generation: GenerationOut | None = known
        self._timer: Timer | None = None
        self._media_shown: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="gd-body"):
            yield Static(f"{self.generation_id} · loading…", id="gd-head")
            yield ProgressBar(id="gd-progress", total=None, show_eta=False, show_percentage=False)
            yield Static("", id="gd-error")
            yield Static("", id="gd-prompt", markup=False)
            yield Horizontal(id="gd-media")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Generation"
        self.sub_title = self.generation_id
        self.query_one("#gd-prompt").border_title = "Prompt"
        self.query_one("#gd-media").border_title = "Result"
        if self.generation is not None:
            self.show(self.generation)
        self.load()

    @work(exclusive=True, group="gen-detail-load")
    async def load(self) -> None:
        try:
            g = await shell(self).client.get_generation(self.generation_id)
        except Exception as exc:  # noqa: BLE001
            shell(self).report(exc, f"reading {self.generation_id}")
            return
        self.post_message(self.Read(g))

    def on_generation_detail_screen_read(self, message: Read) -> None:
        if message.generation is not None:
            self.show(message.generation)

    def show(self, g: GenerationOut) -> None:
        self.generation = g
        zone = shell(self).zone
        head = Text()
        head.append(g.id, style="bold")
        head.append("  ")
        head.append(f" {g.status} ", style=f"bold reverse {status_colour(g.status)}")
        head.append(f"  {kind_label(g)} · {g.aspect_ratio} · {g.credits_cost} credits", style="bold")
        head.append(f"\ncreated {zone.format(g.created_at)} ({age(g, shell(self).now())})", style="dim")
        if g.completed_at:
            head.append(f" · finished {zone.format(g.completed_at)}", style="dim")
        if g.source_urls:
            head.append(
                f"\nstart image{'s' if len(g.source_urls) > 1 else ''}: "
                + ", ".join(inert(u.rsplit("/", 1)[-1]) for u in g.source_urls),
                style="dim",
            )
        self.query_one("#gd-head", Static).update(head)
        live = g.status in LIVE_STATES
        self.query_one("#gd-progress").display = live
        error = self.query_one("#gd-error", Static)
        error.display = g.status == GenerationStatus.FAILED
        if g.status == GenerationStatus.FAILED:
            error.update(Text.assemble(("✗ ", "bold red"), (inert(g.error or "The generation failed."), "")))
        self.query_one("#gd-prompt", Static).update(inert(g.prompt, newlines=True, tabs=True))
        media = self.query_one("#gd-media", Horizontal)
        media.display = bool(g.media_url)
        if g.media_url and self._media_shown != g.media_url:
            self._media_shown = g.media_url
            media.remove_children()
            media.mount(MediaPreview(g.media_url, 1))
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if live:
            self._timer = self.set_timer(live_tick(self.app), self.load)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        g = self.generation
        if action == "use":
            return (g is not None and g.status == GenerationStatus.COMPLETED) or None
        if action == "delete":
            return (g is not None and g.status != GenerationStatus.PROCESSING) or None
        return True

    def action_back(self) -> None:
        self.dismiss()

    def action_reload(self) -> None:
        self.load()

    def action_use(self) -> None:
        if self.generation is not None:
            use_in_new_post(self.app, self.generation)

    def action_delete(self) -> None:
        if self.generation is not None:
            ask_delete(self, self.generation)

    def on_generation_deleted_msg(self, message: GenerationDeletedMsg) -> None:
        if self.is_current:
            self.dismiss()


# ---- create --------------------------------------------------------------------------------------------
@dataclass
class QuoteShown(Message):
    key: tuple[Any, ...]
    quote: GenerationQuote | None
    problem: Text | None = None


@dataclass
class CreateFailed(Message):
    problem: str


class CreateGenerationScreen(ModalScreen["GenerationOut | None"]):
    """The form; dismissed with the creation the API accepted (None when the user backs out)."""

    CSS_PATH = "generations.tcss"
    BINDINGS = [
        Binding("ctrl+s", "submit", "Create", id="gen-create.submit", priority=True),
        Binding("escape", "cancel", "Cancel", id="gen-create.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.quote: GenerationQuote | None = None
        self.quote_problem: Text | None = None
        self._debounce: Timer | None = None
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="gc-box"):
            yield Static("New generation", id="gc-title")
            with Horizontal(classes="gc-row"):
                yield Label("Type", classes="gc-label")
                yield Dropdown(
                    [("image", "image"), ("video", "video")],
                    value="image",
                    allow_blank=False,
                    id="gc-type",
                    compact=True,
                )
                yield Label("Aspect", classes="gc-label")
                yield Dropdown(
                    [(r, r) for r in ASPECT_RATIOS],
                    value=ASPECT_RATIOS[0],
                    allow_blank=False,
                    id="gc-aspect",
                    compact=True,
                )
                yield Label("Duration", classes="gc-label gc-video")
                yield Dropdown(
                    [(f"{d} s", d) for d in DURATIONS],
                    value=DURATIONS[0],
                    allow_blank=False,
                    id="gc-duration",
                    compact=True,
                    classes="gc-video",
                )
            yield Label("Prompt", classes="gc-section")
            yield TextArea("", id="gc-prompt", soft_wrap=True, show_line_numbers=False)
            yield Static("", id="gc-count")
            with Horizontal(classes="gc-row gc-video", id="gc-sources-row"):
                yield Label("Start images", classes="gc-label")
                yield Input(
                    placeholder=f"up to {MAX_SOURCES} image files, comma separated (optional)",
                    id="gc-sources",
                    compact=True,
                )
            with Horizontal(classes="gc-row gc-image", id="gc-background-row"):
                yield Label("Background", classes="gc-label")
                yield Input(
                    placeholder="your photo behind the design: an image file (optional)",
                    id="gc-background",
                    compact=True,
                )
            yield Static("", id="gc-quote")
            yield Static("", id="gc-problem")
            with Horizontal(id="gc-buttons"):
                yield Button("Create (ctrl+s)", id="gc-submit", variant="primary")
                yield Button("Cancel (esc)", id="gc-cancel")

    def on_mount(self) -> None:
        self._show_video_fields()
        self._count()
        self.query_one("#gc-problem").display = False
        self.query_one("#gc-prompt", TextArea).focus()
        self.request_quote(now=True)

    # ---- what the form says -----------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return str(self.query_one("#gc-type", Select).value)

    @property
    def prompt(self) -> str:
        return self.query_one("#gc-prompt", TextArea).text

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": self.kind,
            "prompt": self.prompt.strip(),
            "aspectRatio": str(self.query_one("#gc-aspect", Select).value),
        }
        if self.kind == "video":
            body["durationSec"] = int(self.query_one("#gc-duration", Select).value)  # type: ignore[arg-type]  # the select's value is one of its int options once a duration is shown
        return body

    def source_paths(self) -> list[str]:
        if self.kind != "video":
            return []
        return [p.strip() for p in self.query_one("#gc-sources", Input).value.split(",") if p.strip()]

    def background_path(self) -> str | None:
        """The background photo's file (an image only; an announcement card), None when none is given."""
        if self.kind != "image":
            return None
        return self.query_one("#gc-background", Input).value.strip() or None

    def _show_video_fields(self) -> None:
        for widget in self.query(".gc-video"):
            widget.display = self.kind == "video"
        for widget in self.query(".gc-image"):
            widget.display = self.kind == "image"

    def _count(self) -> None:
        n = len(self.prompt.strip())
        ok = PROMPT_MIN <= n <= PROMPT_MAX
        text = Text(f"{n} / {PROMPT_MAX}", style="dim" if ok else "red")
        if n < PROMPT_MIN:
            text.append(f" · at least {PROMPT_MIN} characters", style="red")
        elif n > PROMPT_MAX:
            text.append(f" · {n - PROMPT_MAX} too many", style="red")
        self.query_one("#gc-count", Static).update(text)

    @on(Select.Changed)
    def _select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "gc-type":
            self._show_video_fields()
        self.request_quote()

    @on(TextArea.Changed, "#gc-prompt")
    def _prompt_changed(self) -> None:
        self._count()

    # ---- the cost preview ---------------------------------------------------------------------------------
    def quote_key(self) -> tuple[Any, ...]:
        body = self.body()
        return (body["type"], body.get("durationSec"))

    def request_quote(self, now: bool = False) -> None:
        """Ask for the cost once the choices stop changing (debounced); a newer request cancels an older one."""
        if self._debounce is not None:
            self._debounce.stop()
        if now:
            self.fetch_quote(self.quote_key())
        else:
            self._debounce = self.set_timer(QUOTE_DEBOUNCE_S, lambda: self.fetch_quote(self.quote_key()))

    @work(exclusive=True, group="gen-quote")
    async def fetch_quote(self, key: tuple[Any, ...]) -> None:
        body = {"type": key[0], "prompt": "cost preview"}  # the cost does not depend on the prompt
        if key[1] is not None:
            body["durationSec"] = key[1]
        try:
            quote = await shell(self).client.create_generation(body, dry_run=True)
        except Exception as exc:  # noqa: BLE001 — e.g. 402 subscription_required: shown in place of the cost
            code = getattr(exc, "code", type(exc).__name__)
            self.post_message(
                QuoteShown(key, None, Text(f"{code}: {inert(getattr(exc, 'message', exc))}", style="red"))
            )
            return
        self.post_message(QuoteShown(key, quote))

    def on_quote_shown(self, message: QuoteShown) -> None:
        if message.key != self.quote_key():
            return  # the choices changed since: a newer quote is on its way
        self.quote, self.quote_problem = message.quote, message.problem
        line = self.query_one("#gc-quote", Static)
        line.update(quote_text(message.quote) if message.quote is not None else message.problem or "")
        self.refresh_bindings()

    # ---- submit -----------------------------------------------------------------------------------------
    def problem(self) -> str | None:
        """Why the form cannot be sent as it stands, else None."""
        n = len(self.prompt.strip())
        if n < PROMPT_MIN:
            return f"The prompt needs at least {PROMPT_MIN} characters."
        if n > PROMPT_MAX:
            return f"The prompt has {n} characters: at most {PROMPT_MAX}."
        if (
            self.quote is not None
            and self.quote_key() == (self.quote.type, self.quote.duration_sec)
            and not self.quote.enough
        ):
            return (
                f"Not enough credits: this costs {self.quote.credits_cost}, the balance is "
                f"{self.quote.balance}."
            )
        if len(self.source_paths()) > MAX_SOURCES:
            return f"At most {MAX_SOURCES} start images."
        return None

    def _show_problem(self, text: str | None) -> None:
        widget = self.query_one("#gc-problem", Static)
        widget.display = bool(text)
        widget.update(Text(inert(text or ""), style="bold red"))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "gc-submit":
            self.action_submit()
        else:
            self.action_cancel()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        if self.busy:
            return
        problem = self.problem()
        self._show_problem(problem)
        if problem:
            return
        self.busy = True
        self.query_one("#gc-submit", Button).disabled = True
        self.create(self.body(), self.source_paths(), self.background_path())

    @work(exclusive=True, group="gen-create")
    async def create(self, body: dict[str, Any], sources: list[str], background: str | None = None) -> None:
        client = shell(self).client
        try:
            urls = []
            for text in [*sources, *([background] if background else [])]:
                path, size = await asyncio.to_thread(local_file, text)
                if size is None:
                    self.post_message(CreateFailed(f"{path}: no such file"))
                    return
                urls.append((await client.upload_media_file(path)).url)
            if background:
                body = body | {"backgroundUrl": urls.pop()}
            if urls:
                body = body | {"sourceUrls": urls}
            generation = await client.create_generation(body)
        except Exception as exc:  # noqa: BLE001 — 400 / 402 with the API's code and message
            shell(self).report(exc, "Create generation")
            self.post_message(CreateFailed(getattr(exc, "message", str(exc))))
            return
        self.app.notify(
            f"{generation.id}: {generation.status}, {generation.credits_cost} credits charged.",
            title="Generation created",
        )
        self.dismiss(generation)

    def on_create_failed(self, message: CreateFailed) -> None:
        self.busy = False
        self.query_one("#gc-submit", Button).disabled = False
        self._show_problem(message.problem)
        self.request_quote(now=True)  # the balance may have moved


# ---- a completed creation for compose --------------------------------------------------------------------
@dataclass
class PickerLoaded(Message):
    items: list[GenerationOut]


class GenerationPickerScreen(ModalScreen["GenerationOut | None"]):
    """The completed creations, newest first: enter picks one (its file is attached to the post)."""

    CSS_PATH = "generations.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="gen-pick.cancel")]

    def __init__(self) -> None:
        super().__init__()
        self.items: list[GenerationOut] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="gp-box"):
            yield Static("Attach a generation (enter picks, esc cancels)", id="gp-title")
            yield OptionList(id="gp-list")

    def on_mount(self) -> None:
        self.query_one(OptionList).add_option(Option("loading…", disabled=True))
        self.load()

    @work(exclusive=True, group="gen-pick")
    async def load(self) -> None:
        try:
            page = await shell(self).client.list_generations(status=["completed"], limit=PAGE)
        except Exception as exc:  # noqa: BLE001
            shell(self).report(exc, "Generations")
            self.post_message(PickerLoaded([]))
            return
        self.post_message(PickerLoaded([g for g in page.items if g.media_url]))

    def on_picker_loaded(self, message: PickerLoaded) -> None:
        self.items = message.items
        options = self.query_one(OptionList)
        options.clear_options()
        now = shell(self).now()
        if not self.items:
            options.add_option(Option("no completed generation yet (f6 makes one)", disabled=True))
            return
        options.add_options(
            [
                Option(f"{kind_label(g):<11} {age(g, now):>12}  {first_line(g.prompt, 50)}", id=g.id)
                for g in self.items
            ]
        )
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = next((g for g in self.items if g.id == event.option.id), None)
        self.dismiss(chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
