"""The worker: a fixed pool of threads; each claims jobs with one atomic statement, runs one, records it.

Runs inside `socialpub serve`, alone as `socialpub worker` (any number of them on PostgreSQL), or once as
`socialpub tick` (cron). The same code path on SQLite and PostgreSQL.

The pool (SOCIALPUB_WORKER_CONCURRENCY, default 512). Each thread loops: take a due job (one another thread's
claim brought for it, or claim: backend/store/statements.claim_jobs), run its handler, record the result — `done`, queued again with
exponential backoff and jitter (backend/jobs/retry.py), or `dead` (then the kind's `on_dead` hook) — and claim
the next. Publishing jobs spend nearly all their time waiting on a network (hundreds of ms a call, several
calls a target), so threads are cheap and the pool is sized for waiting, not for cores: the jobs in flight must
cover throughput x wait. A burst of 2,000 posts x 5 networks at 300 ms a call (a video each: uploads, status
checks) is ~24 calls a post, 4.8 a target, ~14,400 thread-seconds of waiting: 256 threads cannot finish it in
less than ~56 s whatever the CPU, 512 in ~28 s, and the burst is then bound by the CPU. Measured (bench/burst.py,
three interleaved pairs, bench/results/burst_s14_pool.json): lateness p99 86.0 s with 256 threads, 78.3 s with 512,
the worker's CPU a target the same (6.2-6.5 ms); its peak memory 411 -> 651 MiB, its open files 813 -> 1,379 (the
operator raises the open-files limit to fit the pool: operator/openfiles.py); 1,024 threads did no better (p99
87.2 s, 7.1 ms a target, 1.0 GiB). Threads are started as the work needs them, up to
the bound: a quiet worker holds a few. On PostgreSQL every busy thread holds a connection (two while it calls
a sandbox network, whose tables have their own): size `max_connections` for workers x concurrency (+ the
API), or lower the setting — past it, claims and jobs fail with "too many clients" and are retried.
Idle threads do not poll the database: they wait on a condition; one watcher thread wakes one of them when a
job is enqueued in this process (queue.WAKE), when the next job falls due or a lease expires, and at least
every SOCIALPUB_WORKER_POLL_S (jobs enqueued by other processes); a thread that claims a job wakes (or
starts) the next. The condition that guards the counts is never held across a database statement, so a claim
waiting for SQLite's writer lock holds up neither a thread recording its result nor the heartbeat.

Claims (issue 34). Claims of one process are taken one at a time. A claim takes up to CLAIM_BATCH due jobs in
its one statement (a transaction, the queue's scan, the rows read: ~0.4 ms on SQLite, once for all of them), as
many as threads can start at once: the claiming thread's own, and one for each idle thread or thread the pool
may still start (the run of `tick` counts its threads the same way), and one more: a claim that found fewer jobs
than it asked for says that nothing else is due (`_maybe_due`), so a thread that finishes a job then goes idle
instead of making a claim that finds nothing — a write transaction for nothing, which was a third of the claims
under a burst — until the watcher wakes one (a job enqueued due at once, a due time reached, the poll) or a lane
at its cap gets room (a claim skipped its due jobs). The watcher wakes no thread for a job falling due in a lane at
its cap, nor for the lease of a job of this worker (the heartbeat renews it). The others wait in `_ready`, booked and leased like a running
job, and are taken by the threads the claim woke, or by any thread that becomes free first: a thread takes a
waiting job before it claims. Each job of a claim is locked by a lock of its own (the claim's name + "/" + the
job's id), so the fence, the heartbeat and takeovers see one claim per job, as before. A waiting job counts in
its lane's cap for the claims (a lane is skipped once its started and waiting jobs reach the cap), and starts only
while its lane has room: between reading the lane counts and booking the claim only releases change them, so a
claim's first job always may; a later one of a lane the first filled (or a second of a `serial:` lane) waits for
a job of its lane to end, then starts before anything newer. Jobs still waiting when the worker stops are given
back: queued again at their own due time, without the claim's attempt (queue.give_back).

Lanes (bulkhead). A job's `lane` is the network it calls (None: it calls none). One worker runs at most
ceil(concurrency x SOCIALPUB_WORKER_LANE_SHARE) jobs of one lane at once (default 0.25: 128 of 512 threads):
the claim skips lanes at their cap. So a network slowed to seconds per call can hold only a quarter of the
threads, and the other networks keep three quarters — about what they use anyway while all five share the
pool (each network's share of the work is ~1/5), so their lateness moves by ~10 %, not by the slow network's
factor (2,000 jobs of 5 lanes at 300 ms a call, one lane at 5 s: the other lanes' p99 +0-9 % with the cap,
x2.8 without). Jobs without a lane are never skipped by the cap, and laned jobs together leave them at least
max(1, concurrency / 32) threads, so housekeeping and deliveries run even when every network is slow.
A lane named `serial:…` runs one job at a time in a worker, oldest due first: a webhook endpoint's deliveries
(one lane per endpoint) go out in the order their events were made.

Leases (SOCIALPUB_JOB_LEASE_S, default 10 s). A claim holds its job until `lease_until`; a heartbeat thread
renews the lease of every job this worker runs every lease / 3 (one UPDATE for all, fenced by each claim's
`locked_by`), so a job runs as long as it needs while its worker lives, and a dead worker's jobs are claimable
again at most one lease after its last renewal (< 15 s). Taking over an expired lease is logged at INFO with
the previous holder; a worker that took over one of its own claims still running (its renewal came too late)
lets that run go on under the new claim rather than run the job twice, and says so at WARNING. Every result is
fenced by the claim (queue._mine): a worker that lost a job's lease logs a WARNING with the job's id and kind
and records nothing for it (its new holder does). So is every network write the job makes and every outcome
the engine records for it (issue 30): the worker installs the job's fence (backend/networks/fence.py, checked
by the adapters' send path) around its handler, so a worker frozen past its lease (SIGSTOP, a GC pause, a frozen
VM) makes no further call when it resumes. A fenced write that failed because this worker re-claimed the job
meanwhile (_keep_running) is made again under the new claim (_fenced); one that finds the job held by such a claim
committed but not booked yet waits for the booking to move the run there (_adopted), never giving the job up to a
second run of its own.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import socket
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from backend import clock, queue
from backend.config import Settings
from backend.jobs.leases import LeaseBooks, close_connection
from backend.jobs.registry import HANDLERS, ON_DEAD, PERIODIC, JobContext, load_handlers
from backend.networks import fence
from backend.queue.backoff import PermanentJobError, RetryLater, RetryStrategy
from backend.schemas.statuses import JobStatus
from backend.store.db import (
    STEPS,
    database,
    init_database,
    is_sqlite,
    local_store,
    pg_connection_room,
    store_busy,
    tx,
)
from backend.store.models import Job

log = logging.getLogger("socialpub.worker")

CLAIM_ERROR_PAUSE_S = 0.5  # after a failed claim (e.g. the database unreachable), before the next one
CLAIM_ERROR_LOG_S = 60.0  # a failing claim is logged (with its traceback) at most this often
STORE_BUSY_RETRY_S = (
    1.0  # a job that met the store locked past its busy timeout (a frozen process held it) runs again
)
WATCH_RECHECK_S = 0.1  # the watcher reads the next due times at most this often (see Worker._watch)
WATCH_AHEAD = 64  # due times one read of the watcher brings (it wakes a thread at each without reading again)
CLAIM_BATCH = 8  # the most jobs one claim takes (see Claims)


class Worker(LeaseBooks):
    def __init__(self, settings: Settings, *, name: str = "worker", concurrency: int | None = None) -> None:
        self.settings = settings
        self.host = socket.gethostname()[:24].replace(":", "-")
        self.id = f"{name}:{self.host}:{os.getpid()}:{id(self) & 0xFFFF:x}"
        self.concurrency = max(1, concurrency or settings.worker_concurrency)
        self.lane_cap = max(1, math.ceil(self.concurrency * settings.worker_lane_share))
        self.unlaned_reserve = max(1, self.concurrency // 32) if self.concurrency > 1 else 0
        self.lease_s = settings.job_lease_s
        self.strategy = RetryStrategy(base_s=settings.retry_base_s, max_attempts=settings.retry_max_attempts)
        self.processed = 0
        self._stop = threading.Event()
        self._cv = threading.Condition()  # guards the books below (held briefly); idle threads wait on it
        self._claiming = threading.Lock()  # one claim of this process at a time (not held with self._cv)
        self._running: dict[str, Job] = {}  # locked_by of each claim this worker runs -> its job
        self._ready: deque[Job] = deque()  # claimed and booked, not started (see Claims)
        self._waiting: set[str] = set()
        self._lanes: Counter[str] = Counter()
        self._laned = 0
        self._lost: set[str] = set()  # claims the heartbeat found lost (reported once, result not recorded)
        self._recording: set[str] = (
            set()
        )  # claims whose handler returned: their fenced writes judge the lease
        self._seq = itertools.count(1)
        self._claim_error_at = -CLAIM_ERROR_LOG_S  # when a failed claim was last logged (time.monotonic())
        self._fatal: BaseException | None = (
            None  # a BaseException that ended a tick() thread, raised by tick()
        )
        self._thread: threading.Thread | None = None
        self._pool: list[threading.Thread] = []  # run_forever's job threads
        self._idle = 0  # of which waiting to be woken
        self._due_seq, self._seen_seq = 1, 0  # see LeaseBooks: a claim is worth making at the start
        # The job handlers (the publishing engine, the networks, the media pipeline: ~100-150 ms of imports) are
        # loaded by whatever runs jobs (run_forever, tick, ensure_periodic), so that a worker started in a thread
        # imports them in that thread rather than in its creator's.

    # ---- lifecycle ---------------------------------------------------------------------------------
    def start_thread(self) -> None:
        self._thread = threading.Thread(target=self.run_forever, name=f"socialpub-{self.id}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        queue.WAKE.set()
        with self._cv:
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def release_dead_holders(self) -> int:
        """Start-up recovery: jobs held by a process of this host that no longer exists (killed) are taken over
        at once, not after the rest of its lease. SQLite only: its database is a local file, so every worker
        sharing it runs on this machine; on PostgreSQL workers may run on machines whose host names collide, and
        the lease decides. Returns how many were released."""
        if not is_sqlite():
            return 0
        released = queue.release_dead_holders(self.host, pid_alive)
        for job_id, kind, holder in released:
            log.warning("job %s (%s): its worker %s is gone (killed): taken over now", job_id, kind, holder)
        return len(released)

    def check_connections(self) -> bool:
        """PostgreSQL: each job thread holds a connection of its own, two while it calls a sandbox network (the
        sandbox's tables live in the same database), plus the watcher's and the heartbeat's. When the server has
        fewer free connections than this pool may take, say so at start-up: otherwise jobs fail with "too many
        clients already" only once the pool has grown under load. Returns False when it warned. Called by the
        commands whose purpose the worker is (`socialpub worker`, `serve`); an embedded command's worker runs a
        few jobs and stops, and its stderr is the command's (JSON errors under --json)."""
        init_database(self.settings)
        if is_sqlite():
            return True
        limit, used = pg_connection_room()
        need = 2 * self.concurrency + 2
        if used + need <= limit:
            return True
        log.warning(
            "worker %s: up to %d threads may open up to %d connections to PostgreSQL (one a thread, two while "
            "calling a sandbox network), and the server allows %d with %d in use: lower "
            "SOCIALPUB_WORKER_CONCURRENCY (`socialpub worker --concurrency N`) or raise max_connections",
            self.id,
            self.concurrency,
            need,
            limit,
            used,
        )
        return False

    def ensure_periodic(self) -> None:
        load_handlers()
        now = clock.now()
        for p in PERIODIC.values():
            queue.ensure(p.kind, f"periodic:{p.kind}", now)

    # ---- loops -------------------------------------------------------------------------------------
    def run_forever(self) -> None:
        """The pool until stop(): up to `concurrency` job threads (started as work needs them: a quiet worker
        holds a few), the watcher (this thread), the heartbeat."""
        load_handlers()
        init_database(self.settings)
        self.release_dead_holders()
        self.ensure_periodic()
        log.info(
            "worker %s started: up to %d threads, at most %d per lane, lease %g s",
            self.id,
            self.concurrency,
            self.lane_cap,
            self.lease_s,
        )
        self._log_steps("started")
        with self._heartbeat():
            with self._cv:
                self._start_pool_thread()
            try:
                self._watch()
            finally:
                with self._cv:
                    self._cv.notify_all()
                    threads = list(self._pool)
                for t in threads:
                    t.join()
                self._give_back_ready()
        if not database.is_closed():
            database.close()
        log.info("worker %s stopped", self.id)
        self._log_steps("stopped")

    def _log_steps(self, when: str) -> None:
        """The process's counts so far (SOCIALPUB_COUNT_STEPS), one line that bench/burst.py reads."""
        if STEPS.enabled:
            log.info("worker %s %s; steps so far: %s", self.id, when, json.dumps(STEPS.snapshot()))

    def _start_pool_thread(self) -> None:
        """(caller holds self._cv) One more thread in the pool, up to `concurrency`."""
        if len(self._pool) >= self.concurrency:
            return
        t = threading.Thread(target=self._serve, name=f"socialpub-job-{len(self._pool)}", daemon=True)
        self._pool.append(t)
        t.start()

    def tick(self, *, deadline: float | None = None) -> int:
        """One round: claim what is due now and run it to completion (on up to `concurrency` threads, started as
        claims succeed), including jobs that fall due while it runs. Returns the jobs run. `deadline`
        (time.monotonic()): claim nothing after it."""
        load_handlers()
        init_database(self.settings)
        before = self.processed
        threads: list[threading.Thread] = []
        with self._heartbeat():
            self._spawn_round_thread(threads, deadline)
            while True:
                with self._cv:
                    pending = [t for t in threads if t.is_alive()]
                if not pending:
                    break
                for t in pending:
                    t.join()
            self._give_back_ready()  # claimed for threads that ended at the deadline
        with self._cv:
            fatal, self._fatal = self._fatal, None
        if fatal is not None:
            raise fatal  # e.g. KeyboardInterrupt in a job: its claim is left to expire, as if the process died
        return self.processed - before

    def run_until_idle(self, max_seconds: float = 60.0, settle_s: float = 0.0) -> int:
        """Cron form: run everything due now; then keep going while jobs come due within `settle_s`
        (confirmations being tracked, expired leases), bounded by `max_seconds`. Returns jobs run."""
        init_database(self.settings)
        self.release_dead_holders()
        self.ensure_periodic()
        deadline = time.monotonic() + max_seconds
        total = 0
        while time.monotonic() < deadline and not self._stop.is_set():
            ran = self.tick(deadline=deadline)
            total += ran
            if ran:
                continue
            due = queue.next_due_in()
            if due is None or due > settle_s or self._only_periodic_due_soon(settle_s):
                break
            time.sleep(min(due, max(0.0, deadline - time.monotonic()), 1.0) + 0.01)
        return total

    def _only_periodic_due_soon(self, horizon_s: float) -> bool:
        limit = clock.now() + timedelta(seconds=horizon_s)
        due = (Job.status == JobStatus.QUEUED) & (Job.run_at <= limit)
        expired = (Job.status == JobStatus.RUNNING) & (Job.lease_until <= limit)
        not_periodic = Job.dedupe_key.is_null() | ~(Job.dedupe_key.startswith("periodic:"))
        q = Job.select(Job.id).where((due | expired) & not_periodic).limit(1)
        return not q.exists()

    def _serve(self) -> None:
        """One thread of the pool: take a job, run it, repeat. A job waiting for a thread first; else a claim, unless
        the last claim found fewer jobs than it asked for and no reason to claim has come since (`_maybe_due`: a
        claim that finds nothing is a write transaction for nothing; issue 34). Otherwise the thread waits on the
        condition until there is one (the watcher, a thread that found work or gave a full lane room), so idle
        threads neither poll the database nor hold a connection. A thread that found work wakes an idle thread,
        or starts one when none is idle (the pool grows to `concurrency` as the work needs)."""
        busy = False  # ran a job since it last went idle (it holds a connection)
        try:
            while not self._stop.is_set():
                job = self._claim_or_pause(self._pool_room, self._pool_dispatch, lazy=True)
                if job is not None:
                    busy = True
                    self._run(job)
                    continue
                if busy:
                    close_connection()  # going idle (PostgreSQL: one connection a thread)
                    busy = False
                with self._cv:
                    while not self._stop.is_set() and not (self._startable() or self._maybe_due()):
                        self._idle += 1
                        try:
                            self._cv.wait()
                        finally:
                            self._idle -= 1
        finally:
            close_connection()

    def _pool_room(self) -> int:
        """(caller holds self._cv) How many threads of the pool could start a job at once besides the claiming
        one: the idle ones and those the pool may still start."""
        return self._idle + self.concurrency - len(self._pool)

    def _pool_dispatch(self, waiting: int, more: bool) -> None:
        """(caller holds self._cv) A claim brought work: a thread for each job left waiting, and, when the claim
        found all it asked for (more may be due), one more that looks for further work — an idle one woken, else
        a new one, up to `concurrency`. A claim that found fewer wakes none for nothing: a claim that finds nothing
        is a write transaction for nothing. A thread started here claims at once when there is a reason to."""
        need = waiting + more
        wake = min(self._idle, need)
        if wake:
            self._cv.notify(wake)
        for _ in range(need - wake):
            self._start_pool_thread()

    def _spawn_round_thread(self, threads: list[threading.Thread], deadline: float | None) -> None:
        t = threading.Thread(target=self._round, args=(threads, deadline), name="socialpub-tick", daemon=True)
        threads.append(t)
        t.start()

    def _round(self, threads: list[threading.Thread], deadline: float | None) -> None:
        """A thread of tick(): claim and run until nothing is claimable; a claim starts a thread for each job it
        left waiting, and one more when it found all it asked for, while the round has fewer than `concurrency`
        running."""

        def room() -> int:  # (self._cv held) threads the round may still start
            return self.concurrency - sum(t.is_alive() for t in threads)

        def dispatch(waiting: int, more: bool) -> None:
            """(self._cv held) A thread for each job left waiting, and one more when more may be due."""
            for _ in range(min(waiting + more, room())):
                self._spawn_round_thread(threads, deadline)

        try:
            while not self._stop.is_set() and (deadline is None or time.monotonic() < deadline):
                with self._cv:
                    if self._fatal is not None:
                        return
                job = self._claim_or_pause(room, dispatch)
                if job is None:
                    return
                self._run(job)
        except (
            BaseException
        ) as exc:  # not an error of a job (those are recorded): the round ends, tick raises it
            with self._cv:
                self._fatal = self._fatal or exc
        finally:
            close_connection()

    def _watch(self) -> None:
        """Wake one idle thread when a job is enqueued in this process, when the next job falls due or a lease
        expires, and at least every worker_poll_s (jobs enqueued by other processes).

        The next due times are a query (queue.next_changes_in, two statements): read at most every
        WATCH_RECHECK_S, whatever wakes the watcher. Under a burst every commit that enqueues (each post's targets,
        each follow-up) wakes it, and reading at each wake-up cost ~8 % of the worker's CPU; and thousands of
        follow-ups falling due a few milliseconds apart (tracking jobs) made it read again at each of their due
        times, 45-80 times a second (issue 34). So one read brings the next WATCH_AHEAD due times (and the
        first lease expiry), and the watcher wakes a thread at each of them without reading again. It reads again
        when woken by an enqueue, when the times it read have all been reached, and every worker_poll_s (jobs
        enqueued by other processes) — never twice within WATCH_RECHECK_S. A read at the poll, or once the times
        read before are all reached, wakes a thread (for what fell due meanwhile without a wake: the read leaves out
        what is claimable already); a read for an enqueue does not (a job enqueued due at once woke one already:
        queue.DUE). A job enqueued to fall due later is claimed at most WATCH_RECHECK_S after its time. No thread is
        woken for a job falling due in a lane at its cap (a claim would skip it: the thread that gives the lane
        room claims next), nor for a lease of this worker's own (queue.next_changes_in leaves them out)."""
        poll = self.settings.worker_poll_s
        read_at = -math.inf  # time.monotonic() of the last read
        times: list[tuple[float, str | None]] = []  # the due times that read brought (monotonic), and lanes
        more = False  # that read brought times (within worker_poll_s): read again once they are all reached
        ends = 0.0  # the read's end: worker_poll_s after it
        stale = True  # woken by an enqueue since the read
        while not self._stop.is_set():
            now = time.monotonic()
            unseen = now >= ends or (more and not times)  # jobs may have fallen due with no thread woken
            read_due = stale or unseen
            if read_due and now - read_at >= WATCH_RECHECK_S:
                try:
                    # jobs claimable now are left out: an idle thread was woken for them already (or their lane is
                    # at its cap, and the thread that frees the lane claims next), so the watcher never spins on them
                    changes = queue.next_changes_in(self.id, limit=WATCH_AHEAD)
                except Exception:
                    log.exception("could not read the next due time")
                    changes = []
                read_at, stale, ends = now, False, now + poll
                times = [(now + c.in_s, c.lane) for c in changes if c.in_s < poll]
                more, read_due = bool(times), False
                if unseen:
                    self._wake_one()
            deadline = read_at + WATCH_RECHECK_S if read_due else min(times[0][0], ends) if times else ends
            woken = queue.WAKE.wait(max(0.0, deadline - now))
            queue.WAKE.clear()
            due = (
                queue.DUE.is_set()
            )  # a job due at once among those enqueued (a later one waits for its time)
            queue.DUE.clear()
            now = time.monotonic()
            reached: list[str | None] = []
            while times and times[0][0] <= now:
                reached.append(times.pop(0)[1])
            if due or (reached and self._claimable(reached)):
                self._wake_one()
            if woken:
                stale = True

    def _claimable(self, lanes: list[str | None]) -> bool:
        """Whether a job of one of these lanes may be claimed now (None: no lane): one is not at its cap."""
        with self._cv:
            return any(lane is None or not self._lane_full(lane) for lane in lanes)

    def _wake_one(self) -> None:
        """A reason to claim: an idle thread woken for it (none idle: the next thread to finish its job claims)."""
        with self._cv:
            self._due_seq += 1
            if self._idle:
                self._cv.notify()

    # ---- the claim -----------------------------------------------------------------------------------
    def _claim_or_pause(
        self, room: Callable[[], int], dispatch: Callable[[int, bool], None], *, lazy: bool = False
    ) -> Job | None:
        """The next job for this thread: one waiting in `_ready`, else one of a claim of its own (see Claims:
        `room()` threads could start the others at once; `dispatch(n, more)` gets them going once n are left
        waiting, and another thread looking for more when the claim found all it asked for). `lazy` (the pool):
        no claim while nothing may be due (`_maybe_due`), such as when a claim this thread waited behind found
        fewer than it asked for.
        On a database error log it, pause, and report nothing. Claims of this process are taken one at a time
        (self._claiming), so the lane counts they read stay exact; self._cv is held only to read and update the
        books, never across the statement: a claim waiting for the database (SQLite's writer lock under a burst)
        holds up no thread that is recording a result or renewing leases. All three run with self._cv held."""
        with self._cv:
            job = self._next_ready()
        if job is not None:
            return job
        try:
            with self._claiming:
                with self._cv:
                    job = self._next_ready()  # brought by the claim this thread waited behind
                    if job is not None or (lazy and not self._maybe_due()):
                        return job
                    limit = min(CLAIM_BATCH, 2 + max(0, room()))  # one ahead: see Claims
                    begun = self._due_seq
                job, more = self._claim(limit, begun)
                if job is not None:
                    with self._cv:
                        dispatch(self._startable(), more)
                return job
        except Exception as exc:
            now = time.monotonic()
            if (
                now - self._claim_error_at >= CLAIM_ERROR_LOG_S
            ):  # with its traceback; then once a minute at most
                self._claim_error_at = now
                log.exception(
                    "claiming a job failed (retrying; the same error is logged at most once a minute)"
                )
            else:
                log.debug("claiming a job failed again: %s", exc)
            self._stop.wait(CLAIM_ERROR_PAUSE_S)
            return None

    def _claim(self, limit: int, begun: int) -> tuple[Job | None, bool]:
        """(caller holds self._claiming) Claim up to `limit` jobs: the first that may start is returned, the
        others wait in `_ready`. Between reading the books and recording the claim in them only releases can change them
        (counts go down): the caps read are never exceeded by a claim's first job; a later one that would pass
        its lane's cap waits in `_ready` for room (see Claims). Also says whether more may be due: the claim found
        as many as it asked for (a reason to claim again); otherwise it has seen the reasons to claim counted before
        it began (`begun`, see LeaseBooks._maybe_due)."""
        full, only_unlaned = self._lanes_at_cap()
        lock = f"{self.id}#{next(self._seq)}"
        jobs = queue.claim(
            lock, limit=limit, lease_s=self.lease_s, skip_lanes=full, only_unlaned=only_unlaned
        )
        more = len(jobs) >= limit
        taken_over: list[tuple[Job, str]] = []
        with self._cv:
            for job in jobs:
                previous = queue.taken_over_from(job)  # the claim it took over from an expired lease, if any
                if self._book(job, previous) and previous is not None:
                    taken_over.append((job, previous))
            if more:
                self._due_seq += 1
            else:
                self._seen_seq = max(self._seen_seq, begun)
            first = self._next_ready()
        for job, previous in taken_over:
            log.info(
                "job %s (%s) taken over from %s, whose lease had expired (attempt %d of %d)",
                job.id,
                job.kind,
                previous,
                job.attempts,
                job.max_attempts,
            )
        return first, more

    def _give_back(self, job: Job) -> None:
        """A claimed job not run: queued again as it was (queue.give_back), out of the books."""
        try:
            if not queue.give_back(job):  # fenced: lost meanwhile (taken over): its holder runs it
                log.info(
                    "job %s (%s): given back unrun, it was held by another claim already", job.id, job.kind
                )
        except Exception:  # its lease expires and it is taken over
            log.exception("job %s (%s): giving it back failed", job.id, job.kind)
        finally:
            self._release(job, ran=False)

    def _give_back_ready(self) -> None:
        """The worker stops: the jobs still waiting for a thread are given back."""
        with self._cv:
            waiting = list(self._ready)
        for job in waiting:
            self._give_back(job)

    # ---- one job -----------------------------------------------------------------------------------
    def _run(self, job: Job) -> None:
        try:
            self._execute(job, JobContext(self.settings, self.id))
        except Exception:  # recording the result failed: the lease expires and the job is taken over
            log.exception("job %s (%s): recording its result failed", job.id, job.kind)
        finally:
            self._release(job)

    def _execute(self, job: Job, ctx: JobContext) -> None:
        periodic = PERIODIC.get(job.kind) if (job.dedupe_key or "").startswith("periodic:") else None
        handler = HANDLERS.get(job.kind)
        if periodic is None and handler is None:
            if queue.bury(job, f"no handler for job kind {job.kind!r} in this version"):
                log.error("job %s: no handler for kind %s", job.id, job.kind)
            return
        try:
            with fence.installed(self._fence(job), held=self.claimed(job), local=local_store):
                if periodic is not None:
                    periodic.fn(ctx)
                elif handler is not None:
                    handler(job, ctx)
        except Exception as exc:
            if isinstance(exc, fence.LeaseLost):
                if self._lost_already(job):  # the heartbeat reported the loss: say what the fence did, once
                    log.info(
                        "job %s (%s): it stopped before its next network call or write", job.id, job.kind
                    )
                else:
                    self._lease_lost(job, "none: it stopped before its next network call or write")
                return
            if self._lost_already(job):
                return
            if periodic is not None and not isinstance(exc, RetryLater | PermanentJobError):
                err = f"{type(exc).__name__}: {exc}"
                log.error("job %s (%s) failed: %s\n%s", job.id, job.kind, err, traceback.format_exc(limit=5))
                self._reschedule_periodic(job, periodic.every_s, err)
                return
            self._failed(job, exc)
            return
        if self._lost_already(job):
            return
        if periodic is not None:
            self._reschedule_periodic(job, periodic.every_s, None)
        elif job.status != JobStatus.DONE and not self._fenced(job, lambda: queue.complete(job)):
            self._lease_lost(job, "done")  # (done already: its handler completed it)

    def _failed(self, job: Job, exc: BaseException) -> None:
        """A handler raised: retry with backoff, or bury (then its kind's on_dead hook)."""
        if isinstance(exc, RetryLater):
            if exc.count_attempt and job.attempts >= job.max_attempts:
                self._bury(job, f"gave up after {job.attempts} attempts: {exc}")
                return
            delay = exc.delay_s if exc.delay_s is not None else self.strategy.delay_for(job.attempts)
            if not self._fenced(
                job, lambda: queue.retry(job, delay, str(exc), count_attempt=exc.count_attempt)
            ):
                self._lease_lost(job, "retry")
            return
        if store_busy(
            exc
        ):  # a wait on the store, not the job's failure: soon again, not counted as an attempt
            err = f"{type(exc).__name__}: {exc}"
            log.warning(
                "job %s (%s): the database stayed locked by another process past the busy timeout; "
                "tried again in %g s (not counted as an attempt)",
                job.id,
                job.kind,
                STORE_BUSY_RETRY_S,
            )
            if not self._fenced(job, lambda: queue.retry(job, STORE_BUSY_RETRY_S, err, count_attempt=False)):
                self._lease_lost(job, "retry")
            return
        if isinstance(exc, PermanentJobError):
            self._bury(job, str(exc))
            log.warning("job %s (%s) failed permanently: %s", job.id, job.kind, exc)
            return
        err = f"{type(exc).__name__}: {exc}"
        log.error(
            "job %s (%s) attempt %d failed: %s\n%s",
            job.id,
            job.kind,
            job.attempts,
            err,
            "".join(traceback.format_exception(exc, limit=5)),
        )
        decision = self.strategy.decide(job.attempts)
        if decision.retry and job.attempts < job.max_attempts:
            log.info(
                "job %s (%s) will be retried in %.1f s (attempt %d of %d failed)",
                job.id,
                job.kind,
                decision.delay_s,
                job.attempts,
                job.max_attempts,
            )
            if not self._fenced(job, lambda: queue.retry(job, decision.delay_s, err)):
                self._lease_lost(job, "retry")
        else:
            self._bury(job, f"gave up after {job.attempts} attempts: {err}")

    def _bury(self, job: Job, error: str) -> None:
        """The job `dead` and its kind's on_dead hook in ONE transaction: a crash between the two can never leave
        a job dead while what it was moving (a target) stays open. A failing hook is rolled back alone (its
        savepoint) and logged; the job is still buried."""
        hook = ON_DEAD.get(job.kind)
        with tx():
            if not self._fenced(job, lambda: queue.bury(job, error)):
                lost = True
            else:
                lost = False
                if hook is not None:
                    try:
                        with database.atomic():  # a savepoint
                            hook(job, error)
                    except Exception:
                        log.exception("on_dead hook of %s failed for job %s", job.kind, job.id)
        if lost:
            self._lease_lost(job, "dead")

    def _reschedule_periodic(self, job: Job, every_s: float, error: str | None) -> None:
        if not self._fenced(job, lambda: queue.retry(job, every_s, error, count_attempt=False)):
            self._lease_lost(job, "rescheduled")


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (signal 0 checks without sending anything). A zombie — a
    killed process its parent has not reaped yet — holds nothing and counts as gone: `serve`'s worker, killed with
    the server, is reparented to the container's init, which may take seconds to reap it (or never, without one),
    and its jobs would wait out their leases meanwhile."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc (macOS): signal 0 decides
        return True
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")  # the state follows the command's name
    return True
