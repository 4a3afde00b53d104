"""`make fuzz`: schemathesis against a real server, every operation, every check.

1. A fresh data dir: `socialpub init --sandbox --json` (a workspace, an API key, an owner session, one sandbox
   account per network), then `socialpub admin plan GROWTH` (a subscription: no free-publication limit).
2. Each network's emulator served over HTTP on 127.0.0.1 (`socialpub sandbox serve NETWORK`), and the live
   networks pointed at them (SOCIALPUB_<NETWORK>_BASE_URL, an OAuth app per network): `connect/token`, `check`
   and the OAuth routes talk to real servers on loopback, never to a network's host. The API served by uvicorn on
   127.0.0.1 and a free port (no worker: the contract is the API's), with the per-key rate limit lifted. The
   media fetcher's resolver is stubbed in that process, as in the test suite: random `url` and `mediaUrls`
   values get the real scheme / credential / address checks, then `fetch_failed` instead of a DNS look-up or a
   connection, so the run sends no traffic beyond loopback.
3. `st run <url>/openapi.json --checks all` with both credentials: `x-api-key` (API-key operations) and
   `Authorization: Bearer <session>` (key management, workspace edits, account connections). A route reads the
   one it needs (an API key wins on API-key routes, the session on session-only routes).
   tests/api/schemathesis.toml lists the few operations where a schema-valid request can still be refused
   with 400 by a rule no JSON Schema can state (per-network rules, unreachable media), each with its code.
4. The server is stopped; the exit code is schemathesis's (0: no failure, no server error).

    python tests/api/fuzz_run.py [--max-examples 50] [--workers 1] [-- more st run arguments]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int) -> None:
    """The server process: the app as `socialpub serve --no-worker` builds it, the fetcher stubbed."""
    sys.path.insert(0, str(ROOT))
    import uvicorn

    from backend.api.app import create_app
    from backend.config import get_settings
    from backend.media import fetch
    from backend.outbound import guard

    def no_dns(host: str, port: int) -> list[str]:
        raise OSError("no DNS look-ups in the fuzz run")

    checked = fetch.check_url

    def loopback_only(url: str, settings):  # type: ignore[no-untyped-def]
        checked(url, settings)  # the real rules (scheme, credentials, address literal): their real errors
        raise guard.FetchError("the fuzz run sends no traffic beyond loopback", "address")

    guard.RESOLVER = no_dns
    fetch.check_url = loopback_only
    uvicorn.run(
        create_app(get_settings()), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )


def _cli(*args: str, env: dict[str, str]) -> str:
    code = "import sys; from socialpub_tui.cli.main import main; sys.argv[0] = 'socialpub'; main()"
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    )
    return out.stdout


def networks() -> list[str]:
    """Every registered network with an emulator (plugins' too)."""
    from backend.networks import registry

    return [n.name for n in registry.networks() if n.emulator]


def emulators(tmp: str, env: dict[str, str]) -> tuple[list[subprocess.Popen[bytes]], dict[str, str]]:
    """Each network's emulator served on a free loopback port; the settings that point the live networks at them
    (their API bases, as `sandbox serve --json` prints them, and an OAuth app per network)."""
    procs, settings = [], {}
    for network in networks():
        port = free_port()
        proc = subprocess.Popen(
            [str(BIN / "socialpub"), "sandbox", "serve", network, "--port", str(port), "--json"]
            + ["--data-dir", str(Path(tmp) / "emulators")],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
        )
        procs.append(proc)
        assert proc.stdout is not None
        settings.update(json.loads(proc.stdout.readline())["env"])
        settings[f"SOCIALPUB_{network.upper()}_CLIENT_ID"] = f"fuzz-{network}"
        settings[f"SOCIALPUB_{network.upper()}_CLIENT_SECRET"] = f"fuzz-secret-{network}"
        wait_for(port, proc)
    return procs, settings


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_for(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start within 60 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=50, help="test cases per operation and phase")
    parser.add_argument("--workers", default="1", help="schemathesis workers (the server has the other core)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("st_args", nargs="*", help="more arguments for `st run` (after --)")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0

    st = shutil.which("st", path=str(BIN)) or shutil.which("st")
    if st is None:
        raise SystemExit("schemathesis (`st`) is not installed: pip install -e '.[dev]'")
    with tempfile.TemporaryDirectory(prefix="socialpub-fuzz-") as tmp:
        env = {
            **os.environ,
            "SOCIALPUB_DATA_DIR": tmp,
            "SOCIALPUB_RATE_LIMIT_PER_MINUTE": "100000000",
            "SOCIALPUB_SANDBOX_DELAY_S": "0",
            "SOCIALPUB_SANDBOX_PROCESSING_S": "0",
            "SOCIALPUB_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
        for name in ("SOCIALPUB_DATABASE_URL", "SOCIALPUB_SECRET_KEY"):
            env.pop(name, None)
        created = json.loads(
            _cli("init", "--sandbox", "--json", "--password", "fuzz-owner-password", env=env)
        )
        period_end = (datetime.now(UTC) + timedelta(days=30)).isoformat()
        _cli("admin", "plan", "GROWTH", "--status", "active", "--period-end", period_end, env=env)
        served, network_settings = emulators(tmp, env)
        env.update(network_settings)
        port = free_port()
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)], env=env, cwd=ROOT)
        try:
            wait_for(port, server)
            base = f"http://127.0.0.1:{port}"
            command = [
                st,
                "--config-file",
                str(Path(__file__).with_name("schemathesis.toml")),
                "run",
                f"{base}/openapi.json",
                "--checks",
                "all",
                "--header",
                f"x-api-key: {created['apiKey']}",
                "--header",
                f"Authorization: Bearer {created['sessionToken']}",
                "--max-examples",
                str(args.max_examples),
                "--workers",
                args.workers,
                "--generation-deterministic",
                "--no-color",  # the same cases on every run
                "--request-timeout",
                "30",
                *args.st_args,
            ]
            started = time.monotonic()
            code = subprocess.run(command, cwd=tmp, env={**env, "SCHEMATHESIS_HOOKS": ""}).returncode
            print(f"fuzz: st run exited {code} after {time.monotonic() - started:.0f} s", file=sys.stderr)
            return code
        finally:
            for proc in (server, *served):
                stop(proc)


if __name__ == "__main__":
    sys.exit(main())
