"""The fence every call that can change a network passes first (issue 30, item 1).

A job runs under a lease: past it, another worker takes the job over and makes the job's calls itself. A worker
paused past its lease (SIGSTOP, a GC pause, swap, a frozen VM, a sleeping laptop sharing a PostgreSQL) must then
make no further call: a second `media_publish`, `POST /rest/posts` or chunk upload publishes twice. So whatever
runs a job installs a fence here (`installed`), and the adapters' one send path (backend/networks/http.send)
calls `check` before every request that is not a read. The fence confirms, in the store the takeover writes,
that the job is still held by this claim with at least `need_s` of its lease left (renewing it first when
shorter), and raises `LeaseLost` otherwise: the call is not made, and the job's runner records nothing. The
transactions that record a job's result start with the same confirmation, made by their own first statement: it
reads the job's row under the run's claim together with the rows it locks (`claim`, `confirm`; issue 34: one
statement, not two), and the fence reads the store itself only when that row does not show the job held.

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
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from backend import clock


class LeaseLost(Exception):
    """The job this code runs for is no longer held by its claim (its lease expired and another worker took it
    over, or it was finished elsewhere): make no further call to a network and record nothing."""


@dataclass(frozen=True)
class Held:
    """A fence's answer: the job is held until `until` (the lease's end, as the store has it now)."""

    until: datetime


class Fence(Protocol):
    """What a job's runner installs (backend/jobs/leases.py)."""

    def __call__(self, need_s: float) -> Held:
        """need_s: how long the caller needs the lease to last from now (its call's timeout). Reads the store
        (renewing a shorter lease); returns how long the job is held; raises LeaseLost when it is not."""

    def claim(self) -> tuple[str, str]:
        """The job and the claim (`locked_by`) the run holds now."""

    def held(self, status: str, lease_until: datetime | None, need_s: float) -> Held | None:
        """The judgement of the job's row as the caller read it under that claim (its status and lease_until):
        held long enough, or None (then the store is asked: the fence itself)."""


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


def claim() -> tuple[str, str] | None:
    """The job and claim (`locked_by`) the run on this thread holds; None outside a job. A transaction that
    records a job's result reads the job's row under this claim in its own first statement (the post and target
    it locks: backend/services/publishing/apply.py) and passes what it read to `confirm`: the fence's read is
    folded into that statement (issue 34) rather than made apart."""
    fence = _FENCE.get()
    return None if fence is None else fence.claim()


def confirm(status: str | None, lease_until: datetime | None) -> None:
    """`check()`, from the job's row as the caller read it under the run's claim inside its transaction (`status`
    None: that read found no row held by the claim). A row showing the job held long enough needs nothing more;
    otherwise `check()` decides as ever: the store read again, a short lease renewed, or LeaseLost. Does nothing
    outside a job."""
    fence = _FENCE.get()
    if fence is None:
        return
    if status is not None:
        held = fence.held(status, lease_until, SLACK_S)
        if held is not None and clock.now() + timedelta(seconds=SLACK_S / 2) <= held.until:
            return
    check()
