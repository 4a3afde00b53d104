"""Prefixed, time-sortable identifiers (ULID layout: 48-bit ms time + 80 random bits, Crockford base32)."""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]  # 10 bits -> 2 digits: half the loop turns


_SHIFTS = tuple(range(120, -1, -10))  # the 26 digits of (ms << 80 | rand), two at a time


_lock = threading.Lock()
_last = 0  # the last value made by this process from the clock


def new_id(prefix: str, at_ms: int | None = None) -> str:
    """`prefix_` + 26 chars; ids made later sort after ids made earlier: to the millisecond across processes, and
    within one process also inside a millisecond (monotonic, as ULID's: the next id of the same millisecond is the
    last one + 1), so a ledger or an outbox listed by id keeps the order its rows were made in."""
    global _last
    ms = int(time.time() * 1000) if at_ms is None else at_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")  # 10 digits of time, 16 of randomness
    if at_ms is None:
        with _lock:
            if ms == _last >> 80:  # the same millisecond: the last id + 1, as ULID's monotonic ids
                value = _last + 1  # (a fresh draw there could repeat the low bits a Bluesky record key takes)
            _last = value
    return prefix + "_" + "".join([_PAIRS[(value >> shift) & 1023] for shift in _SHIFTS])
