"""Requests per second of POST /v1/posts and GET /v1/posts/:id against a baseline FastAPI app, in the same runs.

Each server is the same uvicorn (one process, loopback, uvloop + httptools, no access log). The product: the real
app (SQLite in a temporary data dir, API-key auth with its rate-limit counter, validation, one post row + targets
+ publish job per POST). The baseline does the same kind of work with the same dispatch, minus the store: the same
middleware stack (body limit, rate-limit headers) and error handlers, a plain `def` dependency reading the
x-api-key header (thread hop), a plain `def` handler (thread hop) taking the same validated body (PostCreate) and
answering a JSON of the post's shape. The load comes from another process: a small keep-alive HTTP/1.1 client on
asyncio streams (lighter than any Python HTTP library, so the generator is not what is measured).

Each run measures the four scenarios back to back (product then baseline, POST then GET) and takes the ratio
within the run; the figure quoted is the median of the runs' ratios. The results file records the commit measured
(`--code DIR` measures another checkout, e.g. the code before a change), every run and the medians.

    .venv/bin/python bench/api.py [--runs 5] [--seconds 3] [--concurrency 16] [--code DIR]

Goal (issue 12): POST >= 35 % and GET >= 60 % of the baseline. Results: bench/results/api.json.
"""

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
    """The baseline: the product's middleware stack and error handlers, a `def` dependency and a `def` handler
    (each a thread hop, as in the product), the same request model; no store."""
    from fastapi import Depends, FastAPI, Request
    from fastapi.responses import Response
    from pydantic_core import to_json

    from backend.api import middleware
    from backend.api.errors import install_error_handlers
    from backend.errors import ApiError
    from backend.schemas.posts import PostCreate

    app = FastAPI()
    install_error_handlers(app)
    target = {
        "platform": "facebook",
        "accountId": "acc_bare",
        "accountName": "Bare",
        "status": "pending",
        "externalPostId": None,
        "postUrl": None,
        "failReason": None,
        "failType": None,
        "completedAt": None,
        "nextAttemptAt": None,
    }
    sample = {
        "id": "post_bare",
        "status": "processing",
        "scheduledAt": None,
        "createdAt": "2030-01-01T00:00:00.000Z",
        "updatedAt": "2030-01-01T00:00:00.000Z",
        "content": "",
        "mediaUrls": [],
        "options": {},
        "idempotencyKey": None,
        "targets": [target, {**target, "platform": "linkedin"}],
    }

    def key(request: Request) -> str:
        presented = request.headers.get("x-api-key")
        if presented is None:
            raise ApiError(401, "invalid_api_key", "send your API key in the x-api-key header")
        return presented

    @app.post("/v1/posts", status_code=202)
    def create(body: PostCreate, _: str = Depends(key)) -> Response:
        return Response(
            to_json({**sample, "content": body.content}), status_code=202, media_type="application/json"
        )

    @app.get("/v1/posts/{post_id}")
    def read(post_id: str, _: str = Depends(key)) -> Response:
        return Response(to_json({**sample, "id": post_id}), media_type="application/json")

    if hasattr(middleware, "ApiMiddleware"):  # the product's checks in one layer (since branch speed7)
        app.add_middleware(middleware.ApiMiddleware, default_limit=1 << 20, limits={})
    else:  # a checkout from before (--compare): its two layers of the same checks
        app.add_middleware(middleware.RateLimitHeadersMiddleware)
        app.add_middleware(middleware.BodyLimitMiddleware, default_limit=1 << 20, limits={})
    return app


def real_app():  # type: ignore[no-untyped-def]
    from backend.api.app import create_app
    from backend.config import Settings

    return create_app(Settings())


def serve(kind: str, port: int) -> None:
    sys.path.insert(0, os.environ.get("PYTHONPATH", str(ROOT)).split(os.pathsep)[0])
    import uvicorn

    app = bare_app() if kind == "bare" else real_app()
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        loop="uvloop",
        http="httptools",
        workers=1,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(kind: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind, "--port", str(port)], env=env, cwd=env["PYTHONPATH"]
    )
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


