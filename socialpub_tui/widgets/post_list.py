"""The posts list: as many posts as the workspace holds (100,000 and more), never all in memory.

Rows come from `GET /v1/posts?order=upcoming` a page at a time, as the user scrolls (the API's cursor). A
`PostWindow` keeps a bookmark per page read so far (the cursor it starts at, how many rows it held, the cursor
after it) and the rows of at most `RESIDENT_PAGES` pages — the ones nearest to what is shown; a page scrolled back
to is read again from its bookmark. `PostList` draws only the lines on screen, from those rows (the line API,
as toolong draws a log of any size), with a fixed header line. Memory: the resident pages' rows, a cache of
rendered lines of bounded size, and one bookmark (~200 bytes: a Page and its cursor) per page the user has
scrolled past — ~200 KB after scrolling through all of 100,000 posts.

The order is a keyset, not offsets: a page read again may hold other rows than before (posts created, sent,
cancelled). When a page read again ends somewhere else, the bookmarks after it no longer follow from it and are
dropped (the pages are read again from the new boundary as the user gets there), so a row is never shown twice
nor skipped. The cursor follows its post by id across every change.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events, work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from backend.schemas.statuses import PostStatus
from socialpub_tui.look import inert, status_colour, target_status
from socialpub_tui.shell import shell
from socialpub_tui.times import parse_instant

if TYPE_CHECKING:
    from backend.schemas.posts import PostOut
    from socialpub_tui.times import DisplayZone

PAGE_SIZE = 100  # rows a request asks for (the API's maximum)
RESIDENT_PAGES = 5  # pages whose rows are kept; others keep only their bookmark
PREFETCH_ROWS = PAGE_SIZE // 2  # the next page is asked for once the view is this close to the last row read
GROW_ROWS = 10 * PAGE_SIZE  # the scrollable height grows by this much at a time while more rows may follow
WHEN_WIDTH = 20  # `2027-01-15 09:00 CET`
STATUS_WIDTH = 10  # `processing`
GAP = 2
WIDE = 96  # from this width on, five badges a post; narrower, three (and `+N`), leaving room for the text


def badges_shown(width: int) -> int:
    return 5 if width >= WIDE else 3


def targets_width(width: int) -> int:
    return 3 * badges_shown(width) + 2  # `FB IG LI TT YT +3`


# ---- rows ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PostRow:
    """What a line shows of a post (formatted once, when its page arrives)."""

    id: str
    status: str
    when: str
    due: datetime | None  # scheduledAt of a scheduled post: it goes live as it comes near
    targets: tuple[tuple[str, str], ...]  # (network, target status), in the post's order
    text: str  # the first line of the text

    @classmethod
    def of(cls, post: PostOut, zone: DisplayZone) -> PostRow:
        first = next((line.strip() for line in post.content.splitlines() if line.strip()), "")
        # a user's text never drives the terminal (escape sequences, tabs: shown escaped)
        first = inert(first)
        due = (
            parse_instant(post.scheduled_at)
            if post.status == PostStatus.SCHEDULED and post.scheduled_at
            else None
        )
        return cls(
            post.id,
            post.status,
            zone.format(post.scheduled_at or post.created_at),
            due,
            tuple((t.platform, t.status) for t in post.targets),
            first,
        )

    def is_live(self, now: datetime, horizon: timedelta, late: timedelta = timedelta(hours=1)) -> bool:
        """Changing now or soon: being sent, a target being published, or due within `horizon` (or overdue by
        less than `late`: a post overdue for longer waits for a worker that is not running, and is left alone)."""
        if self.status == "processing" or any(status == "publishing" for _, status in self.targets):
            return True
        return self.due is not None and -late <= self.due - now <= horizon


# ---- the window of pages ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Page:
    """A bookmark: where a page starts (`cursor`; None: the top), what it held when last read."""

    cursor: str | None
    count: int | None = None  # rows it held when last read; None: never read (the frontier)
    next: str | None = None  # the cursor after it (None: the end of the list)
    rows: list[PostRow] | None = None  # None: not resident (never read, or evicted)
    stale: bool = False  # to be read again (a refresh)


class PostWindow:
    """Pages of a list read with a cursor, `resident` of them holding rows. Pure (no I/O, no Textual)."""

    def __init__(self, resident: int = RESIDENT_PAGES, prefetch: int = PREFETCH_ROWS) -> None:
        self.pages: list[Page] = [Page(None)]
        self.resident = resident
        self.prefetch = prefetch
        self._starts: list[int] = [0]  # the index of each read page's first row

    # -- what is known
    @property
    def known(self) -> int:
        """Rows read so far (their pages may have been evicted since)."""
        return sum(p.count for p in self.pages if p.count is not None)

    @property
    def complete(self) -> bool:
        """The last page has been read and nothing follows it."""
        last = self.pages[-1]
        return last.count is not None and last.next is None

    @property
    def resident_rows(self) -> int:
        return sum(len(p.rows) for p in self.pages if p.rows is not None)

    def locate(self, index: int) -> tuple[int, int] | None:
        """(page, offset in it) of row `index`, or None past the rows read."""
        if index < 0:
            return None
        k = bisect.bisect_right(self._starts, index) - 1
        page = self.pages[k]
        if page.count is None or index >= self._starts[k] + page.count:
            return None
        return k, index - self._starts[k]

    def row(self, index: int) -> PostRow | None:
        """Row `index` when its page is resident."""
        where = self.locate(index)
        if where is None:
            return None
        rows = self.pages[where[0]].rows
        return rows[where[1]] if rows is not None and where[1] < len(rows) else None

    def index_of(self, post_id: str) -> int | None:
        for k, page in enumerate(self.pages):
            if page.rows is not None:
                for offset, row in enumerate(page.rows):
                    if row.id == post_id:
                        return self._starts[k] + offset
        return None

    def rows_between(self, first: int, last: int) -> list[PostRow]:
        return [row for i in range(max(0, first), last + 1) if (row := self.row(i)) is not None]

    # -- what to read next
    def wanted(self, first: int, last: int) -> int | None:
        """The page to read next for a view of rows `first`..`last`: a page on screen not resident or stale;
        the frontier when the view comes near it; a neighbour of the view not resident. None: nothing."""
        on_screen = self._pages_between(first, last)
        for k in on_screen:
            if self.pages[k].rows is None or self.pages[k].stale:
                return k
        frontier = len(self.pages) - 1
        if self.pages[frontier].count is None and last + self.prefetch >= self.known:
            return frontier
        for k in self._pages_between(first - self.prefetch, last + self.prefetch):
            if self.pages[k].rows is None:
                return k
        return None

    def _pages_between(self, first: int, last: int) -> list[int]:
        """The read pages holding rows `first`..`last` (an empty page — an empty list, or a last page whose
        posts all went — counts as holding the place where its rows would be, so that it is read again)."""
        out = []
        for k, page in enumerate(self.pages):
            if page.count is None:
                continue
            start = self._starts[k]
            if start <= last and start + max(page.count, 1) - 1 >= first:
                out.append(k)
        return out

    def mark_stale(self, first: int, last: int) -> None:
        """The pages of rows `first`..`last` are read again (the frontier too, if it is on screen)."""
        for k in self._pages_between(first, last):
            self.pages[k].stale = True

    # -- what was read
    def store(
        self, k: int, cursor: str | None, rows: list[PostRow], next_cursor: str | None, near: int = 0
    ) -> bool:
        """Page `k`, read from `cursor`: `rows`, followed by `next_cursor`. False (nothing changed) when that
        page is no longer the one asked for (the window changed meanwhile). `near`: the row in view, whose
        pages are kept when others are evicted."""
        if k >= len(self.pages) or self.pages[k].cursor != cursor:
            return False
        page = self.pages[k]
        first_read = page.count is None
        page.rows, page.count, page.stale = rows, len(rows), False
        if first_read or page.next != next_cursor:
            # the page ends elsewhere: what followed it no longer follows from it
            del self.pages[k + 1 :]
            if next_cursor is not None:
                self.pages.append(Page(next_cursor))
        page.next = next_cursor
        self._index()
        self._evict(keep=k, near=near)
        return True

    def _index(self) -> None:
        starts, at = [], 0
        for page in self.pages:
            starts.append(at)
            at += page.count or 0
        self._starts = starts

    def _evict(self, keep: int, near: int) -> None:
        resident = [k for k, p in enumerate(self.pages) if p.rows is not None and k != keep]
        excess = len(resident) + 1 - self.resident
        if excess <= 0:
            return

        def distance(k: int) -> int:
            start, end = self._starts[k], self._starts[k] + (self.pages[k].count or 0)
            return 0 if start <= near < end else min(abs(near - start), abs(near - end))

        for k in sorted(resident, key=distance, reverse=True)[:excess]:
            self.pages[k].rows = None


# ---- the widget ---------------------------------------------------------------------------------------------


class PostList(ScrollView, can_focus=True):
    """Posts in `order=upcoming`, filtered by `query` (GET /v1/posts parameters), one line each under a fixed
    header; a cursor row (`enter` on the screen opens it). Reads pages as the view moves (module doc)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "post-list--header",
        "post-list--cursor",
        "post-list--cursor-blurred",
        "post-list--pending",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home,g", "first", "First post", show=False),
        Binding("end,G", "last", "Last post read", show=False),
    ]

    @dataclass
    class PageLoaded(Message):
        """A page of the current query arrived and is shown (`first`: the first page of a new query)."""

        post_list: PostList
        first: bool
        rows: int

        @property
        def control(self) -> PostList:
            return self.post_list

    @dataclass
    class LoadFailed(Message):
        """Reading a page failed (shown by `app.report`; `r` reads again)."""

        post_list: PostList
        error: BaseException

        @property
        def control(self) -> PostList:
            return self.post_list

    @dataclass
    class CursorMoved(Message):
        post_list: PostList
        post_id: str | None

        @property
        def control(self) -> PostList:
            return self.post_list

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.query_params: dict[str, Any] = {}
        self.window = PostWindow()
        self.cursor_row = 0
        self.cursor_id: str | None = None
        self.loading = False  # a new query's first page is on its way
        self.empty_text = "no posts"  # the line shown when the query matches nothing
        self.failed: BaseException | None = None
        self._generation = 0
        self._reset = True
        self._pump: int | None = None  # the running reader's number (None: none runs)
        self._pumps = 0
        self._lines: LRUCache[tuple[Any, ...], Strip] = LRUCache(512)

    # ---- the query --------------------------------------------------------------------------------------------
    def set_query(self, params: dict[str, Any]) -> None:
        """Show the posts matching `params` (read from the top; the rows shown stay until the new ones come)."""
        self.query_params = dict(params)
        self._generation += 1
        self._reset = True
        self.loading = True
        self.failed = None
        self._start_pump()

    def refresh_rows(self) -> None:
        """Read the pages on screen again (the cursor stays on its post)."""
        first, last = self.view_rows()
        self.window.mark_stale(first, last)
        self.failed = None
        self._kick()

    @property
    def reading(self) -> bool:
        """Pages are being read (a new query's, the ones on screen, the next one)."""
        return self._pump is not None

    @property
    def cursor_post(self) -> PostRow | None:
        return self.window.row(self.cursor_row)

    def view_rows(self) -> tuple[int, int]:
        """The indexes of the first and last row lines on screen."""
        top = round(self.scroll_offset.y)
        return top, top + max(1, self.scrollable_content_region.height - 1) - 1

    def shown_rows(self) -> list[PostRow]:
        first, last = self.view_rows()
        return self.window.rows_between(first, last)

    # ---- reading pages ----------------------------------------------------------------------------------------
    def _kick(self) -> None:
        if self._pump is None:
            self._start_pump()

    def _start_pump(self) -> None:
        self._pumps += 1
        self._pump = self._pumps
        self._read_pages(self._pumps)

    @work(exclusive=True, group="post-list")
    async def _read_pages(self, number: int) -> None:
        """Read the pages wanted, one at a time, until none is (each time from where the view is then).
        A newer query cancels it (exclusive); a page of an older query is dropped (generation)."""
        try:
            while True:
                generation = self._generation
                if self._reset:
                    window, k, cursor = PostWindow(), 0, None
                else:
                    first, last = self.view_rows()
                    wanted = self.window.wanted(first, last)
                    if wanted is None or self.failed is not None:
                        return
                    window, k, cursor = self.window, wanted, self.window.pages[wanted].cursor
                try:
                    page = await shell(self).client.list_posts(
                        **self.query_params, order="upcoming", cursor=cursor, limit=PAGE_SIZE
                    )
                except Exception as exc:  # an ApiError, a NetworkError: reported, not retried in a loop
                    if generation == self._generation:
                        self.failed = exc
                        self.loading = False
                        if self._reset:  # the rows of the previous query do not answer this one: none shown
                            self.window = PostWindow()
                            self._resize()
                        self.refresh()
                        self.post_message(self.LoadFailed(self, exc))
                    return
                if generation != self._generation:
                    continue  # a newer query was set meanwhile: this page is stale
                zone = shell(self).zone
                rows = [PostRow.of(post, zone) for post in page.items]
                self._apply(window, k, cursor, rows, page.next_cursor)
        finally:
            if self._pump == number:
                self._pump = None

    def _apply(
        self, window: PostWindow, k: int, cursor: str | None, rows: list[PostRow], next_cursor: str | None
    ) -> None:
        first_page = window is not self.window
        if first_page:
            self.window = window
            self._reset = False
            self.loading = False
        if not window.store(k, cursor, rows, next_cursor, near=sum(self.view_rows()) // 2):
            return
        self._resize()
        if first_page:
            self.cursor_row = 0
            self.scroll_to(y=0, animate=False, immediate=True)
            self._set_cursor_id()
        else:
            self._follow_cursor_post()
        self.refresh()
        self.post_message(self.PageLoaded(self, first_page, len(rows)))

    def _resize(self) -> None:
        """The scrollable height: the header and the rows read; while more may follow, rounded up to the next
        GROW_ROWS (placeholder lines), so that it changes every few pages rather than with each one (a change of
        size lays the screen out again: ~10-15 ms)."""
        rows = self.window.known
        if not self.window.complete:
            rows = (rows // GROW_ROWS + 1) * GROW_ROWS
        size = Size(self.scrollable_content_region.width, 1 + rows)
        if size != self.virtual_size:
            self.virtual_size = size

    def _follow_cursor_post(self) -> None:
        """Keep the cursor on its post (by id) after rows moved, at the same place on screen (unless the view
        is at the top of the list)."""
        if self.cursor_id is None:
            self._set_cursor_id()
            return
        index = self.window.index_of(self.cursor_id)
        if index is None:
            if self.window.row(self.cursor_row) is not None or self.cursor_row >= self.window.known:
                # gone from its place (sent elsewhere in the order, filtered out): the row now there
                self.cursor_row = min(self.cursor_row, max(0, self.window.known - 1))
                self._set_cursor_id()
            return  # else its page is not resident (scrolled away from): it is looked for when read again
        if index != self.cursor_row:
            delta = index - self.cursor_row
            self.cursor_row = index
            if self.scroll_offset.y > 0:  # at the top, rows arriving above stay in sight
                self.scroll_to(y=self.scroll_offset.y + delta, animate=False, immediate=True)
            self._cursor_in_view()

    def _set_cursor_id(self) -> None:
        row = self.window.row(self.cursor_row)
        new = row.id if row is not None else None
        if new != self.cursor_id:
            self.cursor_id = new
            self.post_message(self.CursorMoved(self, new))

    # ---- moving -----------------------------------------------------------------------------------------------
    def move_cursor(self, row: int) -> None:
        last = max(0, self.window.known - 1)
        self.cursor_row = max(0, min(row, last))
        self._set_cursor_id()
        self._cursor_in_view()
        self.refresh()
        self._kick()

    def _cursor_in_view(self) -> None:
        first, last_shown = self.view_rows()
        if self.cursor_row < first:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row > last_shown:
            self.scroll_to(y=self.cursor_row - (last_shown - first), animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        first, last = self.view_rows()
        height = last - first + 1
        self.scroll_to(y=first + direction * height, animate=False, immediate=True)
        self.move_cursor(self.cursor_row + direction * height)

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self.window.known - 1)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self._kick()

    def on_resize(self, event: events.Resize) -> None:
        self._resize()
        self._lines.clear()
        self._kick()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        self.move_cursor(round(self.scroll_offset.y) + offset.y - 1)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()

    # ---- drawing ----------------------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            return self._line(("header", width), lambda: self._header(width))
        index = round(self.scroll_offset.y) + y - 1
        row = self.window.row(index)
        if row is None:
            if index == 0 and self.window.complete and not self.window.known and not self.loading:
                return self._strip(
                    [(" " + self.empty_text, None)],
                    width,
                    self.rich_style + self.get_component_rich_style("post-list--pending"),
                )
            if index < self.window.known or not self.window.complete:
                return self._pending(index, width)
            return Strip.blank(width, self.rich_style)
        cursor = index == self.cursor_row
        key = (row, width, cursor, cursor and self.has_focus)
        return self._line(key, lambda: self._row(row, width, cursor))

    def _line(self, key: tuple[Any, ...], make: Any) -> Strip:
        strip = self._lines.get(key)
        if strip is None:
            strip = make()
            self._lines[key] = strip
        return strip

    def _strip(self, pieces: list[tuple[str, Style | None]], width: int, base: Style) -> Strip:
        """One line of `width` cells from (text, style) pieces over `base`: cut with `…` where it overflows,
        padded where it is short (segments built directly: a line costs a few microseconds)."""
        segments: list[Segment] = []
        room = width
        for text, style in pieces:
            if room <= 0:
                break
            length = cell_len(text)
            if length > room:
                text, length = set_cell_size(text, room - 1) + "…", room
            segments.append(Segment(text, base + style if style is not None else base))
            room -= length
        if room > 0:
            segments.append(Segment(" " * room, base))
        return Strip(segments, width)

    def _header(self, width: int) -> Strip:
        title = (
            " "
            + "when".ljust(WHEN_WIDTH + GAP)
            + "status".ljust(STATUS_WIDTH + GAP)
            + "targets".ljust(targets_width(width) + GAP)
            + "text"
        )
        return self._strip(
            [(title, None)], width, self.rich_style + self.get_component_rich_style("post-list--header")
        )

    def _row(self, row: PostRow, width: int, cursor: bool) -> Strip:
        base = self.rich_style
        if cursor:
            base = base + self.get_component_rich_style(
                "post-list--cursor" if self.has_focus else "post-list--cursor-blurred"
            )
        status = row.status[:STATUS_WIDTH]
        pieces: list[tuple[str, Style | None]] = [
            (" " + row.when[:WHEN_WIDTH].ljust(WHEN_WIDTH + GAP), None),
            (status, _colour(row.status)),
            (" " * (STATUS_WIDTH + GAP - len(status)), None),
        ]
        used, shown = 0, badges_shown(width)
        for platform, state in row.targets[:shown]:
            badge = shell(self).networks.badge(platform)
            pieces += [(badge, _colour(target_status(row.status, state), bold=True)), (" ", None)]
            used += len(badge) + 1
        if len(row.targets) > shown:
            more = f"+{len(row.targets) - shown}"
            pieces.append((more, None))
            used += len(more)
        pieces += [(" " * max(0, targets_width(width) + GAP - used), None), (row.text, None)]
        return self._strip(pieces, width, base)

    def _pending(self, index: int, width: int) -> Strip:
        if index >= self.window.known and self.failed is not None:
            message = " could not read more posts: r reads again"
        else:
            message = " reading posts…"
        return self._strip(
            [(message, None)], width, self.rich_style + self.get_component_rich_style("post-list--pending")
        )


@lru_cache(maxsize=64)
def _colour(status: str, bold: bool = False) -> Style:
    return Style(color=status_colour(status), bold=bold or None)


__all__ = ["PAGE_SIZE", "RESIDENT_PAGES", "Page", "PostList", "PostRow", "PostWindow"]
