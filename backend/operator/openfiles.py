"""The open files of the operator's processes: the soft limit raised to what a server's connections and a worker's
pool need, and a pool made to fit a limit that cannot be raised (`socialpub worker`, `tick`, `serve`, the embedded
backend)."""

from __future__ import annotations

import logging
import resource
from typing import Any

log = logging.getLogger("socialpub.serve")

FD_RESERVE = 256  # descriptors kept for the database, media files, the worker's outbound connections, logs
# The open files a worker's thread may hold at once: its SQLite connection's database and WAL files, a kept-alive
# connection to a network, a media file it uploads. Measured under bench/burst.py (2,000 posts x 5 networks):
# at most 813 descriptors with 256 threads, 1,379 with 512 (medians of three runs: ~3.2 and ~2.7 a thread).
FDS_PER_WORKER_THREAD = 4


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's soft limit of open files towards `wanted` (at most the hard limit); the soft limit
    (`wanted` when it is unlimited: an unlimited soft limit is never lowered)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit to %d: %s", target, exc)
    return soft


def worker_pool(settings: Any, concurrency: int | None = None) -> int:
    """A worker's pool size: `concurrency` (default SOCIALPUB_WORKER_CONCURRENCY), with this process's open-files
    limit raised to fit it (FDS_PER_WORKER_THREAD a thread, and FD_RESERVE). Where the hard limit does not allow
    it, the pool is made to fit, saying so: a pool larger than its files would fail jobs ("unable to open database
    file", "too many open files") only once a burst had grown it."""
    wanted = int(concurrency or settings.worker_concurrency)
    need = wanted * FDS_PER_WORKER_THREAD + FD_RESERVE
    soft = raise_fd_limit(need)
    if need <= soft:
        return wanted
    fitted = max(1, (soft - FD_RESERVE) // FDS_PER_WORKER_THREAD)
    log.warning(
        "a worker pool of %d may need %d open files and this process may open %d: a pool of %d; raise the "
        "open-files limit (ulimit -n) or lower SOCIALPUB_WORKER_CONCURRENCY",
        wanted,
        need,
        soft,
        fitted,
    )
    return fitted
