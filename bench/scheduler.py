"""Lateness of scheduled posts: from `scheduledAt` to the target entering `publishing` (issue 5).

100,000 scheduled posts are queued (bulk, through the models: bench/support), almost all of them due days to
weeks ahead; a window of them (`--due`, default 2,000) falls due during the run, spread evenly over
`--window-s` seconds starting a few seconds after the real worker is started in this process
(`Worker(settings).start_thread()`, default concurrency, wake on enqueue, poll at most every second).
Each post has one facebook target (sandbox, delay 0, caps off). Lateness per post:

- `publishing`: the target's `started_at` (committed as it enters `publishing`) minus `scheduledAt`;
- `sent`: the post's `sent_at` (scheduled -> processing) minus `scheduledAt`.

    .venv/bin/python bench/scheduler.py [--posts 100000] [--due 2000] [--window-s 20]

Goal: p99 lateness to `publishing` <= 0.5 s on SQLite. Results: bench/results/scheduler.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.support.engine import (  # noqa: E402
    ROOT,
    bench_settings,
    machine,
    prepare_workspace,
    queue_posts,
    summary,
)

RESULTS = ROOT / "bench" / "results" / "scheduler.json"
GOAL_P99_S = 0.5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posts", type=int, default=100_000, help="scheduled posts queued (default 100,000)")
    ap.add_argument("--due", type=int, default=2000, help="of which fall due during the run (default 2,000)")
    ap.add_argument("--window-s", type=float, default=20.0, help="the due ones are spread over this many seconds")
    ap.add_argument("--lead-s", type=float, default=3.0, help="first due time, seconds after the worker starts")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    if not 0 < args.due <= args.posts:
        ap.error("--due must be between 1 and --posts")

    from backend import clock
    from backend.jobs.worker import Worker
    from backend.store.models import Post, PostTarget

    with tempfile.TemporaryDirectory(prefix="socialpub-bench-") as tmp:
        settings = bench_settings(Path(tmp) / "data")
        ws = prepare_workspace(settings, with_video=False)

        # Setup: the due window is placed after setup ends, so its length does not matter.
        far = [clock.now() + timedelta(days=1, seconds=i * 20) for i in range(args.posts - args.due)]
        t_setup = time.perf_counter()
        tty = sys.stdout.isatty()
        queue_posts(settings, ws, far, platforms=["facebook"],
                    progress=lambda n: print(f"\r  queued {n:,} far-future posts", end="", flush=True) if tty else None)
        if tty:
            print()
        worker = Worker(settings)
        start = clock.now() + timedelta(seconds=args.lead_s)
        step = args.window_s / args.due
        due_at = [start + timedelta(seconds=i * step) for i in range(args.due)]
        due_ids = queue_posts(settings, ws, due_at, platforms=["facebook"])
        setup_s = time.perf_counter() - t_setup
        print(f"  queued {args.posts:,} scheduled posts in {setup_s:.1f} s; {args.due:,} fall due over "
              f"{args.window_s:g} s from {args.lead_s:g} s after the worker starts", flush=True)

        worker.start_thread()
        end = start + timedelta(seconds=args.window_s)
        hard_stop = time.monotonic() + args.lead_s + args.window_s + 30
        while time.monotonic() < hard_stop:
            time.sleep(0.5)
            if clock.now() < end:
                continue
            waiting = PostTarget.select().where(PostTarget.post.in_(due_ids[-200:])
                                                & PostTarget.started_at.is_null()).count()
            if waiting == 0:
                break
        worker.stop(timeout=30)

        publishing: list[float] = []
        sent: list[float] = []
        missing = 0
        for i in range(0, len(due_ids), 900):
            chunk = due_ids[i:i + 900]
            rows = (Post.select(Post.id, Post.scheduled_at, Post.sent_at, PostTarget.started_at)
                    .join(PostTarget).where(Post.id.in_(chunk)).tuples())
            for _pid, sched, sent_at, started in rows:
                if started is None or sent_at is None:
                    missing += 1
                    continue
                publishing.append((started - sched).total_seconds())
                sent.append((sent_at - sched).total_seconds())
        early = Post.select().where((Post.status != "scheduled")
                                    & (Post.scheduled_at > end + timedelta(seconds=60))).count()

    pub = summary(publishing)
    snt = summary(sent)
    met = bool(pub) and missing == 0 and pub["p99"] <= GOAL_P99_S
    out: dict[str, Any] = {
        "benchmark": "scheduler",
        "what": "lateness from scheduledAt to the target entering publishing (started_at) and to the post's sent_at, "
                "with 100k scheduled posts queued and a window falling due, real worker thread, SQLite",
        "goal": {"p99_publishing_s": GOAL_P99_S, "met": met},
        "config": {"posts": args.posts, "due": args.due, "window_s": args.window_s, "lead_s": args.lead_s,
                   "rate_per_s": round(args.due / args.window_s, 1), "store": "sqlite (WAL)",
                   "targets_per_post": 1, "network": "facebook (sandbox, delay 0)"},
        "machine": machine(), "setup_s": round(setup_s, 1),
        "lateness_to_publishing_s": {k: round(v, 4) for k, v in pub.items()},
        "lateness_to_sent_s": {k: round(v, 4) for k, v in snt.items()},
        "not_started": missing, "sent_early_far_future_posts": early,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    if pub:
        print(f"  lateness to publishing: p50 {pub['p50'] * 1000:.0f} ms, p99 {pub['p99'] * 1000:.0f} ms, "
              f"max {pub['max'] * 1000:.0f} ms ({pub['n']:,} posts)")
        print(f"  lateness to sent_at:    p50 {snt['p50'] * 1000:.0f} ms, p99 {snt['p99'] * 1000:.0f} ms")
    if missing:
        print(f"  {missing} due posts never reached publishing")
    print(f"goal p99 <= {GOAL_P99_S} s on SQLite: {'MET' if met else 'NOT MET'}")
    print(f"results: {Path(args.out).relative_to(ROOT) if Path(args.out).is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
