"""Prefixed, time-sortable identifiers (ULID layout: 48-bit ms time + 80 random bits, Crockford base32)."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def _b32(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def new_id(prefix: str, at_ms: int | None = None) -> str:
    """`prefix_` + 26 chars; ids made later sort after ids made earlier (to the millisecond)."""
    ms = int(time.time() * 1000) if at_ms is None else at_ms
    rand = int.from_bytes(os.urandom(10), "big")
    return f"{prefix}_{_b32(ms, 10)}{_b32(rand, 16)}"
