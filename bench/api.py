"""Requests per second of POST /v1/posts and GET /v1/posts/:id against a bare FastAPI handler, in one run.

Each server is the same uvicorn (one process, loopback, uvloop + httptools, no access log) serving either
the real app (SQLite in a temporary data dir, API-key auth, rate-limit counter, validation, one post row +
targets + publish job per POST) or a bare FastAPI app whose plain `def` handlers answer a JSON of the same
shape without touching anything. The load comes from another process: a small keep-alive HTTP/1.1 client
on asyncio streams (lighter than any Python HTTP library, so the generator is not what is measured).

    .venv/bin/python bench/api.py [--seconds 8] [--concurrency 16]

Goal (issue 4): POST >= 40 % and GET >= 60 % of the bare handler. Results: bench/results/api.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "api.json"
POST_BODY = {"targets": ["facebook", "linkedin"], "content": "Benchmark post: hello from bench/api.py"}


# ------------------------------------------------------------------------------------------- servers


def bare_app():  # type: ignore[no-untyped-def]
    """The baseline: FastAPI, plain `def` handlers (run in the threadpool like ours), JSON in and out."""
    from fastapi import FastAPI

    app = FastAPI()
    sample = {"id": "post_bare", "status": "processing", "scheduledAt": None, "createdAt": "2030-01-01T00:00:00.000Z",
              "targets": [{"platform": "facebook", "status": "pending"}, {"platform": "linkedin", "status": "pending"}]}

    @app.post("/v1/posts", status_code=202)
    def create(body: dict[str, Any]) -> dict[str, Any]:
        return {**sample, "content": body.get("content", "")}

    @app.get("/v1/posts/{post_id}")
    def read(post_id: str) -> dict[str, Any]:
        return {**sample, "id": post_id}

    return app


def real_app():  # type: ignore[no-untyped-def]
    from backend.api.app import create_app
    from backend.config import Settings

    return create_app(Settings())


def serve(kind: str, port: int) -> None:
    sys.path.insert(0, str(ROOT))
    import uvicorn

    app = bare_app() if kind == "bare" else real_app()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, loop="uvloop",
                http="httptools", workers=1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(kind: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", kind, "--port", str(port)], env=env, cwd=ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"{kind} server exited with {proc.returncode}") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------------------------------- load generator


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head[9:12])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length:
        await reader.readexactly(length)
    return status


async def _worker(port: int, request: bytes, stop_at: float, warm_until: float, latencies: list[float],
                  statuses: dict[int, int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while True:
            t0 = time.perf_counter()
            if t0 >= stop_at:
                return
            writer.write(request)
            status = await _read_response(reader)
            t1 = time.perf_counter()
            if t0 >= warm_until:
                latencies.append(t1 - t0)
                statuses[status] = statuses.get(status, 0) + 1
    finally:
        writer.close()


def _request(method: str, path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: keep-alive"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body or method == "POST":
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _load(port: int, request: bytes, seconds: float, warmup: float, concurrency: int,
          out: mp.Queue) -> None:  # type: ignore[type-arg]
    async def main() -> dict[str, Any]:
        latencies: list[float] = []
        statuses: dict[int, int] = {}
        start = time.perf_counter()
        warm_until, stop_at = start + warmup, start + warmup + seconds
        await asyncio.gather(*(_worker(port, request, stop_at, warm_until, latencies, statuses)
                               for _ in range(concurrency)))
        latencies.sort()
        n = len(latencies)
        return {
            "requests": n, "rps": round(n / seconds, 1), "statuses": {str(k): v for k, v in statuses.items()},
            "p50_ms": round(latencies[n // 2] * 1000, 2) if n else None,
            "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        }

    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out.put(asyncio.run(main()))


def load(port: int, request: bytes, seconds: float, warmup: float, concurrency: int) -> dict[str, Any]:
    """Run the load generator in another process."""
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    p = ctx.Process(target=_load, args=(port, request, seconds, warmup, concurrency, q))
    p.start()
    result = q.get(timeout=seconds + warmup + 60)
    p.join()
    return result


# ------------------------------------------------------------------------------------------- setup


def prepare(data_dir: Path, env: dict[str, str]) -> dict[str, str]:
    """A workspace with a subscription (no free-publication limit), five sandbox accounts, one post to read."""
    code = (
        "import json, datetime\n"
        "from backend.config import Settings\n"
        "from backend.store.db import init_database\n"
        "from backend.services import bootstrap, accounts, workspace, security, posts\n"
        "from backend import clock\n"
        "s = Settings()\n"
        "init_database(s); security.ensure_secret(s)\n"
        "c = bootstrap.create_workspace(s, 'Bench', 'bench@example.com', 'correct horse battery')\n"
        "workspace.set_plan(c.workspace_id, 'GROWTH', 'active', clock.now() + datetime.timedelta(days=30))\n"
        "accounts.connect_sandbox_defaults(c.workspace_id)\n"
        "p, _ = posts.create(s, c.workspace_id, {'targets': ['facebook', 'linkedin'], 'content': 'read me'})\n"
        "print(json.dumps({'key': c.api_key, 'post': p.id}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(kind: str, env: dict[str, str], scenarios: list[tuple[str, bytes]], seconds: float, warmup: float,
            concurrency: int) -> dict[str, Any]:
    proc, port = start_server(kind, env)
    try:
        return {name: load(port, req, seconds, warmup, concurrency) for name, req in scenarios}
    finally:
        stop_server(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per scenario")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each scenario")
    parser.add_argument("--concurrency", type=int, default=16, help="keep-alive connections")
    parser.add_argument("--serve", choices=["bare", "real"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return 0

    with tempfile.TemporaryDirectory(prefix="socialpub-bench-api-") as tmp:
        env = {**os.environ, "SOCIALPUB_DATA_DIR": tmp, "SOCIALPUB_RATE_LIMIT_PER_MINUTE": "100000000",
               "SOCIALPUB_LOG_LEVEL": "WARNING", "SOCIALPUB_SANDBOX_DELAY_S": "0", "PYTHONPATH": str(ROOT)}
        env.pop("SOCIALPUB_DATABASE_URL", None)
        ids = prepare(Path(tmp), env)
        body = json.dumps(POST_BODY).encode()
        auth = {"x-api-key": ids["key"]}
        real = measure("real", env, [
            ("post", _request("POST", "/v1/posts", auth, body)),
            ("get", _request("GET", f"/v1/posts/{ids['post']}", auth)),
        ], args.seconds, args.warmup, args.concurrency)
        bare = measure("bare", env, [
            ("post", _request("POST", "/v1/posts", {}, body)),
            ("get", _request("GET", "/v1/posts/post_bare", {})),
        ], args.seconds, args.warmup, args.concurrency)

    ok = {name: set(real[name]["statuses"]) <= {"202" if name == "post" else "200"} for name in real}
    ratio = {name: round(real[name]["rps"] / bare[name]["rps"], 3) if bare[name]["rps"] else None for name in real}
    goal = {"post": 0.40, "get": 0.60}
    result = {
        "benchmark": "api",
        "what": "requests/s of POST /v1/posts and GET /v1/posts/:id vs a bare FastAPI handler, same uvicorn setup",
        "config": {"seconds": args.seconds, "warmup_s": args.warmup, "concurrency": args.concurrency,
                   "store": "sqlite (WAL)", "server": "uvicorn 1 process, uvloop, httptools, loopback",
                   "load": "separate process, asyncio keep-alive HTTP/1.1"},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "real": real, "bare": bare, "ratio": ratio, "goal": goal,
        "only_expected_statuses": ok,
        "meets_goal": {name: bool(ratio[name] is not None and ratio[name] >= goal[name] and ok[name])
                       for name in goal},
        "median_latency_ms": {name: statistics.median([real[name]["p50_ms"] or 0]) for name in real},
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    for name in ("post", "get"):
        print(f"{name.upper():5} real {real[name]['rps']:>8.1f} req/s (p50 {real[name]['p50_ms']} ms, "
              f"p99 {real[name]['p99_ms']} ms)  bare {bare[name]['rps']:>8.1f} req/s  "
              f"ratio {ratio[name]:.0%}  goal {goal[name]:.0%}  {'OK' if result['meets_goal'][name] else 'MISSED'}"
              f"  statuses {real[name]['statuses']}")
    print(f"results: {RESULTS.relative_to(ROOT)}")
    return 0 if all(result["meets_goal"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
