"""GET /v1/activity on a big workspace (issue 13): 30 days of outcomes counted in the database.

Two workspaces of `--posts` finished posts each (default 100,000, two targets each, one in ten partial with a
failed target, spread over the last 120 days), inserted in bulk through the models. Then GET /v1/activity
(days=30, tz=Europe/Paris) through the app, `--repeat` times; the query plans of its three statements are
printed, so a missing index shows as a scan of the post table.

    .venv/bin/python bench/activity.py [--posts 100000] [--repeat 7] [--pg-local]

Goal: median <= 250 ms on SQLite on the shared 2-core machine (it reads one workspace's 30 days, ~25,000
posts, not its 100,000). Results: bench/results/activity.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.support.engine import ROOT, bench_settings, machine  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "activity.json"
GOAL_MS = 250.0


def seed(workspace_id: str, posts: int) -> None:
    from backend import clock
    from backend.ids import new_id
    from backend.store.db import tx
    from backend.store.models import Post, PostTarget

    now = clock.now()
    span = timedelta(days=120).total_seconds()
    for start in range(0, posts, 2000):
        post_rows, target_rows = [], []
        for n in range(start, min(posts, start + 2000)):
            at = now - timedelta(seconds=span * n / posts)
            pid = new_id("post")
            partial = n % 10 == 0
            post_rows.append(
                {
                    "id": pid,
                    "workspace": workspace_id,
                    "status": "partial" if partial else "completed",
                    "content": "bench",
                    "content_folded": "bench",
                    "created_at": at,
                    "updated_at": at,
                    "completed_at": at,
                }
            )
            for i, platform in enumerate(("facebook", "linkedin")):
                failed = partial and i == 1
                target_rows.append(
                    {
                        "id": new_id("tgt"),
                        "post": pid,
                        "position": i,
                        "platform": platform,
                        "account": None,
                        "account_name": platform,
                        "updated_at": at,
                        "completed_at": at,
                        "status": "failed" if failed else "succeeded",
                        "fail_reason": "refused" if failed else None,
                        "fail_type": "permanent" if failed else None,
                        "idempotency_token": uuid.uuid4().hex,
                    }
                )
        with tx():
            for model, rows in ((Post, post_rows), (PostTarget, target_rows)):
                for i in range(0, len(rows), 500):
                    model.insert_many(rows[i : i + 500]).execute()


def plans(workspace_id: str) -> list[str]:
    """EXPLAIN of the service's statements, captured by running it with a recording database."""
    from backend.services import activity
    from backend.store.db import database, is_sqlite

    seen: list[tuple[str, Any]] = []
    real = database.obj.execute_sql

    def record(sql: str, params: Any = None, *a: Any, **kw: Any) -> Any:
        if sql.lstrip().upper().startswith("SELECT"):
            seen.append((sql, params))
        return real(sql, params, *a, **kw)

    database.obj.execute_sql = record  # type: ignore[method-assign]
    try:
        activity.activity(workspace_id, days=30, tz_name="Europe/Paris")
    finally:
        database.obj.execute_sql = real  # type: ignore[method-assign]
    out = []
    explain = "EXPLAIN QUERY PLAN " if is_sqlite() else "EXPLAIN "
    for sql, params in seen:
        rows = real(explain + sql, params).fetchall()
        out.append("\n".join(" | ".join(str(c) for c in r) for r in rows))
    return out


def run(database_url: str | None, posts: int, repeat: int) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from backend.api.app import create_app
    from backend.services import bootstrap, security
    from backend.store.db import init_database

    with tempfile.TemporaryDirectory() as tmp:
        settings = bench_settings(Path(tmp), database_url)
        init_database(settings)
        security.ensure_secret(settings)
        mine = bootstrap.create_workspace(settings, "Bench", "bench@bench.local", "bench password 123")
        other = bootstrap.create_workspace(settings, "Other", "other@bench.local", "bench password 123")
        t0 = time.perf_counter()
        seed(mine.workspace_id, posts)
        seed(other.workspace_id, posts)
        print(f"seeded 2 x {posts:,} posts in {time.perf_counter() - t0:.1f} s", flush=True)
        if database_url:
            from backend.store.db import database

            database.obj.execute_sql("ANALYZE")
        for plan in plans(mine.workspace_id):
            print(plan, "\n", flush=True)
        times = []
        with TestClient(create_app(settings)) as client:
            for _ in range(repeat):
                t = time.perf_counter()
                r = client.get(
                    "/v1/activity",
                    params={"days": 30, "tz": "Europe/Paris"},
                    headers={"x-api-key": mine.api_key},
                )
                times.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200, r.text
            body = r.json()
        counted = sum(sum(d["posts"].values()) for d in body["perDay"])
        return {
            "db": "postgresql" if database_url else "sqlite",
            "posts_per_workspace": posts,
            "posts_counted": counted,
            "runs_ms": [round(t, 1) for t in times],
            "median_ms": round(statistics.median(times), 1),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posts", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--pg-local", action="store_true", help="also on a throwaway local PostgreSQL server")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    results = [run(None, args.posts, args.repeat)]
    print(results[-1], flush=True)
    if args.pg_local:
        from tests.support import pgserver

        server = pgserver.start()
        try:
            results.append(run(server.url, args.posts, args.repeat))
            print(results[-1], flush=True)
        finally:
            server.stop()
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    sqlite = results[0]["median_ms"]
    out = {
        "commit": sha,
        "machine": machine(),
        "goal_ms": GOAL_MS,
        "runs": results,
        "goal_met": sqlite <= GOAL_MS,
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(
        f"activity: SQLite median {sqlite} ms (goal <= {GOAL_MS:g} ms: {'met' if sqlite <= GOAL_MS else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
