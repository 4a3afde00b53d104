"""Running the real worker in a test: one thread, until the queue is idle."""

from __future__ import annotations

from typing import Any

from backend.jobs.worker import Worker


def work(settings: Any, max_seconds: float = 20) -> None:
    Worker(settings, concurrency=1).run_until_idle(max_seconds=max_seconds, settle_s=0)
