"""PostWindow (widgets/post_list.py): pages read with a cursor, a bounded number of them resident, bookmarks
that stay consistent when a page read again ends elsewhere. Pure: a fake keyset list stands for the API."""

from __future__ import annotations

from socialpub_tui.widgets.post_list import PostRow, PostWindow


def row(n: int) -> PostRow:
    return PostRow(f"post_{n:05d}", "completed", "when", None, (("facebook", "succeeded"),), f"text {n}")


class FakeList:
    """A keyset-paged list of ints (descending), like GET /v1/posts: a cursor is the last value seen."""

    def __init__(self, values: list[int]) -> None:
        self.values = values
        self.reads = 0

    def page(self, cursor: str | None, limit: int) -> tuple[list[PostRow], str | None]:
        self.reads += 1
        after = [v for v in self.values if cursor is None or v < int(cursor)]
        rows = after[:limit]
        more = len(after) > limit
        return [row(v) for v in rows], (str(rows[-1]) if more else None)


def read(window: PostWindow, source: FakeList, k: int, limit: int, near: int = 0) -> None:
    cursor = window.pages[k].cursor
    rows, nxt = source.page(cursor, limit)
    assert window.store(k, cursor, rows, nxt, near=near)


def fill_view(window: PostWindow, source: FakeList, first: int, last: int, limit: int) -> None:
    while (k := window.wanted(first, last)) is not None:
        read(window, source, k, limit, near=(first + last) // 2)


def test_reads_forward_as_the_view_moves_and_keeps_few_pages():
    source = FakeList(list(range(1000, 0, -1)))
    window = PostWindow(resident=3, prefetch=5)
    fill_view(window, source, 0, 9, 10)
    assert window.known == 20 and not window.complete  # the view's page, and the next one prefetched
    assert [window.row(i).id for i in range(3)] == ["post_01000", "post_00999", "post_00998"]
    for top in range(0, 990, 10):
        fill_view(window, source, top, top + 9, 10)
        assert window.resident_rows <= 30
        assert window.row(top + 9).id == f"post_{1000 - top - 9:05d}"
    assert window.complete and window.known == 1000
    assert window.row(0) is None  # long evicted: only its bookmark is kept
    reads = source.reads
    fill_view(window, source, 0, 9, 10)  # back to the top: read again from its bookmark
    assert window.row(0).id == "post_01000" and source.reads == reads + 2  # and the next page, prefetched


def test_a_page_read_again_that_ends_elsewhere_drops_the_bookmarks_after_it():
    source = FakeList(list(range(100, 0, -1)))
    window = PostWindow(resident=10, prefetch=0)
    for top in (0, 10, 20):
        fill_view(window, source, top, top + 9, 10)
    assert len(window.pages) == 4 and window.known == 30
    source.values.insert(3, 97)  # a post arrives inside the first page (duplicate value stands for a new one)
    window.mark_stale(0, 9)
    fill_view(window, source, 0, 9, 10)
    # the first page now ends one row earlier: the pages after it are read again from there, never twice a row
    assert len(window.pages) == 2 and window.known == 10
    fill_view(window, source, 10, 29, 10)
    ids = [window.row(i).id for i in range(30)]
    assert ids[:5] == ["post_00100", "post_00099", "post_00098", "post_00097", "post_00097"]
    assert ids[5:] == [f"post_{v:05d}" for v in range(96, 71, -1)]


def test_a_page_read_again_that_ends_at_the_same_place_keeps_what_follows():
    source = FakeList(list(range(50, 0, -1)))
    window = PostWindow(resident=10, prefetch=0)
    for top in (0, 10, 20):
        fill_view(window, source, top, top + 9, 10)
    window.mark_stale(10, 19)
    fill_view(window, source, 10, 19, 10)
    assert len(window.pages) == 4 and window.known == 30


def test_a_stale_answer_is_not_stored():
    source = FakeList(list(range(30, 0, -1)))
    window = PostWindow(resident=10, prefetch=0)
    fill_view(window, source, 0, 9, 10)
    rows, nxt = source.page("999", 10)
    assert not window.store(1, "999", rows, nxt)  # asked from a bookmark that is not page 1's
    assert not window.store(7, None, rows, nxt)  # no such page


def test_index_of_finds_resident_rows_only():
    source = FakeList(list(range(100, 0, -1)))
    window = PostWindow(resident=2, prefetch=0)
    for top in (0, 10, 20):
        fill_view(window, source, top, top + 9, 10)
    assert window.index_of("post_00075") == 25
    assert window.index_of("post_00100") is None  # its page was evicted


def test_live_rows():
    from datetime import UTC, datetime, timedelta

    now = datetime(2027, 1, 15, 8, 0, tzinfo=UTC)
    soon = PostRow("p", "scheduled", "", now + timedelta(minutes=4), (), "")
    later = PostRow("p", "scheduled", "", now + timedelta(minutes=6), (), "")
    sending = PostRow("p", "processing", "", None, (("facebook", "pending"),), "")
    publishing = PostRow("p", "partial", "", None, (("facebook", "publishing"),), "")
    done = PostRow("p", "completed", "", None, (("facebook", "succeeded"),), "")
    horizon = timedelta(minutes=5)
    assert [r.is_live(now, horizon) for r in (soon, later, sending, publishing, done)] == [
        True,
        False,
        True,
        True,
        False,
    ]


def test_a_row_shows_the_first_line_with_text_and_never_a_control_character():
    from backend.schemas.posts import PostOut
    from socialpub_tui.times import DisplayZone

    post = PostOut.model_validate(
        {
            "id": "post_1",
            "status": "scheduled",
            "scheduledAt": "2027-01-15T08:00:00.000Z",
            "createdAt": "2027-01-10T08:00:00.000Z",
            "updatedAt": "2027-01-10T08:00:00.000Z",
            "content": "\n  \n\x1b[31mRed\x1b[0m\tsale\u202e!\nsecond line",
            "mediaUrls": [],
            "options": {},
            "idempotencyKey": None,
            "targets": [],
        }
    )
    row = PostRow.of(post, DisplayZone("Europe/Paris"))
    assert row.text == "\\x1b[31mRed\\x1b[0m\\tsale\\u202e!"  # shown escaped (socialpub_tui.look.inert)
    assert row.when == "2027-01-15 09:00 CET"
    assert row.due is not None and row.due.hour == 8