async def _worker(
    port: int,
    request: bytes,
    stop_at: float,
    warm_until: float,
    latencies: list[float],
    statuses: dict[int, int],
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while True:
            t0 = time.perf_counter()
            if t0 >= stop_at:
                return
            writer.write(request)
            status = await _read_response(reader)
            t1 = time.perf_counter()
            statuses[-1] = statuses.get(-1, 0) + 1  # every answer, warm-up included (for CPU per request)
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


def _load(port: int, request: bytes, seconds: float, warmup: float, concurrency: int, out: mp.Queue) -> None:  # type: ignore[type-arg]
    async def main() -> dict[str, Any]:
        latencies: list[float] = []
        statuses: dict[int, int] = {}
        start = time.perf_counter()
        warm_until, stop_at = start + warmup, start + warmup + seconds
        await asyncio.gather(
            *(_worker(port, request, stop_at, warm_until, latencies, statuses) for _ in range(concurrency))
        )
        latencies.sort()
        n = len(latencies)
        total = statuses.pop(-1, 0)
        return {
            "requests": n,
            "requests_total": total,
            "rps": round(n / seconds, 1),
            "statuses": {str(k): v for k, v in statuses.items()},
            "p50_ms": round(latencies[n // 2] * 1000, 2) if n else None,
            "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        }

    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out.put(asyncio.run(main()))


def cpu_s(pid: int) -> float:
    """CPU time (user + system) the server process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(
    port: int, request: bytes, seconds: float, warmup: float, concurrency: int, pid: int | None = None
) -> dict[str, Any]:
    """Run the load generator in another process; with `pid`, also the server's CPU time per request (less
    sensitive to other work on a shared machine than requests/s)."""
    before = cpu_s(pid) if pid else 0.0
    ctx = mp.get_context("spawn")
    q: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    p = ctx.Process(target=_load, args=(port, request, seconds, warmup, concurrency, q))
    p.start()
    result = q.get(timeout=seconds + warmup + 60)
    p.join()
    if pid and result["requests_total"]:
        result["server_cpu_us_per_request"] = round((cpu_s(pid) - before) / result["requests_total"] * 1e6, 1)
    return result


# ------------------------------------------------------------------------------------------- setup


def prepare(data_dir: Path, env: dict[str, str]) -> dict[str, str]:
    """A workspace with a subscription (no free-publication limit), five sandbox accounts, one post to read."""
    code = (
        "import json, datetime\n"
        "from backend.config import Settings\n"
        "from backend.store.db import init_database\n"
        "from backend.services import bootstrap, accounts, workspace, security\n"
        "from backend.services.posts import accept\n"
        "from backend import clock\n"
        "s = Settings()\n"
        "init_database(s); security.ensure_secret(s)\n"
        "c = bootstrap.create_workspace(s, 'Bench', 'bench@example.com', 'correct horse battery')\n"
        "workspace.set_plan(c.workspace_id, 'GROWTH', 'active', clock.now() + datetime.timedelta(days=30))\n"
        "accounts.connect_sandbox_defaults(s, c.workspace_id)\n"
        "p, _ = accept.create(s, c.workspace_id, {'targets': ['facebook', 'linkedin'], 'content': 'read me'})\n"
        "print(json.dumps({'key': c.api_key, 'post': p.id}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=env["PYTHONPATH"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def reference_loop_ms() -> float:
    """The machine's reference loop time (issue 34), as bench/support/engine.machine measures it: `sum(range(10**7))`,
    the best of 3 (that module is not imported here: it sets the engine benchmarks' environment, which the servers
    started here would inherit)."""
    loops = []
    for _ in range(3):
        t0 = time.perf_counter()
        sum(range(10**7))
        loops.append(time.perf_counter() - t0)
    return round(1000 * min(loops), 1)


def commit_of(code: Path) -> dict[str, Any]:
    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", str(code), *args], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "branch": git("rev-parse", "--abbrev-ref", "HEAD") or None,
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs; the quoted figure is the median ratio")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per scenario")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds before each scenario")
    parser.add_argument("--concurrency", type=int, default=16, help="keep-alive connections")
    parser.add_argument(
        "--code", type=Path, default=ROOT, help="the checkout whose app is measured (default: this)"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="another checkout (e.g. the code before a change) measured in the same runs",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file")
    parser.add_argument("--serve", choices=["bare", "real"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.port)
        return 0

    code = args.code.resolve()
    loadavg_at_start = [round(x, 2) for x in os.getloadavg()]
    reference_ms = reference_loop_ms()
    runs: list[dict[str, Any]] = []
    kinds = ["real", "bare"] + (["before"] if args.compare else [])
    with tempfile.TemporaryDirectory(prefix="socialpub-bench-api-") as tmp:
        body = json.dumps(POST_BODY).encode()
        requests: dict[str, dict[str, bytes]] = {}
        servers: dict[str, tuple[subprocess.Popen[bytes], int]] = {}
        try:
            for kind in kinds:
                checkout = args.compare.resolve() if kind == "before" else code
                data = Path(tmp) / kind
                env = {
                    **os.environ,
                    "SOCIALPUB_DATA_DIR": str(data),
                    "SOCIALPUB_RATE_LIMIT_PER_MINUTE": "100000000",
                    "SOCIALPUB_LOG_LEVEL": "WARNING",
                    "SOCIALPUB_SANDBOX_DELAY_S": "0",
                    "PYTHONPATH": str(checkout),
                }
                env.pop("SOCIALPUB_DATABASE_URL", None)
                ids = prepare(data, env)
                auth = {"x-api-key": ids["key"]}
                post_id = "post_bare" if kind == "bare" else ids["post"]
                requests[kind] = {
                    "post": _request("POST", "/v1/posts", auth, body),
                    "get": _request("GET", f"/v1/posts/{post_id}", auth),
                }
                servers[kind] = start_server("bare" if kind == "bare" else "real", env)
            for n in range(args.runs):
                run: dict[str, Any] = {}
                for name in ("post", "get"):
                    for kind in kinds:
                        proc, port = servers[kind]
                        run.setdefault(kind, {})[name] = load(
                            port, requests[kind][name], args.seconds, args.warmup, args.concurrency, proc.pid
                        )
                run["ratio"] = {
                    name: round(run["real"][name]["rps"] / run["bare"][name]["rps"], 3)
                    if run["bare"][name]["rps"]
                    else None
                    for name in ("post", "get")
                }
                if args.compare:
                    run["before_ratio"] = {
                        name: round(run["before"][name]["rps"] / run["bare"][name]["rps"], 3)
                        for name in ("post", "get")
                    }
                run["cpu_ratio"] = {
                    name: round(
                        run["bare"][name]["server_cpu_us_per_request"]
                        / run["real"][name]["server_cpu_us_per_request"],
                        3,
                    )
                    for name in ("post", "get")
                }
                runs.append(run)
                print(
                    f"run {n + 1}/{args.runs}: "
                    + "  ".join(
                        f"{name.upper()} {run['real'][name]['rps']:.0f} vs {run['bare'][name]['rps']:.0f} req/s "
                        f"= {run['ratio'][name]:.0%} (CPU/request {run['real'][name]['server_cpu_us_per_request']:.0f} vs "
                        f"{run['bare'][name]['server_cpu_us_per_request']:.0f} us = {run['cpu_ratio'][name]:.0%})"
                        for name in ("post", "get")
                    )
                    + (
                        f"  before: POST {run['before_ratio']['post']:.0%} GET {run['before_ratio']['get']:.0%}"
                        if args.compare
                        else ""
                    ),
                    flush=True,
                )
        finally:
            for proc, _ in servers.values():
                stop_server(proc)

    goal = {"post": 0.35, "get": 0.60}
    expected = {"post": "202", "get": "200"}
    # every server, the baseline included, must answer every request as intended: a baseline answering 400
    # does less work than the product and would flatter nothing but the ratio
    ok = {
        name: all(set(r[kind][name]["statuses"]) <= {expected[name]} for r in runs for kind in kinds)
        for name in goal
    }
    median = {name: round(statistics.median(r["ratio"][name] or 0 for r in runs), 3) for name in goal}
    result = {
        "benchmark": "api",
        "what": "requests/s of POST /v1/posts and GET /v1/posts/:id vs a baseline FastAPI app with the same "
        "dispatch (def dependency + def handler, same middleware and request model, no store)",
        "code": {"path": str(code), **commit_of(code)},
        "config": {
            "runs": args.runs,
            "seconds": args.seconds,
            "warmup_s": args.warmup,
            "concurrency": args.concurrency,
            "store": "sqlite (WAL)",
            "server": "uvicorn 1 process, uvloop, httptools, loopback",
            "load": "separate process, asyncio keep-alive HTTP/1.1",
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_at_start": loadavg_at_start,
            "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
            "reference_loop_ms": reference_ms,
        },
        "runs": runs,
        "ratio_per_run": {name: [r["ratio"][name] for r in runs] for name in goal},
        "median_ratio": median,
        **(
            {
                "before": {
                    "code": {"path": str(args.compare.resolve()), **commit_of(args.compare.resolve())},
                    "ratio_per_run": {name: [r["before_ratio"][name] for r in runs] for name in goal},
                    "median_ratio": {
                        name: round(statistics.median(r["before_ratio"][name] for r in runs), 3)
                        for name in goal
                    },
                }
            }
            if args.compare
            else {}
        ),
        "cpu_ratio_per_run": {name: [r["cpu_ratio"][name] for r in runs] for name in goal},
        "median_cpu_ratio": {
            name: round(statistics.median(r["cpu_ratio"][name] for r in runs), 3) for name in goal
        },
        "median_rps": {
            kind: {name: statistics.median(r[kind][name]["rps"] for r in runs) for name in goal}
            for kind in kinds
        },
        "goal": goal,
        "only_expected_statuses": ok,
        "meets_goal": {name: bool(median[name] >= goal[name] and ok[name]) for name in goal},
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for name in goal:
        print(
            f"{name.upper():5} median ratio {median[name]:.0%} (runs: "
            f"{' / '.join(f'{r:.0%}' for r in result['ratio_per_run'][name])})  goal {goal[name]:.0%}  "
            f"{'OK' if result['meets_goal'][name] else 'MISSED'}"
        )
    print(f"results: {args.out}")
    return 0 if all(result["meets_goal"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
