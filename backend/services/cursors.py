"""Opaque list cursors: `base64url("<tag>:<last id>")`. One codec for every list that pages by id (newest first);
a cursor this API did not give answers 400 `invalid_cursor`."""

from __future__ import annotations

import base64
import binascii
import re

from backend.errors import ApiError


def encode(tag: str, row_id: str) -> str:
    return base64.urlsafe_b64encode(f"{tag}:{row_id}".encode()).decode().rstrip("=")


def text(cursor: str) -> str:
    """The cursor's decoded text ("" when it is not base64url of UTF-8)."""
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return ""


def decode(cursor: str, tag: str, id_prefix: str, what: str) -> str:
    """The id a cursor of `tag` carries (an id of `id_prefix`, e.g. `gen`); 400 `invalid_cursor` otherwise. `what`
    names the list (`GET /v1/credits`) in the error's detail."""
    raw = text(cursor)
    if not re.fullmatch(rf"{re.escape(tag)}:{re.escape(id_prefix)}_[0-9a-z]{{26}}", raw):
        raise ApiError(
            400,
            "invalid_cursor",
            "cursor is not one this API gave: pass nextCursor as it came",
            [{"field": "cursor", "error": "invalid_cursor", "message": f"not a cursor of {what}"}],
        )
    return raw[len(tag) + 1 :]
