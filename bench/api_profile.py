"""Where the CPU time of one API request goes: POST /v1/posts and GET /v1/posts/:id, beside bench/api.py's baseline.

In-process: the apps of bench/api.py (the product on SQLite in a temporary data dir, the baseline with the same
dispatch) are called directly as ASGI apps on uvloop, 16 requests at a time. No HTTP server: uvicorn and httptools
cost both the same and are left out (bench/api.py measures them). The CPU time of the process per request is
measured, and, for the product, the thread CPU time spent in the parts of the request path, by wrapping them for
the run (the wrapping costs a few us a request; it is not how the product runs):

    API key           keys.authenticate (a key verified in the store is then trusted for 1 s)
    rate limit        ratelimit.hit (the upsert of the key's counter)
    service           posts.get_public / posts.accept (the post's read / validation and its write transaction)
                      - of each part, its statements: peewee rendering the SQL (Database.execute less
                        Database.execute_sql) and SQLite (execute_sql); BEGIN / COMMIT; the rest (building the
                        query objects, reading the rows, validation)
    checkpoint        the background WAL checkpoints (SQLite)
    event loop        the event-loop thread: ASGI, middleware, routing, the body's validation, JSON
    rest              the pool threads outside the parts above: the two thread hops (dependency, route),
                      FastAPI's work in those threads

Each run measures product then baseline, POST then GET; the figures quoted are the medians of the runs.
`--code DIR` profiles another checkout too (e.g. the code before a change), in separate processes alternating with
this one run by run.

    .venv/bin/python bench/api_profile.py [--runs 5] [--requests 1600] [--code DIR]

Results: bench/results/api_profile.json (no goal: bench/api.py holds the goals).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "api_profile.json"
CONCURRENCY = 16
PARTS = {  # part -> (module, function): wrapped where the request path looks them up
    "API key": ("backend.services.keys", "authenticate"),
    "rate limit": ("backend.services.ratelimit", "hit"),
    "service: post read": ("backend.services.posts.public", "get_public"),
    "service: accept": ("backend.services.posts.accept", "accept"),
}
ROUTES = ("post", "get")


def _bench_api() -> Any:
    spec = importlib.util.spec_from_file_location("bench_api", ROOT / "bench" / "api.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Meter:
    """Thread CPU time by part; statements' time is charged to the innermost part running in the thread."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        self._local = threading.local()

    def add(self, name: str, seconds: float) -> None:
        self.cpu[name] = self.cpu.get(name, 0.0) + seconds

    def current(self) -> str:
        stack = getattr(self._local, "stack", None)
        return stack[-1] if stack else "outside a part"

    def part(self, name: str, func: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = self._local.__dict__.setdefault("stack", [])
            stack.append(name)
            t0 = time.thread_time()
            try:
                return func(*args, **kwargs)
            finally:
                stack.pop()
                if (
                    not stack
                ):  # nested parts (accept inside create_public...) are counted once, by the outer one
                    self.add(name, time.thread_time() - t0)

        return timed

    def store(self, kind: str, func: Callable[..., Any]) -> Callable[..., Any]:
        """kind: `statements` (Database.execute: peewee and the driver), `driver` (execute_sql), `transaction`
        (begin / commit / rollback). The driver's time is told apart when inside a statement."""

        def timed(db: Any, *args: Any, **kwargs: Any) -> Any:
            local = self._local.__dict__
            if local.get(
                "in_store"
            ):  # inside a statement or a transaction call: only the driver is told apart
                if kind != "driver" or local.get("in_driver"):
                    return func(db, *args, **kwargs)
                local["in_driver"] = True
                t0 = time.thread_time()
                try:
                    return func(db, *args, **kwargs)
                finally:
                    local["in_driver"] = False
                    self.add(f"{self.current()} | {local['in_store']}: driver", time.thread_time() - t0)
            local["in_store"] = "driver" if kind == "driver" else kind
            t0 = time.thread_time()
            try:
                return func(db, *args, **kwargs)
            finally:
                local["in_store"] = None
                self.add(f"{self.current()} | {kind}", time.thread_time() - t0)

        return timed


def instrument(meter: Meter) -> None:
    import peewee

    from backend.store import db as store_db

    for name, (module_name, func_name) in PARTS.items():
        module = importlib.import_module(module_name)
        if hasattr(module, func_name):
            setattr(module, func_name, meter.part(name, getattr(module, func_name)))
    cls = store_db.LocalSqliteDatabase
    cls.execute = meter.store("statements", cls.execute)  # type: ignore[method-assign]
    cls.execute_sql = meter.store("driver", cls.execute_sql)  # type: ignore[method-assign]
    for name in ("begin", "commit", "rollback"):
        setattr(cls, name, meter.store("transaction", getattr(cls, name)))
    pragma = peewee.SqliteDatabase.pragma

    def timed_pragma(db: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.thread_time()
        try:
            return pragma(db, *args, **kwargs)
        finally:
            if threading.current_thread().name == "sqlite-checkpoint":
                meter.add("checkpoint", time.thread_time() - t0)

    peewee.SqliteDatabase.pragma = timed_pragma  # type: ignore[method-assign]


def _scope(method: str, path: str, key: bytes, body: bytes) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1"), (b"x-api-key", key)]
    if method == "POST":
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }


async def drive(
    app: Any, scope: dict[str, Any], body: bytes, requests: int, statuses: dict[int, int]
) -> None:
    async def one() -> None:
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            return {}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses[message["status"]] = statuses.get(message["status"], 0) + 1

        await app(dict(scope), receive, send)

    async def worker(n: int) -> None:
        for _ in range(n):
            await one()

    await asyncio.gather(*(worker(requests // CONCURRENCY) for _ in range(CONCURRENCY)))


async def measure(
    app: Any, scope: dict[str, Any], body: bytes, requests: int, meter: Meter | None
) -> dict[str, Any]:
    await drive(app, scope, body, CONCURRENCY * 10, {})  # warm-up: threads, connections, caches
    n = requests // CONCURRENCY * CONCURRENCY
    statuses: dict[int, int] = {}
    if meter:
        meter.cpu.clear()
    loop0, cpu0 = time.thread_time(), time.process_time()
    await drive(app, scope, body, n, statuses)
    loop1, cpu1 = time.thread_time(), time.process_time()
    out: dict[str, Any] = {
        "requests": n,
        "statuses": {str(k): v for k, v in statuses.items()},
        "cpu_us": round((cpu1 - cpu0) / n * 1e6, 1),
        "event_loop_us": round((loop1 - loop0) / n * 1e6, 1),
    }
    if meter:
        out["parts_us"] = {k: round(v / n * 1e6, 1) for k, v in sorted(meter.cpu.items())}
    return out


def child(runs: int, requests: int) -> None:
    """One checkout (this process's PYTHONPATH): prepare a data dir, build both apps, measure; JSON on stdout."""
    api = _bench_api()
    with tempfile.TemporaryDirectory(prefix="socialpub-bench-api-profile-") as tmp:
        os.environ.update(
            {
                "SOCIALPUB_DATA_DIR": tmp,
                "SOCIALPUB_RATE_LIMIT_PER_MINUTE": "100000000",
                "SOCIALPUB_LOG_LEVEL": "WARNING",
                "SOCIALPUB_SANDBOX_DELAY_S": "0",
            }
        )
        os.environ.pop("SOCIALPUB_DATABASE_URL", None)
        ids = api.prepare(Path(tmp), dict(os.environ))
        apps = {"product": api.real_app(), "baseline": api.bare_app()}
        meter = Meter()
        instrument(meter)
        key = ids["key"].encode()
        body = json.dumps(api.POST_BODY).encode()
        scopes = {
            ("product", "post"): _scope("POST", "/v1/posts", key, body),
            ("product", "get"): _scope("GET", f"/v1/posts/{ids['post']}", key, b""),
            ("baseline", "post"): _scope("POST", "/v1/posts", key, body),
            ("baseline", "get"): _scope("GET", "/v1/posts/post_bare", key, b""),
        }

        async def main() -> list[dict[str, Any]]:
            out = []
            for _ in range(runs):
                run: dict[str, Any] = {}
                for route in ROUTES:
                    for kind in ("product", "baseline"):
                        run.setdefault(kind, {})[route] = await measure(
                            apps[kind],
                            scopes[(kind, route)],
                            body if route == "post" else b"",
                            requests * (2 if route == "get" else 1),
                            meter if kind == "product" else None,
                        )
                out.append(run)
            return out

        import uvloop

        print(json.dumps(uvloop.run(main())))


def run_child(code: Path, runs: int, requests: int) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--runs", str(runs), "--requests", str(requests)],
        env=env,
        cwd=code,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per route: the product's parts (us a request), the rest, the totals and the baseline."""
    out: dict[str, Any] = {}
    for route in ROUTES:
        product = [r["product"][route] for r in runs]
        names = sorted({k for p in product for k in p.get("parts_us", {})})
        rows = {
            name: statistics.median(p.get("parts_us", {}).get(name, 0.0) for p in product) for name in names
        }
        rows["event loop"] = statistics.median(p["event_loop_us"] for p in product)
        total = statistics.median(p["cpu_us"] for p in product)
        # a part's figure includes its statements: shown apart, as peewee's share and the driver's (SQLite)
        shown: dict[str, float] = {}
        for name, value in rows.items():
            if " | " in name:
                continue
            inner = {k.split(" | ", 1)[1]: v for k, v in rows.items() if k.startswith(name + " | ")}
            store = 0.0
            if "statements" in inner:
                driver = inner.get("statements: driver", 0.0)
                shown[f"{name}: statements: peewee rendering the SQL"] = round(
                    inner["statements"] - driver, 1
                )
                shown[f"{name}: statements: SQLite"] = round(driver, 1)
                store += inner["statements"]
            if (
                "transaction" in inner
            ):  # peewee's share is a few calls: SQLite's commit (WAL writes) is the cost
                shown[f"{name}: BEGIN / COMMIT"] = round(inner["transaction"], 1)
                store += inner["transaction"]
            if "driver" in inner:  # SQL given as text (execute_sql outside a statement)
                shown[f"{name}: SQL as text: SQLite"] = round(inner["driver"], 1)
                store += inner["driver"]
            shown[f"{name}: the rest (building queries, reading rows, validation)" if store else name] = (
                round(value - store, 1)
            )
        for kind in ("statements", "transaction", "driver"):
            if f"outside a part | {kind}" in rows:
                shown[f"outside the parts: {kind}"] = round(rows[f"outside a part | {kind}"], 1)
        accounted = sum(shown.values())
        shown["rest (pool threads: hops, FastAPI in threads)"] = round(total - accounted, 1)
        out[route] = {
            "product_cpu_us": total,
            "baseline_cpu_us": statistics.median(r["baseline"][route]["cpu_us"] for r in runs),
            "baseline_event_loop_us": statistics.median(r["baseline"][route]["event_loop_us"] for r in runs),
            "product_parts_us": dict(sorted(shown.items(), key=lambda kv: -kv[1])),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=1600, help="POST requests a run (GET: twice as many)")
    parser.add_argument("--code", type=Path, default=None, help="another checkout profiled in the same runs")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.runs, args.requests)
        return 0
    api = _bench_api()
    checkouts = {"this": ROOT} | ({"other": args.code.resolve()} if args.code else {})
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for n in range(args.runs):
        for name, code in checkouts.items():
            runs[name] += run_child(code, 1, args.requests)
            last = runs[name][-1]
            print(
                f"run {n + 1}/{args.runs} {name}: "
                + "  ".join(
                    f"{route.upper()} {last['product'][route]['cpu_us']:.0f} us vs baseline "
                    f"{last['baseline'][route]['cpu_us']:.0f} us"
                    for route in ROUTES
                ),
                flush=True,
            )
    result = {
        "benchmark": "api_profile",
        "what": "CPU time a request (us), in-process (no HTTP server), product vs bench/api.py's baseline, and the "
        "product's request path by part (medians of the runs)",
        "code": {"path": str(ROOT), **api.commit_of(ROOT)},
        "config": {
            "runs": args.runs,
            "post_requests": args.requests,
            "get_requests": args.requests * 2,
            "concurrency": CONCURRENCY,
            "store": "sqlite (WAL)",
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "medians": table(runs["this"]),
        "runs": runs["this"],
        **(
            {
                "other": {
                    "code": {"path": str(checkouts["other"]), **api.commit_of(checkouts["other"])},
                    "medians": table(runs["other"]),
                    "runs": runs["other"],
                }
            }
            if args.code
            else {}
        ),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for label, medians in [("this", result["medians"])] + (
        [("other", result["other"]["medians"])] if args.code else []
    ):
        for route in ROUTES:
            m = medians[route]
            print(
                f"\n{label} {route.upper()}: product {m['product_cpu_us']:.0f} us a request, baseline "
                f"{m['baseline_cpu_us']:.0f} us (event loop {m['baseline_event_loop_us']:.0f})"
            )
            for name, value in m["product_parts_us"].items():
                print(f"  {value:8.1f}  {name}")
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
