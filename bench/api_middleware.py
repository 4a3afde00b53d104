"""The CPU time of the API's own ASGI middleware stack a request, apart from everything else.

The product app is built (`create_app`, a temporary SQLite data dir) and its middleware (`app.user_middleware`,
in the order Starlette stacks it) is put around a trivial ASGI app that reads the body (POST) and answers 200 with
the rate-limit headers to add; one task on uvloop calls it in a loop. FastAPI's own layers, the routing and the
store are left out: bench/api_profile.py measures the whole request. `--code DIR` measures another checkout's
stack in the same rounds, alternating process by process.

    .venv/bin/python bench/api_middleware.py [--rounds 5] [--requests 20000] [--code DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BODY = json.dumps(
    {"targets": ["facebook", "linkedin"], "content": "Benchmark post: hello from bench/api.py"}
).encode()


def child(requests: int) -> dict[str, Any]:
    """This process's checkout (PYTHONPATH): one measurement per method, µs a request."""
    import asyncio

    import uvloop

    with tempfile.TemporaryDirectory(prefix="socialpub-bench-mw-") as tmp:
        os.environ.update({"SOCIALPUB_DATA_DIR": tmp, "SOCIALPUB_LOG_LEVEL": "WARNING"})
        os.environ.pop("SOCIALPUB_DATABASE_URL", None)
        from backend.api.app import create_app
        from backend.config import Settings
        from backend.services import security

        settings = Settings()
        security.ensure_secret(settings)  # a throwaway data dir's own secret, as `socialpub init` makes it
        app = create_app(settings)

        async def inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["method"] == "POST":
                await receive()
            scope.setdefault("state", {})["ratelimit_headers"] = {"RateLimit": "r", "RateLimit-Policy": "p"}
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
            await send({"type": "http.response.body", "body": b"{}"})

        stack: Any = inner
        for cls, args, kwargs in reversed(app.user_middleware):
            stack = cls(stack, *args, **kwargs)
        layers = [m.cls.__name__ for m in app.user_middleware]  # type: ignore[attr-defined]

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": BODY, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            return None

        def scope(method: str) -> dict[str, Any]:
            headers = [(b"host", b"127.0.0.1"), (b"x-api-key", b"k")]
            if method == "POST":
                headers += [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(BODY)).encode()),
                ]
            return {
                "type": "http",
                "method": method,
                "path": "/v1/posts",
                "raw_path": b"/v1/posts",
                "query_string": b"",
                "root_path": "",
                "headers": headers,
            }

        async def main() -> dict[str, float]:
            out = {}
            for method in ("GET", "POST"):
                for _ in range(200):  # warm-up (the first request includes the posts router)
                    await stack(scope(method), receive, send)
                t0 = time.thread_time()
                for _ in range(requests):
                    await stack(scope(method), receive, send)
                out[method] = round((time.thread_time() - t0) / requests * 1e6, 2)
            return out

        result = uvloop.run(main())
        del asyncio
        return {"layers": layers, "us": result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument(
        "--code", type=Path, default=None, help="another checkout measured in the same rounds"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.requests)))
        return 0
    checkouts = {"this": ROOT} | ({"other": args.code.resolve()} if args.code else {})
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
    for n in range(args.rounds):
        for name, code in checkouts.items():
            out = subprocess.run(
                [sys.executable, __file__, "--child", "--requests", str(args.requests)],
                env={**os.environ, "PYTHONPATH": str(code)},
                cwd=code,
                check=True,
                capture_output=True,
                text=True,
            )
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            us = runs[name][-1]["us"]
            print(f"round {n + 1}/{args.rounds} {name}: GET {us['GET']} us  POST {us['POST']} us", flush=True)
    for name, rs in runs.items():
        print(f"\n{name} ({checkouts[name]}): {len(rs[0]['layers'])} layers {rs[0]['layers']}")
        for method in ("GET", "POST"):
            print(f"  {method}: median {statistics.median(r['us'][method] for r in rs):.2f} us a request")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
