"""Prefixed, time-sortable identifiers (ULID layout: 48-bit ms time + 80 random bits, Crockford base32)."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]  # 10 bits -> 2 digits: half the loop turns


def _b32(value: int, length: int) -> str:
    """`length` base-32 digits of `value`, most significant first (`length` is even)."""
    out = [_PAIRS[(value >> shift) & 1023] for shift in range(5 * length - 10, -1, -10)]
    return "".join(out)


def new_id(prefix: str, at_ms: int | None = None) -> str:
    """`prefix_` + 26 chars; ids made later sort after ids made earlier (to the millisecond)."""
    ms = int(time.time() * 1000) if at_ms is None else at_ms
    rand = int.from_bytes(os.urandom(10), "big")
    return f"{prefix}_{_b32(ms, 10)}{_b32(rand, 16)}"
