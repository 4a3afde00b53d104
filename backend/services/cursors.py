"""List cursors: `<tag>.<last id>` (e.g. `m1.med_01j…`), the pattern the document states for each list
(backend.schemas.common.cursor_pattern). One codec for every list that pages by id (newest first); a cursor of
another shape answers 400 `invalid_cursor`. A cursor that has the shape pages from the id it names, whoever made it
(a page of ids below it, in the caller's workspace only)."""

from __future__ import annotations

import re

from backend.errors import ApiError
from backend.schemas.common import cursor_pattern


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
