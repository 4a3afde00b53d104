"""The worker: claims due jobs, runs their handlers, renews leases, retries with backoff, runs periodic jobs.

Runs inside `socialpub serve`, alone as `socialpub worker`, or once as `socialpub tick` (cron).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from backend import clock
from backend.config import Settings
from backend.jobs import queue
from backend.jobs.registry import (
    BATCH_HANDLERS,
    HANDLERS,
    ON_DEAD,
    PERIODIC,
    PermanentJobError,
    RetryLater,
    load_handlers,
)
from backend.jobs.retry import RetryStrategy
from backend.store.db import database, init_database, is_sqlite
from backend.store.models import Job

log = logging.getLogger("socialpub.worker")

# Batch "busyness" (jobs' CPU time / the batch's wall time) at or above which the next batches run one job at a
# time, and below which they go back to the threads (see Worker._observe).
BUSY_SEQUENTIAL = 0.8
BUSY_THREADS = 0.5
GROUP_SIZE = 8  # jobs given to a batch handler at once
WAIT_CHECK_S = 0.5  # jobs run one at a time for longer than this while mostly waiting: the rest go to the threads


@dataclass
class JobContext:
    settings: Settings
    worker_id: str
    job: Job | None = None
    lease_s: float = 60.0
    extra: dict = field(default_factory=dict)

    def now(self) -> datetime:
        return clock.now()

    def renew(self) -> bool:
        return self.job is not None and queue.renew(self.job, self.lease_s)


class Worker:
    def __init__(self, settings: Settings, *, name: str = "worker", concurrency: int = 4, batch: int = 32) -> None:
        self.settings = settings
        self.id = f"{name}:{socket.gethostname()}:{os.getpid()}:{id(self) & 0xFFFF:x}"
        self.concurrency = max(1, concurrency)
        self.batch = batch
        self.lease_s = settings.job_lease_s
        self.strategy = RetryStrategy(base_s=settings.retry_base_s, max_attempts=settings.retry_max_attempts)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._inflight: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.processed = 0
        self._cpu_s = 0.0  # CPU time used by jobs (all threads), for _observe
        self._threads_help = True
        load_handlers()

    # ---- lifecycle ---------------------------------------------------------------------------------
    def start_thread(self) -> None:
        self._thread = threading.Thread(target=self.run_forever, name=f"socialpub-{self.id}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        queue.WAKE.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def ensure_periodic(self) -> None:
        now = clock.now()
        for p in PERIODIC.values():
            queue.ensure(p.kind, f"periodic:{p.kind}", now)

    # ---- loops -------------------------------------------------------------------------------------
    def run_forever(self) -> None:
        init_database(self.settings)
        self.ensure_periodic()
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="socialpub-job")
        heartbeat = threading.Thread(target=self._heartbeat, daemon=True, name="socialpub-lease")
        heartbeat.start()
        log.info("worker %s started (concurrency %d)", self.id, self.concurrency)
        try:
            while not self._stop.is_set():
                try:
                    ran = self.run_batch()
                except Exception:  # never die silently: log and keep going
                    log.exception("worker loop error")
                    ran = 0
                if ran:
                    continue
                wait = self.settings.worker_poll_s
                try:
                    due = queue.next_due_in()
                    if due is not None:
                        wait = min(wait, due)
                except Exception:
                    log.exception("could not read the next due time")
                queue.WAKE.wait(max(0.0, wait))
                queue.WAKE.clear()
        finally:
            self._pool.shutdown(wait=True)
            if not database.is_closed():
                database.close()
            log.info("worker %s stopped", self.id)

    def run_batch(self) -> int:
        jobs = queue.claim(self.id, limit=self.batch, lease_s=self.lease_s)
        if not jobs:
            return 0
        with self._lock:  # the heartbeat renews their leases from the claim on, not only once each starts
            for job in jobs:
                self._inflight[job.id] = job
        started = time.perf_counter()
        cpu_before = self._cpu_s
        try:
            if self._pool is None or self.concurrency == 1 or len(jobs) == 1 or not self._threads_help:
                self._run_one_at_a_time(jobs)
            else:
                list(self._pool.map(self._execute_if_mine, jobs))
        finally:
            with self._lock:
                for job in jobs:
                    self._inflight.pop(job.id, None)
        self._observe(len(jobs), self._cpu_s - cpu_before, time.perf_counter() - started)
        return len(jobs)

    def _still_mine(self, job: Job) -> bool:
        """Before a claimed job starts: its lease must have time left (the heartbeat renews it; a stalled process
        may have let it lapse, and another worker may have reclaimed it). With under half the lease left, a
        fenced renew decides; a job lost that way is skipped (its new holder runs it)."""
        until = job.lease_until
        if until is not None and (until - clock.now()).total_seconds() > self.lease_s / 2:
            return True
        if queue.renew(job, self.lease_s):
            return True
        log.warning("job %s (%s) was reclaimed by another worker before it started here: skipped", job.id, job.kind)
        with self._lock:
            self._inflight.pop(job.id, None)
        return False

    def _run_one_at_a_time(self, jobs: list[Job]) -> None:
        """Jobs in this thread; those of a kind with a batch handler (BATCH_HANDLERS) go to it together, at most
        GROUP_SIZE at a time. If the jobs turn out to wait (e.g. live networks after sandbox ones), the rest of
        the batch goes to the threads at once instead of waiting its turn here."""
        started, cpu_before = time.perf_counter(), self._cpu_s
        units: list[list[Job]] = []
        groups: dict[str, list[Job]] = {}
        # On PostgreSQL each job keeps its own transactions: a group's transaction would hold several posts'
        # row locks at once, which other workers may take in another order (deadlocks). SQLite has one writer.
        grouping = is_sqlite()
        for job in jobs:
            if grouping and job.kind in BATCH_HANDLERS and not (job.dedupe_key or "").startswith("periodic:"):
                group = groups.setdefault(job.kind, [])
                if not group:
                    units.append(group)
                group.append(job)
                if len(group) >= GROUP_SIZE:
                    del groups[job.kind]
            else:
                units.append([job])
        for i, unit in enumerate(units):
            unit = [job for job in unit if self._still_mine(job)]
            if len(unit) == 1:
                self.execute(unit[0])
            elif unit:
                self.execute_group(unit[0].kind, unit)
            wall = time.perf_counter() - started
            rest = [j for u in units[i + 1:] for j in u]
            if rest and self._pool is not None and self.concurrency > 1 and wall > WAIT_CHECK_S \
                    and (self._cpu_s - cpu_before) / wall < BUSY_THREADS:
                self._threads_help = True
                list(self._pool.map(self._execute_if_mine, rest))
                return

    def _execute_if_mine(self, job: Job) -> None:
        if self._still_mine(job):
            self.execute(job)

    def execute_group(self, kind: str, jobs: list[Job]) -> None:
        """Several jobs of one kind through its batch handler; each job's outcome handled as in `execute`."""
        ctx = JobContext(self.settings, self.id, None, self.lease_s)
        with self._lock:
            for job in jobs:
                self._inflight[job.id] = job
        cpu = time.thread_time()
        try:
            try:
                results = BATCH_HANDLERS[kind](jobs, ctx)
            except Exception as exc:  # the batch as a whole failed (e.g. its commit): every job handles it
                log.exception("batch of %d %s jobs failed", len(jobs), kind)
                results = {job.id: (exc, False) for job in jobs}
            for job in jobs:
                exc, completed = results.get(job.id, (None, False))
                self._after(job, exc, completed)
        finally:
            used = time.thread_time() - cpu
            with self._lock:
                for job in jobs:
                    self._inflight.pop(job.id, None)
                self._cpu_s += used
            self.processed += len(jobs)

    def _observe(self, n_jobs: int, cpu_s: float, wall_s: float) -> None:
        """Job threads exist to overlap waits on the networks. When the jobs keep the process busy on their own
        (the CPU time they use is about the batch's wall time: in-process sandbox networks, no waits), more
        threads add only contention (one GIL, one SQLite writer): such batches run one job at a time. Batches
        whose jobs wait (live networks) use the threads. Judged on batches of several jobs, with hysteresis."""
        if n_jobs < 4 or wall_s <= 0:
            return
        busy = cpu_s / wall_s
        if self._threads_help and busy >= BUSY_SEQUENTIAL:
            self._threads_help = False
            log.debug("jobs keep the worker busy (%.2f): running them one at a time", busy)
        elif not self._threads_help and busy < BUSY_THREADS:
            self._threads_help = True
            log.debug("jobs wait (busy %.2f): running them on %d threads", busy, self.concurrency)

    def run_until_idle(self, max_seconds: float = 60.0, settle_s: float = 0.0) -> int:
        """Cron form: run everything due now; then keep going while jobs come due within `settle_s`
        (confirmations being tracked), bounded by `max_seconds`. Returns jobs run."""
        init_database(self.settings)
        self.ensure_periodic()
        deadline = time.monotonic() + max_seconds
        total = 0
        while time.monotonic() < deadline:
            ran = self.run_batch()
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
        q = Job.select(Job.id).where((Job.status == "queued") & (Job.run_at <= limit)
                                     & ~(Job.dedupe_key.startswith("periodic:"))).limit(1)
        return not q.exists()

    def _heartbeat(self) -> None:
        interval = max(0.5, self.lease_s / 3)
        while not self._stop.wait(interval):
            with self._lock:
                jobs = list(self._inflight.values())
            for job in jobs:
                try:
                    if not queue.renew(job, self.lease_s):
                        with self._lock:
                            still_running = job.id in self._inflight  # not just finished meanwhile
                        # the handler's own last transaction may have completed it a moment ago: only another
                        # worker holding it now means the lease was lost
                        row = Job.select(Job.status, Job.locked_by).where(Job.id == job.id).first()
                        if still_running and row is not None and row.status == "running" \
                                and row.locked_by != job.locked_by:
                            log.warning("lost the lease on job %s (%s) to %s", job.id, job.kind, row.locked_by)
                except Exception:
                    log.exception("lease renewal failed")

    # ---- one job -----------------------------------------------------------------------------------
    def execute(self, job: Job) -> None:
        ctx = JobContext(self.settings, self.id, job, self.lease_s)
        with self._lock:
            self._inflight[job.id] = job
        cpu = time.thread_time()
        try:
            self._execute(job, ctx)
        finally:
            used = time.thread_time() - cpu
            with self._lock:
                self._inflight.pop(job.id, None)
                self._cpu_s += used
            self.processed += 1

    def _execute(self, job: Job, ctx: JobContext) -> None:
        periodic = PERIODIC.get(job.kind) if (job.dedupe_key or "").startswith("periodic:") else None
        handler = HANDLERS.get(job.kind)
        if periodic is None and handler is None:
            queue.bury(job, f"no handler for job kind {job.kind!r} in this version")
            log.error("job %s: no handler for kind %s", job.id, job.kind)
            return
        completed = False
        try:
            if periodic is not None:
                periodic.fn(ctx)
            else:
                queue.set_current(job)
                try:
                    handler(job, ctx)  # type: ignore[misc]
                finally:
                    completed = queue.completed_current()
                    queue.set_current(None)
        except Exception as exc:
            if periodic is not None and not isinstance(exc, RetryLater | PermanentJobError):
                err = f"{type(exc).__name__}: {exc}"
                log.error("job %s (%s) failed: %s\n%s", job.id, job.kind, err, traceback.format_exc(limit=5))
                self._reschedule_periodic(job, periodic.every_s, err)
                return
            self._after(job, exc, completed)
            return
        if periodic is not None:
            self._reschedule_periodic(job, periodic.every_s, None)
        else:
            self._after(job, None, completed)

    def _after(self, job: Job, exc: BaseException | None, completed: bool) -> None:
        """What a job's handler did, recorded: done (unless its own transaction did it), retried or buried."""
        with self._lock:  # no lease to renew from here on (the heartbeat would see it lost once recorded)
            self._inflight.pop(job.id, None)
        if exc is None:
            if not completed:  # the handler's final transaction may have completed it already
                queue.complete(job)
            return
        if isinstance(exc, RetryLater):
            if exc.count_attempt and job.attempts >= job.max_attempts:
                self._bury(job, f"gave up after {job.attempts} attempts: {exc}")
                return
            delay = exc.delay_s if exc.delay_s is not None else self.strategy.delay_for(job.attempts)
            queue.retry(job, delay, str(exc), count_attempt=exc.count_attempt)
            return
        if isinstance(exc, PermanentJobError):
            self._bury(job, str(exc))
            log.warning("job %s (%s) failed permanently: %s", job.id, job.kind, exc)
            return
        err = f"{type(exc).__name__}: {exc}"
        log.error("job %s (%s) attempt %d failed: %s\n%s", job.id, job.kind, job.attempts, err,
                  "".join(traceback.format_exception(exc, limit=5)))
        decision = self.strategy.decide(job.attempts)
        if decision.retry and job.attempts < job.max_attempts:
            queue.retry(job, decision.delay_s, err)
        else:
            self._bury(job, f"gave up after {job.attempts} attempts: {err}")

    def _bury(self, job: Job, error: str) -> None:
        if queue.bury(job, error):
            hook = ON_DEAD.get(job.kind)
            if hook is not None:
                try:
                    hook(job, error)
                except Exception:
                    log.exception("on_dead hook of %s failed for job %s", job.kind, job.id)

    def _reschedule_periodic(self, job: Job, every_s: float, error: str | None) -> None:
        queue.retry(job, every_s, error, count_attempt=False)
