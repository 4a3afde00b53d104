"""The worker's books and leases (backend/jobs/worker.py's Worker runs on them; see its docstring, "Lanes" and
"Leases"): which claims this worker runs and on which lanes, the heartbeat that renews their leases, the fence of
each run, and what a lost lease means for a run's result. Split from the worker's loop (issue 31 item 5); the
code is the loop's own, moved.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from backend import queue
from backend.logs import LATENESS
from backend.networks import fence
from backend.store.db import database
from backend.store.models import Job

log = logging.getLogger("socialpub.worker")

# how long a run whose job this worker claimed again waits for that claim to be booked (_adopted): the claiming
# thread books it right after its statement commits; only a starved process takes long
ADOPT_WAIT_S = 30.0

SERIAL_LANE = (
    "serial:"  # a lane whose jobs run one at a time in a worker (see Lanes in backend/jobs/worker.py)
)


def claim_of(job: Job) -> str:
    """The claim a job of this worker runs under: its `locked_by`, which every claim sets."""
    lock = job.locked_by
    if lock is None:
        raise RuntimeError(f"job {job.id} is run without a claim")
    return lock


class LeaseBooks:
    """The books of the claims a worker runs (guarded by `_cv`, held briefly) and their leases. Worker sets the
    attributes below in its __init__."""

    id: str
    concurrency: int
    lane_cap: int
    unlaned_reserve: int
    lease_s: float
    processed: int
    _cv: threading.Condition
    _running: dict[str, Job]  # locked_by of each claim this worker runs -> its job
    _lanes: Counter[str]
    _laned: int
    _lost: set[str]  # claims the heartbeat found lost (reported once, result not recorded)
    _recording: set[str]  # claims whose handler returned: their fenced writes judge the lease
    # Whether a claim may find something now (see "Claims" in backend/jobs/worker.py): each reason to claim — the
    # watcher waking a thread, a claim that found all it asked for, a lane at its cap (or the laned jobs together at
    # theirs) getting room, so that the due jobs claims skipped there are claimable — counts one in `_due_seq`; a
    # claim that found fewer jobs than it asked for has seen every reason counted before it began (`_seen_seq`).
    _due_seq: int
    _seen_seq: int
    _ready: deque[Job]  # claimed and booked, not started: waiting for a thread, or for room in their lane
    _waiting: set[str]  # the claims of the jobs in _ready

    # ---- the lane books --------------------------------------------------------------------------------
    def _cap(self, lane: str) -> int:
        return 1 if lane.startswith(SERIAL_LANE) else self.lane_cap

    def _lanes_at_cap(self) -> tuple[list[str], bool]:
        """The lanes a claim must skip (their jobs started and waiting at the lane's cap), and whether only jobs
        without a lane may be claimed (the laned jobs started hold the threads laned jobs may have)."""
        with self._cv:
            full = sorted(lane for lane in self._lanes.keys() | self._held() if self._lane_full(lane))
            only_unlaned = self._laned >= self.concurrency - self.unlaned_reserve  # the threads they hold
        return full, only_unlaned

    def _maybe_due(self) -> bool:
        """(caller holds self._cv) Whether a reason to claim came since the last claim that found fewer jobs than
        it asked for began."""
        return self._due_seq != self._seen_seq

    def _held(self) -> Counter[str]:
        """(caller holds self._cv) The jobs waiting in `_ready`, by lane."""
        return Counter(j.lane for j in self._ready if j.lane is not None)

    def _lane_full(self, lane: str) -> bool:
        """(caller holds self._cv) Whether a claim skips the lane: its jobs started and waiting are at its cap."""
        return self._lanes[lane] + self._held()[lane] >= self._cap(lane)

    def _book(self, job: Job, previous: str | None) -> bool:
        """(caller holds self._cv) A claimed job recorded in the books, waiting in `_ready` until a thread starts
        it (_next_ready); False when it took over a claim of this worker still running, which goes on under it
        (_keep_running)."""
        if previous is not None and previous in self._running:  # a claim of this worker, still running
            self._keep_running(previous, job)
            return False
        self._running[claim_of(job)] = job
        self._ready.append(job)
        self._waiting.add(claim_of(job))
        return True

    def _may_start(self, job: Job) -> bool:
        """(caller holds self._cv) Whether the job's lane, and the lanes together, have room for it."""
        if job.lane is None:
            return True
        return (
            self._lanes[job.lane] < self._cap(job.lane)
            and self._laned < self.concurrency - self.unlaned_reserve
        )

    def _next_ready(self) -> Job | None:
        """(caller holds self._cv) The oldest waiting job that may start now, counted in its lane from here on
        (None: none may). A job waits here past its thread's arrival only while its lane is at its cap: a claim of
        several jobs may bring more of one lane than the lane had room for; one of a `serial:` lane then starts
        after the one before it, as in the queue."""
        for job in self._ready:
            if self._may_start(job):
                self._ready.remove(job)
                self._waiting.discard(claim_of(job))
                if job.lane is not None:
                    self._lanes[job.lane] += 1
                    self._laned += 1
                return job
        return None

    def _startable(self) -> int:
        """(caller holds self._cv) How many waiting jobs could start now, each alone."""
        return sum(self._may_start(job) for job in self._ready)

    def _keep_running(self, twin: str, claimed: Job) -> None:
        """(caller holds self._cv) This worker claimed a job it is running already: the lease of that run
        (claim `twin`) expired before the heartbeat renewed it (a process starved of CPU or of the database).
        The run goes on under the new claim — its fenced writes now use it — instead of a second run of the
        same job beside the first."""
        running = self._running.pop(twin)
        running.locked_by, running.lease_until, running.attempts = (
            claimed.locked_by,
            claimed.lease_until,
            claimed.attempts,
        )
        self._running[claim_of(claimed)] = running
        self._lost.discard(twin)  # held again: its result is recorded after all
        if twin in self._recording:
            self._recording.discard(twin)
            self._recording.add(claim_of(claimed))
        self._cv.notify_all()  # a run waiting in _adopted goes on under the new claim
        log.warning(
            "job %s (%s): its lease expired while this worker was still running it (renewed too late: "
            "the process is overloaded); it runs on under the new claim, not a second time",
            claimed.id,
            claimed.kind,
        )

    def _release(self, job: Job, *, ran: bool = True) -> None:
        """A job's run is over (ran=False: a claimed job given back unrun): out of the books."""
        if job.locked_by is None:  # never claimed: not in the books
            return
        with self._cv:
            if job.locked_by in self._waiting:  # never started (given back): not counted in its lane
                self._waiting.discard(job.locked_by)
                if job in self._ready:
                    self._ready.remove(job)
                self._running.pop(job.locked_by, None)
            elif self._running.pop(job.locked_by, None) is not None and job.lane is not None:
                if self._lane_full(job.lane) or self._laned >= self.concurrency - self.unlaned_reserve:
                    self._due_seq += 1  # the due jobs claims skipped there are claimable
                self._lanes[job.lane] -= 1
                if self._lanes[job.lane] <= 0:
                    del self._lanes[job.lane]
                self._laned -= 1
            self._lost.discard(job.locked_by)
            self._recording.discard(job.locked_by)
            self.processed += ran

    # ---- leases ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _heartbeat(self) -> Iterator[None]:
        done = threading.Event()
        t = threading.Thread(target=self._beat, args=(done,), name="socialpub-lease", daemon=True)
        t.start()
        try:
            yield
        finally:
            done.set()
            t.join()

    def _beat(self, done: threading.Event) -> None:
        """Every lease / 3: renew the lease of every job this worker runs, in one UPDATE fenced by each claim's
        `locked_by`; a running claim not renewed has lost its job (reported, its result not recorded)."""
        try:
            while not done.wait(self.lease_s / 3):
                LATENESS.flush_due()  # the last minute of a burst's late posts, without waiting for another
                with self._cv:
                    running = dict(self._running)
                if not running:
                    continue
                try:
                    renewed = queue.renew_all(running, self.lease_s)
                except Exception:
                    log.exception("renewing the leases of %d running jobs failed", len(running))
                    continue
                for lock, job in running.items():
                    if job.id not in renewed:
                        self._check_lost(lock, job)
        finally:
            close_connection()

    def _check_lost(self, lock: str, job: Job) -> None:
        with self._cv:
            if lock not in self._running or lock in self._lost or lock in self._recording:
                return  # finished meanwhile, reported already, or being recorded (fenced: judged there)
        try:
            now = queue.holder(job.id)
        except Exception:
            log.exception("could not read job %s", job.id)
            return
        if now is not None and now[1] == lock:
            return  # its handler completed it (its own transaction), or it is being recorded right now
        if now is not None and now[1] is not None and now[1].rpartition("#")[0] == self.id:
            return  # this worker claimed it again (its renewal came too late): that claim adopts this run
        with self._cv:
            if lock not in self._running or lock in self._recording:
                return
            self._lost.add(lock)
        log.warning(
            "lost the lease on job %s (%s): %s; its result will not be recorded by this worker",
            job.id,
            job.kind,
            "the job is gone" if now is None else f"now {now[0]}, held by {now[1]}",
        )

    def _lease_lost(self, job: Job, result: str) -> None:
        """A fenced write of `result` changed nothing: unless this claim itself finished the job (its handler
        completed it in its own transaction), the lease was lost — say so once."""
        now = queue.holder(job.id)
        if now is not None and now[1] == job.locked_by and now[0] == "done":
            return
        with self._cv:
            reported = job.locked_by in self._lost
        if not reported:
            log.warning(
                "lost the lease on job %s (%s): %s; its result (%s) is not recorded",
                job.id,
                job.kind,
                "the job is gone" if now is None else f"now {now[0]}, held by {now[1]}",
                result,
            )

    def _fenced(self, job: Job, write: Callable[[], bool]) -> bool:
        """A fenced write of this claim (it changes the job only while `job.locked_by` holds it). When it changed
        nothing because this worker claimed the job again meanwhile (_keep_running moved the run to the new
        claim between the write's reading of `job.locked_by` and its statement), it is made again under the new
        claim: the run never loses its own job to itself (which would leave it held by a claim nobody runs, and
        the handler run a second time once that lease expired)."""
        while True:
            lock = job.locked_by
            if write():
                return True
            with self._cv:
                moved = job.locked_by != lock
            if not moved and not self._adopted(job, lock):
                return False

    def _fence(self, job: Job) -> fence.Fence:
        """The fence of one run (backend/networks/fence.py), installed while its handler runs: before a network
        write, and in the engine's transactions that record an attempt or an outcome, the job must still be
        held by this run's claim (the row the takeover writes), with half a lease left at least (renewed first
        when shorter: the heartbeat renews every third of a lease, so this is a read but for a starved process),
        or `need_s` when that is more. A claim this worker moved the run to (_keep_running) counts as held."""
        need_least = self.lease_s / 2  # (_answer: an answer is fresh as long as this is left)

        def check(need_s: float) -> fence.Held:
            until = None
            while until is None:
                lock = job.locked_by
                until = queue.hold(job, max(need_s, need_least), self.lease_s)
                if until is None:
                    with self._cv:
                        moved = job.locked_by != lock
                    if not moved and not self._adopted(job, lock):
                        raise fence.LeaseLost(f"job {job.id} ({job.kind}) is no longer held by {lock}")
            return self._answer(until)

        return check

    def _answer(self, until: datetime) -> fence.Held:
        """The fence's answer for a lease held until `until`: fresh while more than half a lease is left (the fence
        renews a shorter one when it asks the store)."""
        return fence.Held(until, until - timedelta(seconds=self.lease_s / 2))

    def claimed(self, job: Job) -> fence.Held | None:
        """The answer a run starts with: its claim's, which made it the holder until the lease's end it wrote."""
        return None if job.lease_until is None else self._answer(job.lease_until)

    def _adopted(self, job: Job, lock: str | None) -> bool:
        """A fenced step of the run under claim `lock` found the job held otherwise. When the holder is another
        claim of this worker — committed, its thread about to book it (_book -> _keep_running moves this run to
        it) — wait for that and say True: the step is made again under the new claim. Without this wait the run
        gave its job up, and the claim, booked after, found no run to adopt and ran the handler a second time.
        False: the job is another process's, or gone."""
        now = queue.holder(job.id)
        if now is None or now[1] is None or now[1] == lock or now[1].rpartition("#")[0] != self.id:
            return False
        with self._cv:
            if now[1] in self._running:  # booked already: this run's claim now, or a run of its own
                return job.locked_by != lock
            return self._cv.wait_for(lambda: job.locked_by != lock, timeout=ADOPT_WAIT_S)

    def _lost_already(self, job: Job) -> bool:
        """The handler is over: from here on its fenced writes judge the lease. True when the heartbeat found the
        lease lost while it ran (reported then): nothing is recorded."""
        with self._cv:
            self._recording.add(claim_of(job))
            return job.locked_by in self._lost


def close_connection() -> None:
    """A pool thread ends: close its database connection (peewee keeps one per thread)."""
    with contextlib.suppress(Exception):
        if not database.is_closed():
            database.close()
