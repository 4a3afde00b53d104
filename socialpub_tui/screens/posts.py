"""Posts — the home screen: every post of the workspace, what goes out next on top (scheduled, soonest first),
then what went out, most recent first (`GET /v1/posts?order=upcoming`).

One line a post: when (scheduledAt, else createdAt, in the user's zone), its status in its colour, one badge
per target coloured by that target's status, the first line of the text. Filters: status, network, account,
a date range on the due time, and a search in the text (debounced; a newer query makes an older one's pages
stale: they are dropped). The list reads its rows a page at a time and keeps only a few pages
(`widgets/post_list.py`), so it opens as fast on 100,000 posts as on ten.

While a post on screen is being sent, or is due within a few minutes, the rows on screen are read again every
few seconds; the cursor stays on its post. Otherwise they are read again every IDLE_REFRESH_S (a post made
or changed by another program — the CLI, a recipe, another TUI — shows without `r`). A post changed anywhere in
the app (`app.post_changed`) refreshes them too. `enter` opens the post (PostDetailScreen).
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Header, Input, Select, Static

from backend.schemas.statuses import PostStatus
from socialpub_tui.look import inert
from socialpub_tui.messages import PostChanged
from socialpub_tui.shell import shell
from socialpub_tui.times import TimeError, resolve, zone
from socialpub_tui.widgets.dropdown import Dropdown
from socialpub_tui.widgets.footer import Footer
from socialpub_tui.widgets.post_list import PostList

SEARCH_DEBOUNCE_S = 0.25  # typing pauses this long before the list is asked again
LIVE_TICK_S = 2.0  # how often the rows on screen are read again while one of them is live (embedded backend)
# Against a server, every read counts against the API key's rate limit (RATE_LIMIT_PER_MINUTE, 30 by default,
# shared with everything else the app does): a read every 6 s while live is a third of that.
LIVE_TICK_REMOTE_S = 6.0
# While nothing on screen is live, the rows on screen are still read again this often: what another program did
# (the CLI, a recipe, another TUI) shows without `r`. Against a server: 2 reads a minute of the key's 30.
IDLE_REFRESH_S = 10.0
IDLE_REFRESH_REMOTE_S = 30.0
LIVE_HORIZON = timedelta(minutes=5)  # a scheduled post due within this is live
FOOTER_WAIT_S = 0.5  # the footer's keys wait this long at most for the first page (widgets/footer.py)
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def idle_refresh_s(app: Any) -> float:
    """How often a screen of posts (this one, the calendar) reads itself again while nothing on it is live."""
    return IDLE_REFRESH_S if getattr(app.client, "embedded", False) else IDLE_REFRESH_REMOTE_S


class DateError(ValueError):
    pass


def date_bound(text: str, zone_name: str | None, now: datetime, *, end: bool) -> str | None:
    """An API timestamp for a `from` (end=False) or `to` (end=True) box: a day (`2027-01-15`, in the user's
    zone: `to` includes that day), or a time as the CLI reads one (`2027-01-15 09:00`, `today 18:00`, `+2h`).
    Empty: None. Unreadable: DateError."""
    text = text.strip()
    if not text:
        return None
    if text.lower() in ("today", "tomorrow", "yesterday"):  # a day, as the CLI's --from today reads it
        local = now.astimezone(zone(zone_name)) if zone_name else now.astimezone()
        text = (
            local.date() + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[text.lower()])
        ).isoformat()
    try:
        if _DATE.match(text):
            instant = resolve(f"{text} 00:00", zone_name, now)
            if end:  # the whole day: up to the start of the next one (a DST day is 23 or 25 hours)
                day = datetime.fromisoformat(text).date() + timedelta(days=1)
                instant = resolve(f"{day.isoformat()} 00:00", zone_name, now)
        else:
            instant = resolve(text, zone_name, now)
    except TimeError as exc:
        raise DateError(str(exc)) from None
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


class PostsScreen(Screen[None]):
    CSS_PATH = "posts.tcss"
    AUTO_FOCUS = "#posts-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="posts.open"),
        Binding("slash", "search", "Search", id="posts.search"),
        Binding("s", "filter('status')", "Status", id="posts.filter.status"),
        Binding("w", "filter('network')", "Network", id="posts.filter.network"),
        Binding("a", "filter('account')", "Account", id="posts.filter.account", show=False),
        Binding("d", "filter('from')", "Dates", id="posts.filter.dates", show=False),
        Binding("x", "clear_filters", "Clear filters", id="posts.filter.clear", show=False),
        Binding("r", "reload", "Refresh", id="posts.refresh"),
        Binding("escape", "back_to_list", "Back to the list", id="posts.back", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._debounce: Timer | None = None
        self._problems: dict[str, str] = {}
        self._can_open = False
        self._first_page_seen = False
        self._resumed = False
        self.account_options: list[tuple[str, str]] = []  # the account filter's choices as last set

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="posts-search-bar"):
            yield Static("search", classes="posts-label")
            yield Input(placeholder="words in the text  ( / )", id="posts-search", compact=True)
        with Horizontal(id="posts-filters"):
            yield Dropdown([(s, s) for s in PostStatus], prompt="any status", id="posts-status", compact=True)
            yield Dropdown(
                [(f"{n.badge} {n.name}", n.name) for n in shell(self).networks],
                prompt="any network",
                id="posts-network",
                compact=True,
            )
            yield Dropdown([], prompt="any account", id="posts-account", compact=True)
            yield Input(placeholder="from", id="posts-from", compact=True)
            yield Input(placeholder="to", id="posts-to", compact=True)
        yield PostList(id="posts-list")
        yield Static(id="posts-status-line")
        yield Footer(wait_s=FOOTER_WAIT_S)

    def on_mount(self) -> None:
        shell(self).post_changed.subscribe(self, self._post_changed)
        embedded = getattr(shell(self).client, "embedded", False)
        self.set_interval(LIVE_TICK_S if embedded else LIVE_TICK_REMOTE_S, self._live_tick)
        self._read_at = time.monotonic()  # when the rows on screen were last read again by the ticks
        self.post_list.empty_text = "no posts yet: n writes one"
        self.post_list.set_query(self.query_params())  # the first page first (_first_page_done)
        self._show_status()

    def _first_page_done(self) -> None:
        """Once the first page has been drawn (or could not be read): the account filter's choices are read, and
        the app told that its first screen is up (the embedded backend's worker starts a little later). Neither
        is needed to show the posts, and in the embedded mode the backend's work shares this process."""
        if not self._first_page_seen:
            self._first_page_seen = True
            self.query_one(Footer).show_keys()  # with `Open` as it stands: one build of the keys
            self.call_after_refresh(self._after_first_page)

    def _after_first_page(self) -> None:
        self._load_accounts()
        shell(self).first_screen_drawn()

    @property
    def post_list(self) -> PostList:
        return self.query_one(PostList)

    # ---- the query --------------------------------------------------------------------------------------------
    def query_params(self) -> dict[str, Any]:
        """The GET /v1/posts parameters of the filters as they stand (a date box that does not read is left
        out, and said so in the status line)."""
        params: dict[str, Any] = {}
        search = self.query_one("#posts-search", Input).value.strip()
        if search:
            params["q"] = search[:200]
        for select_id, name in (
            ("#posts-status", "status"),
            ("#posts-network", "platform"),
            ("#posts-account", "account_id"),
        ):
            value = self.query_one(select_id, Select).value
            if value is not Select.NULL:
                params[name] = [value] if name == "status" else value
        zone_name = shell(self).zone.name
        now = shell(self).now()
        self._problems.clear()
        for box, key, end in (("#posts-from", "since", False), ("#posts-to", "until", True)):
            widget = self.query_one(box, Input)
            try:
                bound = date_bound(widget.value, zone_name, now, end=end)
            except DateError as exc:
                self._problems[box.removeprefix("#posts-")] = str(exc)
                widget.add_class("-invalid")
                continue
            widget.remove_class("-invalid")
            if bound is not None:
                params[key] = bound
        if "since" in params or "until" in params:
            params["time_field"] = "dueAt"
        return params

    def _apply_filters(self) -> None:
        self._debounce = None
        params = self.query_params()
        if params != self.post_list.query_params:
            self.post_list.empty_text = (
                "no post matches these filters: x clears them" if params else "no posts yet: n writes one"
            )
            self.post_list.set_query(params)
        self._show_status()

    def _apply_soon(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(SEARCH_DEBOUNCE_S, self._apply_filters)

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        self._apply_soon()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if self._debounce is not None:
            self._debounce.stop()
        self._apply_filters()
        self.post_list.focus()

    @on(Select.Changed)
    def _picked(self, event: Select.Changed) -> None:
        self._apply_filters()
        if event.select.has_focus:  # picked from the menu: back to the list it filters
            self.post_list.focus()

    @work(exclusive=True, group="posts-accounts")
    async def _load_accounts(self) -> None:
        try:
            accounts = await shell(self).client.list_accounts()
        except Exception as exc:
            shell(self).report(exc, "Loading the accounts")
            return
        options = [
            (f"{shell(self).networks.badge(a.platform)} {inert(a.name, markup=True)}", a.id)
            for a in accounts.items
        ]
        for select in self.query("#posts-account").results(Select):  # none once the screen is being torn down
            if options == self.account_options:
                continue
            self.account_options = options
            current = select.value
            try:
                if any(
                    value == current for _, value in options
                ):  # the account filtered on is still there: kept
                    with self.prevent(Select.Changed):
                        select.set_options(options)
                        select.value = current
                else:
                    select.set_options(options)
            except NoMatches:  # the app quit while the accounts were read: the select's menu is already gone
                return

    # ---- staying current --------------------------------------------------------------------------------------
    def is_live(self) -> bool:
        """A post on screen is being sent, or is due within LIVE_HORIZON."""
        now = shell(self).now()
        return any(row.is_live(now, LIVE_HORIZON) for row in self.post_list.shown_rows())

    def _live_tick(self) -> None:
        """Read the rows on screen again: at every tick while one of them is live, else every IDLE_REFRESH_S while
        this screen is shown."""
        now = time.monotonic()
        idle_due = self.is_current and now - self._read_at >= idle_refresh_s(self.app)
        if self.post_list.failed is None and (self.is_live() or idle_due):
            self._read_at = now
            self.post_list.refresh_rows()
        self._show_status()

    def _post_changed(self, changed: PostChanged) -> None:
        self.post_list.refresh_rows()

    def on_screen_resume(self) -> None:
        if self._resumed:  # back from a screen pushed on top: read the rows on screen again, and the accounts
            self.post_list.refresh_rows()  # (one connected meanwhile is offered by the account filter)
            self._load_accounts()
        self._resumed = True  # (the first resume is the screen's first show: on_mount reads the first page)

    # ---- what the list says -----------------------------------------------------------------------------------
    @on(PostList.PageLoaded)
    @on(PostList.CursorMoved)
    def _list_changed(self) -> None:
        self._first_page_done()
        self._show_status()
        can_open = self.post_list.cursor_post is not None
        if (
            can_open != self._can_open
        ):  # `Open` is offered only on a post (the footer is rebuilt: not on every move)
            self._can_open = can_open
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":
            lists = self.query(PostList)
            if not lists or lists.first().cursor_post is None:
                return None  # shown, dimmed
        return True

    @on(PostList.LoadFailed)
    def _list_failed(self, event: PostList.LoadFailed) -> None:
        self._first_page_done()
        shell(self).report(event.error, "Reading the posts")
        self._show_status()

    def _show_status(self) -> None:
        post_list = self.post_list
        window = post_list.window
        parts: list[str] = []
        if post_list.loading:
            parts.append("reading…")
        elif window.known == 0 and window.complete:
            parts.append("0 posts")
        elif window.known:
            total = f"{window.known:,}" + ("" if window.complete else "+")
            parts.append(f"post {post_list.cursor_row + 1:,} of {total}")
        if self.is_live():
            parts.append("[b]●[/] live")
        if post_list.failed is not None:
            parts.append("[red]could not read the posts[/] (r tries again)")
        for box, problem in self._problems.items():
            parts.append(f"[red]{box}:[/] {problem}")
        self.query_one("#posts-status-line", Static).update(
            "  ·  ".join(parts), layout=False
        )  # its size is fixed

    # ---- actions ----------------------------------------------------------------------------------------------
    def action_open(self) -> None:
        row = self.post_list.cursor_post
        if row is None:
            self.app.bell()
            return
        # deferred: socialpub_tui.screens.post_detail costs ~67 ms of the TUI's launch, paid when the screen is first opened
        from socialpub_tui.screens.post_detail import PostDetailScreen

        self.app.push_screen(PostDetailScreen(row.id))

    def action_search(self) -> None:
        self.query_one("#posts-search", Input).focus()

    def action_filter(self, which: str) -> None:
        widget = self.query_one(f"#posts-{which}")
        widget.focus()
        if isinstance(widget, Select):
            widget.action_show_overlay()  # open with an option highlighted: the first `down` moves

    def action_clear_filters(self) -> None:
        with self.prevent(Input.Changed, Select.Changed):
            for box in ("#posts-search", "#posts-from", "#posts-to"):
                self.query_one(box, Input).value = ""
            for select in ("#posts-status", "#posts-network", "#posts-account"):
                self.query_one(select, Select).clear()
        self._apply_filters()
        self.post_list.focus()

    def action_reload(self) -> None:
        self.post_list.failed = None
        self.post_list.refresh_rows()
        self._load_accounts()

    def action_back_to_list(self) -> None:
        self.post_list.focus()
