"""Job kinds and their handlers. Modules listed in HANDLER_MODULES register themselves on import."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from backend import clock
from backend.config import Settings
from backend.store.models import Job

# Add a module here when it defines @job_handler / @periodic functions.
HANDLER_MODULES: list[str] = [
    "backend.jobs.housekeeping",
    "backend.jobs.retention",
    "backend.jobs.publishing",
    "backend.jobs.tiktok",
    "backend.jobs.generations",
    "backend.jobs.webhooks",
    "backend.jobs.tokens",
]


@dataclass(frozen=True)
class JobContext:
    """What a handler gets beside its job: the settings, the worker running it, the clock. (The lease is the
    worker's heartbeat's and the fence's business: a handler never renews it.)"""

    settings: Settings
    worker_id: str

    def now(self) -> datetime:
        return clock.now()


Handler = Callable[[Job, JobContext], None]  # a job kind's handler: fn(job, ctx)
OnDead = Callable[[Job, str], None]  # what a buried job of a kind leaves final: fn(job, error)


@dataclass
class Periodic:
    kind: str
    every_s: float
    fn: Callable[[JobContext], None]


HANDLERS: dict[str, Handler] = {}
ON_DEAD: dict[str, OnDead] = {}
PERIODIC: dict[str, Periodic] = {}


def job_handler(kind: str, on_dead: OnDead | None = None) -> Callable[[Handler], Handler]:
    """Register `fn(job, ctx)` for jobs of `kind`. Raise RetryLater or PermanentJobError to steer it.

    A handler that returns normally has succeeded: the worker marks its job done, unless the handler did so
    itself with `queue.complete(job)` inside the transaction that recorded its outcome.

    `on_dead(job, error)` runs when a job of this kind is buried, so that whatever it was moving
    (a post target, a generation) reaches a final state instead of staying stuck.
    """

    def deco(fn: Handler) -> Handler:
        HANDLERS[kind] = fn
        if on_dead is not None:
            ON_DEAD[kind] = on_dead
        return fn

    return deco


def periodic(
    kind: str, every_s: float
) -> Callable[[Callable[[JobContext], None]], Callable[[JobContext], None]]:
    """Register `fn(ctx)` to run every `every_s` seconds in the worker (one row per kind, shared by all workers)."""

    def deco(fn: Callable[[JobContext], None]) -> Callable[[JobContext], None]:
        PERIODIC[kind] = Periodic(kind, every_s, fn)
        return fn

    return deco


_loaded = False


def load_handlers() -> None:
    global _loaded
    if _loaded:
        return
    for name in HANDLER_MODULES:
        importlib.import_module(name)
    _loaded = True
