"""Targets per second through the publishing engine and the sandbox networks, at zero network latency.

A regression check, not a goal (issue 12): with no latency this measures our own engine and emulators, not
what users wait on (bench/burst.py measures that). The figure quoted is the median of --runs runs.

N posts x 5 targets (facebook, instagram, linkedin, tiktok, youtube), each with a small H.264 video on our own
media host (ingested through the real media store), so every network's full path runs: Facebook video by URL,
Instagram REELS container + status + media_publish, LinkedIn and YouTube uploads of the bytes read back from
the media store, TikTok PULL_FROM_URL init + status, and the tracking jobs of the asynchronous networks.
Sandbox delay 0, sandbox caps off. The posts are queued in bulk before the workers start (bench/support);
the clock runs from the moment the workers are released until the last target reaches a final state
(max `completed_at`). Every target must end `succeeded`, and each network must hold exactly N publications
(counted through the sandbox package's public listing, `list_published`).

Workers are separate processes running the real `Worker(settings)` (as `socialpub worker` does), each with
its default concurrency; they import and connect first, then wait on a barrier so start-up is not timed.

    .venv/bin/python bench/pipeline.py [--posts 2000] [--runs 3] [--pg-workers 1,2,4] [--no-pg] [--timeout 150]

SQLite: one worker process. PostgreSQL: a throwaway server from tests/support/pgserver.py, 1, 2 and 4
workers; skipped with a clear message when PostgreSQL cannot be started. Results: bench/results/pipeline.json
(the commit, every run, the median per configuration).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.schemas.statuses import TARGET_FINAL  # noqa: E402
from bench.support.engine import (  # noqa: E402
    PLATFORMS,
    ROOT,
    bench_settings,
    machine,
    prepare_workspace,
    published_rows,
    queue_posts,
    settings_kwargs,
)

RESULTS = ROOT / "bench" / "results" / "pipeline.json"


def worker_main(kwargs: dict[str, Any], ready: Any, go: Any, stop: Any, concurrency: int | None) -> None:
    """One worker process: connect, signal ready, wait for the start, run the real worker until told to stop."""
    sys.path.insert(0, str(ROOT))
    from backend.config import Settings
    from backend.jobs.worker import Worker
    from backend.store.db import init_database

    settings = Settings(**kwargs)
    init_database(settings)
    worker = Worker(settings, **({"concurrency": concurrency} if concurrency else {}))
    ready.set()
    go.wait()
    worker.start_thread()
    stop.wait()
    worker.stop(timeout=30)


def run_once(
    label: str,
    settings: Any,
    n_posts: int,
    n_workers: int,
    timeout_s: float,
    profile: str | None = None,
    concurrency: int | None = None,
) -> dict[str, Any]:
    from peewee import fn

    from backend import clock
    from backend.store.db import database
    from backend.store.models import Job, PostTarget

    t_setup = time.perf_counter()
    ws = prepare_workspace(settings, with_video=True)
    queue_posts(settings, ws, [None] * n_posts, platforms=PLATFORMS)
    setup_s = time.perf_counter() - t_setup
    n_targets = n_posts * len(PLATFORMS)
    database.close()  # the workers hold the connections during the run

    ctx = mp.get_context("spawn")
    go, stop = ctx.Event(), ctx.Event()
    readies = [ctx.Event() for _ in range(n_workers)]
    procs = [
        ctx.Process(
            target=worker_main, args=(settings_kwargs(settings), r, go, stop, concurrency), daemon=True
        )
        for r in readies
    ]
    for p in procs:
        p.start()
    for r in readies:
        if not r.wait(120):
            raise RuntimeError("a worker process did not start")
    spies = []
    if (
        profile
    ):  # py-spy (pip install py-spy into .venv; not a project dependency): every thread of each worker
        import subprocess

        spy = Path(sys.executable).with_name("py-spy")
        spies = [
            subprocess.Popen(
                [str(spy), "record", "-p", str(p.pid), "-f", "raw", "-r", "250", "-o", f"{profile}.{i}.txt"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for i, p in enumerate(procs)
        ]
        time.sleep(1.0)
    t0_wall = clock.now()
    t0 = time.perf_counter()
    go.set()
    deadline = t0 + timeout_s
    remaining = n_targets
    while time.perf_counter() < deadline:
        time.sleep(0.25)
        remaining = PostTarget.select().where(PostTarget.status.not_in(TARGET_FINAL)).count()
        if remaining == 0:
            break
    waited = time.perf_counter() - t0
    database.close()
    stop.set()
    for p in procs:
        p.join(60)
        if p.is_alive():
            p.terminate()
    for spy_proc in spies:
        spy_proc.wait(60)

    last = (
        PostTarget.select(fn.MAX(PostTarget.completed_at)).where(PostTarget.status.in_(TARGET_FINAL)).scalar()
    )
    done = PostTarget.select().where(PostTarget.status.in_(TARGET_FINAL)).count()
    if isinstance(last, str):  # SQLite aggregate: the raw stored text
        from backend.store.fields import UTCDateTimeField

        last = UTCDateTimeField().python_value(last)
    elapsed = (last - t0_wall).total_seconds() if (remaining == 0 and last is not None) else waited
    statuses = {
        r.status: r.n
        for r in PostTarget.select(PostTarget.status, fn.COUNT(PostTarget.id).alias("n")).group_by(
            PostTarget.status
        )
    }
    per_network = {p: len(published_rows(settings, p)) for p in PLATFORMS}
    jobs = {
        f"{r.kind}:{r.status}": r.n
        for r in Job.select(Job.kind, Job.status, fn.COUNT(Job.id).alias("n")).group_by(Job.kind, Job.status)
    }
    database.close()
    result = {
        "label": label,
        "workers": n_workers,
        "posts": n_posts,
        "targets": n_targets,
        "finished": remaining == 0,
        "targets_final": done,
        "elapsed_s": round(elapsed, 3),
        "targets_per_s": round(done / elapsed, 1),
        "setup_s": round(setup_s, 1),
        "target_statuses": statuses,
        "network_items": per_network,
        "jobs": jobs,
    }
    ok = statuses.get("succeeded", 0) == n_targets and all(per_network[p] == n_posts for p in PLATFORMS)
    result["all_succeeded"] = ok
    flag = "" if ok else "  (NOT all succeeded once: see target_statuses, network_items)"
    print(
        f"  {label:<24} {done:>6}/{n_targets} targets in {elapsed:7.2f} s -> {result['targets_per_s']:8.1f} "
        f"targets/s{flag}",
        flush=True,
    )
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posts", type=int, default=2000, help="posts (each with 5 targets); the issue's figure")
    ap.add_argument("--runs", type=int, default=3, help="runs per configuration (the median is quoted)")
    ap.add_argument("--pg-workers", default="1,2,4", help="worker process counts on PostgreSQL")
    ap.add_argument("--no-pg", action="store_true", help="SQLite only")
    ap.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    ap.add_argument("--timeout", type=float, default=150.0, help="bound on each run, seconds")
    ap.add_argument(
        "--profile", help="py-spy each worker process to PROFILE.<label>.<i>.txt (collapsed stacks)"
    )
    ap.add_argument("--concurrency", type=int, help="job threads per worker (default: the Worker's own)")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()

    runs: list[dict[str, Any]] = []
    pg_note = None
    pg_concurrency = None
    print(
        f"pipeline: {args.posts} posts x {len(PLATFORMS)} targets, sandbox latency 0, caps off, "
        f"{args.runs} run(s) per configuration",
        flush=True,
    )
    if not args.no_sqlite:
        for i in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="socialpub-bench-") as tmp:
                settings = bench_settings(Path(tmp) / "data")
                prof = f"{args.profile}.sqlite.{i}" if args.profile else None
                runs.append(
                    {
                        "store": "sqlite",
                        "run": i + 1,
                        **run_once(
                            "sqlite, 1 worker", settings, args.posts, 1, args.timeout, prof, args.concurrency
                        ),
                    }
                )
    if not args.no_pg:
        from tests.support import pgserver

        try:
            server = pgserver.start()
        except Exception as exc:  # PostgresUnavailable, or anything the host lacks
            pg_note = f"PostgreSQL could not be started, its runs were skipped: {exc}"
            print(f"  {pg_note}", flush=True)
        else:
            try:
                import psycopg

                from backend.config import Settings

                base = server.url.rsplit("/", 1)[0]
                counts = [int(x) for x in args.pg_workers.split(",") if x.strip()]
                with psycopg.connect(base + "/postgres") as c:
                    max_connections = int(c.execute("SHOW max_connections").fetchone()[0])
                # each worker thread may hold two connections (the product's, the sandbox's): every run's workers
                # fit in the server's max_connections, the same pool size in every run (as bench/burst.py does)
                pg_concurrency = args.concurrency or min(
                    Settings().worker_concurrency, (max_connections - 20) // (2 * max(counts))
                )
                for n in counts:
                    for i in range(args.runs):
                        dbname = f"bench_pipeline_{n}"
                        with psycopg.connect(base + "/postgres", autocommit=True) as c:
                            c.execute(f"DROP DATABASE IF EXISTS {dbname}")
                            c.execute(f"CREATE DATABASE {dbname}")
                        with tempfile.TemporaryDirectory(prefix="socialpub-bench-") as tmp:
                            settings = bench_settings(Path(tmp) / "data", f"{base}/{dbname}")
                            prof = f"{args.profile}.pg{n}.{i}" if args.profile else None
                            runs.append(
                                {
                                    "store": "postgres",
                                    "run": i + 1,
                                    **run_once(
                                        f"postgres, {n} worker(s)",
                                        settings,
                                        args.posts,
                                        n,
                                        args.timeout,
                                        prof,
                                        pg_concurrency,
                                    ),
                                }
                            )
            finally:
                server.stop()

    medians: dict[str, float] = {}
    for r in runs:
        medians.setdefault(r["label"], 0.0)
    for label in medians:
        medians[label] = statistics.median([r["targets_per_s"] for r in runs if r["label"] == label])
    pg1 = medians.get("postgres, 1 worker(s)")
    out = {
        "benchmark": "pipeline",
        "commit": commit(),
        "what": "targets/s from release of the workers to the last target final; posts x 5 networks with a video "
        "on our media host, sandbox networks in-process, latency 0, caps off; workers are processes. "
        "A regression check of the engine's own cost (no goal): real networks answer in hundreds of ms "
        "(bench/burst.py)",
        "goal": None,
        "median_targets_per_s": medians,
        "postgres_vs_1_worker": {
            k: round(v / pg1, 2) for k, v in medians.items() if pg1 and k.startswith("postgres")
        },
        "config": {
            "posts": args.posts,
            "runs": args.runs,
            "platforms": list(PLATFORMS),
            "timeout_s": args.timeout,
            "worker_concurrency": args.concurrency or "Worker default",
            "postgres_worker_concurrency": pg_concurrency,
        },
        "machine": machine(),
        "runs": runs,
        "postgres_note": pg_note,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2, default=str) + "\n")
    for label, value in medians.items():
        print(f"  median {label}: {value:.0f} targets/s (regression check, no goal)")
    print(f"results: {Path(args.out).relative_to(ROOT) if Path(args.out).is_relative_to(ROOT) else args.out}")
    return 0


def commit() -> str | None:
    import subprocess

    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


if __name__ == "__main__":
    sys.exit(main())
