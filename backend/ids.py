"""Prefixed, time-sortable identifiers (ULID layout: 48-bit ms time + 80 random bits, Crockford base32)."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]  # 10 bits -> 2 digits: half the loop turns


_SHIFTS = tuple(range(120, -1, -10))  # the 26 digits of (ms << 80 | rand), two at a time


def new_id(prefix: str, at_ms: int | None = None) -> str:
    """`prefix_` + 26 chars; ids made later sort after ids made earlier (to the millisecond)."""
    ms = int(time.time() * 1000) if at_ms is None else at_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")  # 10 digits of time, 16 of randomness
    return prefix + "_" + "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])
