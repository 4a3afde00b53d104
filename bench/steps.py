"""Steps per target: statements, transactions and network calls the real worker spends on one target (issue 34).

N posts x 5 sandbox networks (a small H.264 video: every network's full path) run through the real `Worker` in
this process (the sandbox's emulators in-process, caps off), on SQLite: at zero latency by default, or in the
burst's shape with `--delay-s 0.3 --processing-s 2` (then the tracking jobs poll while TikTok and Instagram
process, and follow-ups fall due spread over time). Counted while the worker
runs, divided by the targets:
- statements: every `execute_sql` of the product's database, and separately of the sandbox's (the emulators' own
  bookkeeping: what a real network does on its side, reported apart);
- transactions: every `begin` of the product's database (a nested `atomic` is a savepoint, not counted);
- network calls: every request the product's HTTP clients send (httpx's "HTTP Request" records);
- log lines of the `socialpub` loggers at INFO and above, by level;
- the worker's CPU time per target (this process: the emulators' share included, so only a relative figure).

The counters wrap the two database objects' methods in this process only: measuring instruments of the
benchmark, not a path of the product.

    .venv/bin/python bench/steps.py [--posts 50] [--delay-s 0.3 --processing-s 2] [--out bench/results/steps.json]
    .venv/bin/python bench/steps.py --posts 60 --delay-s 0.3 --processing-s 2 --profile /tmp/steps.pstats

`--profile PATH` runs cProfile (deterministic, each thread's CPU time) in every thread the worker starts, merges them into PATH (pstats;
`python -m pstats PATH`) and prints the project's functions (backend/, the sandbox and its emulators left out) ranked by
self and by inclusive time, in microseconds a target. cProfile's own cost inflates small functions called
often: a ranking, not the CPU figure (run without --profile for that).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import os
import pstats
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.schemas.statuses import TARGET_FINAL  # noqa: E402
from bench.support.engine import (  # noqa: E402
    PLATFORMS,
    ROOT,
    bench_settings,
    machine,
    prepare_workspace,
    queue_posts,
)

RESULTS = ROOT / "bench" / "results" / "steps.json"


class Counting(logging.Handler):
    """Counts records by (logger prefix, level)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.counts: Counter[str] = Counter()
        self.lock_ = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        key = f"{record.name.split('.')[0]}:{record.levelname}"
        with self.lock_:
            self.counts[key] += 1


