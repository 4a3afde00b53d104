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

When the answer need not be asked again (issue 34): the store said the job is held until `Held.until`, and no other
worker takes a job over before its lease ends by ITS clock (the claim takes only leases that ran out; every renewal
sets the end a whole lease from now, so it only moves later). Where every worker that could take the job over reads
this process's clock — the store is SQLite, a file of this host (WAL needs one host's shared memory) — a fresh last
answer is as good as a read (`installed(..., local=)`), and the run rests on it:
- before a network call: the check before a call is a check-then-act either way, and the window between them is
  what the paragraph above says;
- in a transaction that records a write: there the answer must hold until the commit, and it does: on SQLite every
  transaction holds the database's one writer lock from BEGIN (IMMEDIATE), and a takeover is a write, so none can
  commit before this transaction ends, and none could have been made before the lease's end.
The run's first answer is its claim's (`installed(..., held=)`: the claim made this run the holder until the
lease's end it wrote); an answer is fresh while half a lease is left (`Held.fresh_until`: past that the store
would renew the lease, so it is asked).

Elsewhere (PostgreSQL) the store is asked every time: workers on other hosts read other clocks, and a frozen VM or
a sleeping laptop sharing the database resumes with a wall clock behind real time until it is corrected — lease
arithmetic on that clock says "held" while another worker has the job; the read (`locked_by` changed) sees it, and
in a transaction it locks the job's row until the commit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from backend import clock


class LeaseLost(Exception):
    """The job this code runs for is no longer held by its claim (its lease expired and another worker took it
    over, or it was finished elsewhere): make no further call to a network and record nothing."""


@dataclass(frozen=True)
class Held:
    """A fence's answer: the job is held until `until` (the lease's end, as the store has it now). `fresh_until`:
    from then on the store would renew the lease if asked (the fence keeps part of a lease ahead), so the answer is
    not reused past it: a reused answer is the one a read would give, without the read."""

    until: datetime
    fresh_until: datetime


# need_s: how long the caller needs the lease to last from now (its call's timeout). Returns how long it is
# held; raises LeaseLost when it is not.
Fence = Callable[[float], Held]

SLACK_S = 1.0  # asked of the fence beyond need_s; its answer is used only while half of that is left


@dataclass
class _Run:
    """The fence installed for one run, its last answer, and whether a fresh answer may stand for a read."""

    fence: Fence
    held: Held | None = field(default=None)
    local: Callable[[], bool] = field(default=lambda: False)


_FENCE: ContextVar[_Run | None] = ContextVar("socialpub_network_fence", default=None)


@contextlib.contextmanager
def installed(
    fence: Fence | None, *, held: Held | None = None, local: Callable[[], bool] | None = None
) -> Iterator[None]:
    """Run the block with `fence` checked before each of its network writes (None: without a fence). `held`: the
    answer the run starts with (its claim's lease end); `local()`: whether every worker that could take the job over
    reads this process's clock and every transaction holds the store's one writer lock, so that a fresh last answer
    stands for a read (see the module's docstring)."""
    run = None if fence is None else _Run(fence, held, local or (lambda: False))
    token = _FENCE.set(run)
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
    frozen between the answer and the call (past that point) asks again, and then learns it lost the job. With a
    local store, the run's last answer while it is fresh is the answer (see the module's docstring)."""
    run = _FENCE.get()
    if run is None:
        return
    if run.held is not None and _fresh(run.held, need_s) and run.local():
        return
    for _ in range(3):
        run.held = run.fence(need_s + SLACK_S)
        if _covers(run.held, need_s):
            return
    raise LeaseLost("the job's lease could not be kept long enough for the call")


def _covers(held: Held, need_s: float) -> bool:
    return clock.now() + timedelta(seconds=need_s + SLACK_S / 2) <= held.until


def _fresh(held: Held, need_s: float) -> bool:
    return _covers(held, need_s) and clock.now() < held.fresh_until
