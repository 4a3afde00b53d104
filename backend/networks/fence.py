"""The fence every call that can change a network passes first (issue 30, item 1).

A job runs under a lease: past it, another worker takes the job over and makes the job's calls itself. A worker
paused past its lease (SIGSTOP, a GC pause, swap, a frozen VM, a sleeping laptop sharing a PostgreSQL) must then
make no further call: a second `media_publish`, `POST /rest/posts` or chunk upload publishes twice. So whatever
runs a job installs a fence here (`installed`), and the adapters' one send path (backend/networks/http.send)
calls `check` before every request that is not a read. The fence confirms, in the store the takeover writes,
that the job is still held by this claim with at least `need_s` of its lease left (renewing it first when
shorter), and raises `LeaseLost` otherwise: the call is not made, and the job's runner records nothing.

The adapters know nothing of the store or the queue: the fence is a plain callable held in a ContextVar, set by
the worker around each job it runs (backend/jobs/worker.py) and found by the send path of the same thread.
Outside a job (an operator command, a test calling an adapter) no fence is installed and `check` does nothing.

What the fence cannot close: a process frozen in the few instructions between the fence's answer and the first
byte of the request, or in the middle of sending a request's body. `check` narrows the first window by asking
again when the fence's answer is older than it allows (`Held.until`), and the networks' idempotency keys (where
a network offers one) cover what remains.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta

from backend import clock


class LeaseLost(Exception):
    """The job this code runs for is no longer held by its claim (its lease expired and another worker took it
    over, or it was finished elsewhere): make no further call to a network and record nothing."""


@dataclass(frozen=True)
class Held:
    """A fence's answer: the job is held until `until` (the lease's end, as the store has it now)."""

    until: datetime


# need_s: how long the caller needs the lease to last from now (its call's timeout). Returns how long it is
# held; raises LeaseLost when it is not.
Fence = Callable[[float], Held]

SLACK_S = 1.0  # asked of the fence beyond need_s; its answer is used only while half of that is left

_FENCE: ContextVar[Fence | None] = ContextVar("socialpub_network_fence", default=None)


@contextlib.contextmanager
def installed(fence: Fence | None) -> Iterator[None]:
    """Run the block with `fence` checked before each of its network writes (None: without a fence)."""
    token = _FENCE.set(fence)
    try:
        yield
    finally:
        _FENCE.reset(token)


def active() -> bool:
    return _FENCE.get() is not None


def check(need_s: float = 0.0) -> None:
    """Before a call that can change a network (or a write that records a job's result): raises LeaseLost when
    the job this thread runs is no longer held, with `need_s` of its lease left. Does nothing outside a job.

    The fence's answer is taken as valid only while `need_s` of the lease is still left by the clock: a thread
    frozen between the answer and the call (past that point) asks again, and then learns it lost the job."""
    fence = _FENCE.get()
    if fence is None:
        return
    for _ in range(3):
        held = fence(need_s + SLACK_S)
        if clock.now() + timedelta(seconds=need_s + SLACK_S / 2) <= held.until:
            return
    raise LeaseLost("the job's lease could not be kept long enough for the call")