def counted(counter: Counter[str], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    lock = threading.Lock()

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with lock:
            counter[key] += 1
        return fn(*args, **kwargs)

    return wrapper


def _emulator(path: str) -> bool:
    """The sandbox's code: what a network does on its side (the emulators run in this process here)."""
    return "/backend/networks/sandbox/" in path or path.rsplit("/", 1)[-1].startswith("emulator")


class ThreadProfiles:
    """cProfile in every thread started while installed (threading.setprofile): a profiler a thread."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self.lock_ = threading.Lock()

    def _start(self, frame: FrameType, event: str, arg: object) -> None:
        sys.setprofile(None)
        profile = cProfile.Profile(time.thread_time)  # this thread's CPU time, not its waits
        with self.lock_:
            self.profiles.append(profile)
        profile.enable()

    def install(self) -> None:
        threading.setprofile(self._start)

    def uninstall(self) -> None:
        threading.setprofile(None)  # type: ignore[arg-type]  # typeshed: setprofile takes a callable

    def dump(self, path: str, n_targets: int, top: int = 20) -> None:
        profiles = [p for p in self.profiles if p.getstats()]
        if not profiles:
            return
        stats = pstats.Stats(profiles[0])
        for p in profiles[1:]:
            stats.add(p)
        stats.dump_stats(path)
        ours = {
            func: (tt, ct, nc)
            for func, (_cc, nc, tt, ct, _callers) in stats.stats.items()  # type: ignore[attr-defined]  # pstats: .stats is untyped
            if "/backend/" in func[0] and not _emulator(func[0])
        }

        def name(func: tuple[str, int, str]) -> str:
            return f"{func[0].split('/backend/', 1)[1]}:{func[1]}({func[2]})"

        for title, index in (("self", 0), ("inclusive", 1)):
            print(f"-- our functions by {title} time, µs a target (calls a target)")
            for func, values in sorted(ours.items(), key=lambda kv: -kv[1][index])[:top]:
                print(f"{1e6 * values[index] / n_targets:9.1f}  {values[2] / n_targets:7.2f}  {name(func)}")


def commit() -> str:
    import subprocess

    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return sha + ("+dirty" if dirty else "")


def run(
    posts: int, timeout_s: float, delay_s: float = 0.0, processing_s: float = 0.0, profile: str = ""
) -> dict[str, Any]:
    from backend.config import get_settings
    from backend.jobs.worker import Worker
    from backend.networks.sandbox.store import sandbox_db
    from backend.store.db import database
    from backend.store.models import PostTarget

    with tempfile.TemporaryDirectory(prefix="socialpub-steps-") as tmp:
        data_dir = Path(tmp) / "data"
        os.environ["SOCIALPUB_DATA_DIR"] = str(data_dir)
        os.environ.pop("SOCIALPUB_DATABASE_URL", None)
        get_settings.cache_clear()
        settings = bench_settings(data_dir, sandbox_delay_s=delay_s, sandbox_processing_s=processing_s)
        ws = prepare_workspace(settings, with_video=True)
        queue_posts(settings, ws, [None] * posts, platforms=list(PLATFORMS))
        n_targets = PostTarget.select().count()

        counts: Counter[str] = Counter()
        product = database.obj if hasattr(database, "obj") else database
        product.execute_sql = counted(counts, "statements", product.execute_sql)
        product.begin = counted(counts, "transactions", product.begin)
        worker = Worker(settings)
        sandbox = sandbox_db.obj
        sandbox.execute_sql = counted(counts, "sandbox_statements", sandbox.execute_sql)
        logs = Counting()
        logging.getLogger().addHandler(logs)
        logging.getLogger("socialpub").setLevel(logging.INFO)
        httpx_level = logging.getLogger("httpx").level
        logging.getLogger("httpx").setLevel(
            logging.INFO
        )  # to count the requests, whatever the product's level
        logging.getLogger("httpx").propagate = True

        profiles = ThreadProfiles()
        if profile:
            profiles.install()
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        worker.start_thread()
        deadline = t0 + timeout_s
        done = 0
        while time.perf_counter() < deadline:
            time.sleep(0.25)
            done = PostTarget.select().where(PostTarget.status.in_(TARGET_FINAL)).count()
            counts["statements"] -= 1  # the benchmark's own read of progress (one statement, no transaction)
            if done >= n_targets:
                break
        worker.stop(timeout=30)
        cpu = time.process_time() - cpu0
        elapsed = time.perf_counter() - t0
        if profile:
            profiles.uninstall()
            profiles.dump(profile, n_targets)
        logging.getLogger().removeHandler(logs)
        logging.getLogger("httpx").setLevel(httpx_level)
        statuses = Counter(s for (s,) in PostTarget.select(PostTarget.status).tuples())
        database.close()

    per = {k: round(v / n_targets, 2) for k, v in counts.items()}
    calls = logs.counts.get("httpx:INFO", 0)
    lines = {k: v for k, v in logs.counts.items() if k.startswith("socialpub:")}
    return {
        "posts": posts,
        "delay_s": delay_s,
        "processing_s": processing_s,
        "targets": n_targets,
        "final": done,
        "statuses": dict(statuses),
        "elapsed_s": round(elapsed, 2),
        "per_target": {
            **per,
            "network_calls": round(calls / n_targets, 2),
            "log_lines": {k: round(v / n_targets, 2) for k, v in sorted(lines.items())},
            "cpu_ms_in_process": round(1000 * cpu / n_targets, 2),
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posts", type=int, default=50)
    ap.add_argument("--timeout-s", type=float, default=300.0)
    ap.add_argument("--delay-s", type=float, default=0.0, help="every emulated call (the burst: 0.3)")
    ap.add_argument(
        "--processing-s", type=float, default=0.0, help="TikTok / Instagram processing (the burst: 2)"
    )
    ap.add_argument("--label", default="")
    ap.add_argument("--profile", default="", help="cProfile every worker thread into this pstats file")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    result = run(args.posts, args.timeout_s, args.delay_s, args.processing_s, args.profile)
    entry = {
        "commit": commit(),
        "label": args.label,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        **result,
    }
    out = Path(args.out)
    history = json.loads(out.read_text()) if out.exists() else {"benchmark": "steps", "runs": []}
    history["runs"].append(entry)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(history, indent=2) + "\n")
    print(
        json.dumps(entry["per_target"], indent=2),
        f"\n{result['final']}/{result['targets']} final",
        result["statuses"],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
