"""An error a network's emulator can be switched to answer (sandbox/errors.py arms them; the emulator core
consumes them): the code as ../shared/NETWORKS.md names it, its HTTP status, body and NETWORKS.md's action. Each
network's emulator declares its catalogue (`FAULTS`, its package's emulator_errors.py) of these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

# NETWORKS.md's "action", as the product must apply it to a target:
ACTIONS = {
    "permanent": "the target fails `permanent` (fix the post, the media or the account)",
    "retry": "retriable: the target is tried again (and succeeds once the error stops)",
    "wait": "a limit: the target waits `pending` with nextAttemptAt (the network's reset or Retry-After)",
    "reauth": "the token is refused: the target fails `permanent` and the account turns `needs_reauth`",
}


@dataclass(frozen=True)
class Fault:
    code: str  # as NETWORKS.md names it (Instagram/Facebook `code/subcode`)
    status: int  # the HTTP status the network answers with
    action: str  # a key of ACTIONS
    message: str
    build: Callable[[Fault], httpx.Response]
    retry_after_s: int | None = None  # a Retry-After header, where the network sends one
    transient: bool | None = None  # Graph's `is_transient`
    extra: bool = False  # not in NETWORKS.md's tables (see the module's docstring)

    def response(self) -> httpx.Response:
        resp = self.build(self)
        if self.retry_after_s is not None:
            resp.headers["Retry-After"] = str(self.retry_after_s)
        return resp

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "action": self.action, "message": self.message}
        if self.retry_after_s is not None:
            out["retryAfter"] = self.retry_after_s
        if self.transient is not None:
            out["isTransient"] = self.transient
        if self.extra:
            out["extra"] = True
        return out
