"""List cursors: `<tag>.<last id>` (e.g. `m1.med_01j…`), the pattern the document states for each list
(backend.schemas.common.cursor_pattern). One codec for every list that pages by id (newest first); a cursor of
another shape answers 400 `invalid_cursor`. A cursor that has the shape pages from the id it names, whoever made it
(a page of ids below it, in the caller's workspace only).

The post list pages by a position instead (`p1.<section>.<due time in µs>.<post id>`, POST_CURSOR): its codec is
here too, so that every cursor of the API is made and read in this module."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from backend.errors import ApiError
from backend.schemas.common import POST_CURSOR, cursor_pattern


def encode(tag: str, row_id: str) -> str:
    return f"{tag}.{row_id}"


def invalid(what: str) -> ApiError:
    return ApiError(
        400,
        "invalid_cursor",
        "cursor is not one this API gave: pass nextCursor as it came",
        [{"field": "cursor", "error": "invalid_cursor", "message": f"not a cursor of {what}"}],
    )


def decode(cursor: str, tag: str, id_prefix: str, what: str) -> str:
    """The id a cursor of `tag` carries (an id of `id_prefix`, e.g. `gen`); 400 `invalid_cursor` otherwise. `what`
    names the list (`GET /v1/credits`) in the error's detail."""
    if not re.fullmatch(cursor_pattern(tag, id_prefix), cursor):
        raise invalid(what)
    return cursor[len(tag) + 1 :]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_MICROS = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)
_MAX_MICROS = (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC) - _EPOCH) // timedelta(microseconds=1)
_POSITION = re.compile(POST_CURSOR)


def encode_position(section: str, due: datetime, post_id: str) -> str:
    """A position in the post list (POST_CURSOR): the same cursor serves both orders — the newest-first order
    reads its id, order=upcoming its (section, due time, id)."""
    micros = (due - _EPOCH) // timedelta(microseconds=1)
    return f"p1.{section}.{micros}.{post_id}"


def decode_position(cursor: str, what: str) -> tuple[str, datetime, str]:
    """(section `s` or `r`, the due time, the post id) of a position cursor; 400 `invalid_cursor` otherwise. Any
    string of the document's pattern is a position: a due time past the dates the store holds is taken as the
    first or last one."""
    if _POSITION.match(cursor) is None:
        raise invalid(what)
    _, section, micros, post_id = cursor.split(".", 3)
    return section, _EPOCH + timedelta(microseconds=min(max(int(micros), _MIN_MICROS), _MAX_MICROS)), post_id
