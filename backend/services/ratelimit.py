"""Per-key request budget, counted in the store so several API processes share it (fixed one-minute windows)."""

from __future__ import annotations

from dataclasses import dataclass

from backend import clock
from backend.store.models import RateCounter

WINDOW_S = 60


@dataclass
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_s: int

    def headers(self) -> dict[str, str]:
        h = {
            "RateLimit-Policy": f'"per-key";q={self.limit};w={WINDOW_S}',
            "RateLimit": f'"per-key";r={self.remaining};t={self.reset_s}',
        }
        if not self.allowed:
            h["Retry-After"] = str(self.reset_s)
        return h


def hit(bucket: str, limit: int) -> RateDecision:
    """Count one request against `bucket` in the current window; one atomic upsert, no read-modify-write race."""
    now = clock.now().timestamp()
    window = int(now // WINDOW_S)
    reset = max(1, int((window + 1) * WINDOW_S - now + 0.999))
    count = (
        RateCounter.insert(bucket=bucket, window=window, count=1)
        .on_conflict(
            conflict_target=[RateCounter.bucket, RateCounter.window],
            update={RateCounter.count: RateCounter.count + 1},
        )
        .returning(RateCounter.count)
        .tuples()
        .execute()
    )[0][0]
    return RateDecision(allowed=count <= limit, limit=limit, remaining=max(0, limit - count), reset_s=reset)


def prune(before_window: int | None = None) -> int:
    """Delete counters of windows that are over (run by the worker's housekeeping)."""
    current = int(clock.now().timestamp() // WINDOW_S)
    limit = before_window if before_window is not None else current - 1
    return RateCounter.delete().where(RateCounter.window < limit).execute()
