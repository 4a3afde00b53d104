"""Record keys: a post's key must be a TID (https://atproto.com/specs/tid, read 2026-11-28): 13 characters of
base32-sortable (`234567abcdefghijklmnopqrstuvwxyz`) encoding a 64-bit integer whose top bit is 0, 53 bits of
microseconds since the epoch then 10 bits of clock id. TIDs are not validated anywhere as timestamps
(docs.bsky.app/docs/advanced-guides/timestamps), so socialpub chooses the key of each target before the call,
derived stably from the target's idempotency token: every attempt of a target writes at the same key."""

from __future__ import annotations

import hashlib
import re

ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
PATTERN = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def encode(value: int) -> str:
    """13 base32-sortable digits of a value below 2**63."""
    if not 0 <= value < 1 << 63:
        raise ValueError("a TID is a 63-bit value")
    out = []
    for _ in range(13):
        out.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def _ulid_value(token: str) -> int | None:
    body = token.rpartition("_")[2].lower()
    if len(body) != 26 or any(c not in _CROCKFORD for c in body):
        return None
    value = 0
    for c in body:
        value = value * 32 + _CROCKFORD.index(c)
    return value


def from_token(token: str) -> str:
    """The TID of a target: from its ULID (`pub_…`: 48 bits of ms, 80 random bits) the microseconds of its time
    (ms·1000 plus 0–999 from the random bits) and a clock id of 10 random bits — time-sorted like the network's
    own keys, valid until year 2255. Any other token: 53 + 10 bits of its SHA-256."""
    v = _ulid_value(token)
    if v is None:
        h = int.from_bytes(hashlib.sha256(token.encode()).digest()[:8], "big")
        return encode(h >> 1)
    ms, rnd = v >> 80, v & ((1 << 80) - 1)
    us = ms * 1000 + (rnd >> 70) % 1000
    clock_id = rnd & 0x3FF
    return encode(((us & ((1 << 53) - 1)) << 10) | clock_id)


def valid(rkey: str) -> bool:
    return bool(PATTERN.match(rkey))
