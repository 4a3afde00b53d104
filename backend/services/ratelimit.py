"""Request budgets, counted in the store so several API processes share them (fixed one-minute windows): per API
key, and the login attempts per client and account."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from backend import clock
from backend.store.models import RateCounter
from backend.store.shapes import Shape, Slot

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


# The window's counter, counted up in one atomic statement (a statement shape: backend/store/shapes.py); its first
# request of a window finds no row and makes it with an upsert (atomic too: two processes racing both count).
_BUMP = Shape(
    lambda: (
        RateCounter.update(count=RateCounter.count + 1)
        .where((RateCounter.bucket == Slot("bucket")) & (RateCounter.window == Slot("window")))
        .returning(RateCounter.count)
        .tuples()
    )
)


def hit(bucket: str, limit: int) -> RateDecision:
    """Count one request against `bucket` in the current window: no read-modify-write race, exact across
    processes."""
    now = clock.now().timestamp()
    window = int(now // WINDOW_S)
    reset = max(1, int((window + 1) * WINDOW_S - now + 0.999))
    bumped = _BUMP.rows(bucket=bucket, window=window)
    count = (
        bumped[0][0]
        if bumped
        else (
            RateCounter.insert(bucket=bucket, window=window, count=1)
            .on_conflict(
                conflict_target=[RateCounter.bucket, RateCounter.window],
                update={RateCounter.count: RateCounter.count + 1},
            )
            .returning(RateCounter.count)
            .tuples()
            .execute()
        )[0][0]
    )
    return RateDecision(allowed=count <= limit, limit=limit, remaining=max(0, limit - count), reset_s=reset)


# Login (POST /v1/auth/login): attempts are counted per client *and* account together, and per client across
# accounts, never per account alone: an account-wide budget let anyone lock the owner out with 10 wrong passwords a
# minute from anywhere. Another client's attempts never touch the owner's budget on the owner's own client.
LOGIN_PER_CLIENT_ACCOUNT = 10  # attempts a minute from one client for one email
LOGIN_PER_CLIENT = 30  # attempts a minute from one client, all emails together (guessing across accounts)


def client_of(host: str | None) -> str:
    """Who a client is for the login budgets: its address (behind a reverse proxy, the address the proxy gives in
    X-Forwarded-For when the proxy is trusted: uvicorn's --forwarded-allow-ips), an IPv6 address by its /64 (one
    host gets a whole /64, so counting single IPv6 addresses bounds nothing)."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:100]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def login_attempt(client: str, email: str) -> RateDecision:
    """Count one login attempt of `client` for `email`; the first budget it exhausts refuses it (the decision of
    the (client, email) budget otherwise)."""
    pair = hit(f"login:{client}:{email}", LOGIN_PER_CLIENT_ACCOUNT)
    spread = hit(f"login-client:{client}", LOGIN_PER_CLIENT)
    if pair.allowed and not spread.allowed:
        return spread
    return pair


def prune(before_window: int | None = None) -> int:
    """Delete counters of windows that are over (run by the worker's housekeeping)."""
    current = int(clock.now().timestamp() // WINDOW_S)
    limit = before_window if before_window is not None else current - 1
    deleted: int = RateCounter.delete().where(RateCounter.window < limit).execute()
    return deleted
