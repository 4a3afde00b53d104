"""`socialpub serve` runs its worker in a process of its own (issue 30, item 7): a busy API never shares an
interpreter with publishing. The worker process publishes, stops with the server, and stops by itself when the
server is killed; --worker-in-process keeps the single process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.cli.test_remote import free_port

EXE = str(Path(sys.executable).with_name("socialpub"))


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes whose parent is `pid` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append((int(entry.name), cmd))
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _serve(
    tmp: Path, *flags: str, extra: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env.update(
        SOCIALPUB_DATA_DIR=str(tmp / "data"),
        SOCIALPUB_BASE_URL=f"http://127.0.0.1:{port}",
        SOCIALPUB_SANDBOX_DELAY_S="0",
        SOCIALPUB_SANDBOX_PROCESSING_S="0",
        SOCIALPUB_WORKER_POLL_S="0.1",
        **(extra or {}),
    )
    init = subprocess.run(
        [EXE, "init", "--sandbox", "--json", "--email", "me@acme.test", "--password", "s3cret-pass"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert init.returncode == 0, init.stderr
    key = json.loads(init.stdout)["apiKey"]
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen(
        [EXE, "serve", "--host", "127.0.0.1", "--port", str(port), *flags],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert proc.poll() is None, (tmp / "serve.log").read_text()
        assert time.monotonic() < deadline, "socialpub serve did not start"
        time.sleep(0.2)
    return proc, {"url": url, "key": key}


def _publishes(server: dict[str, str]) -> None:
    headers = {"x-api-key": server["key"]}
    created = httpx.post(
        server["url"] + "/v1/posts",
        headers=headers,
        json={"targets": ["facebook"], "content": "from the serve worker test"},
        timeout=10,
    )
    assert created.status_code == 202, created.text
    deadline = time.monotonic() + 30
    while True:
        got = httpx.get(server["url"] + f"/v1/posts/{created.json()['id']}", headers=headers, timeout=10)
        if got.json()["status"] == "completed":
            return
        assert time.monotonic() < deadline, got.text
        time.sleep(0.2)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)


def test_serve_runs_its_worker_in_a_process_of_its_own(tmp_path: Path) -> None:
    proc, server = _serve(tmp_path)
    try:
        workers = [pid for pid, cmd in _children(proc.pid) if " worker --parent " in cmd]
        assert len(workers) == 1, _children(proc.pid)
        _publishes(server)  # the worker process publishes
        os.kill(proc.pid, signal.SIGKILL)  # the server killed: its worker stops by itself
        proc.wait(10)
        deadline = time.monotonic() + 15
        while _alive(workers[0]):
            assert time.monotonic() < deadline, "the worker outlived its server"
            time.sleep(0.1)
        assert "the server process" in (tmp_path / "serve.log").read_text()
    finally:
        _stop(proc)


@pytest.mark.parametrize("how", ["--worker-in-process", "SOCIALPUB_SERVE_WORKER=thread"])
def test_serve_can_keep_its_worker_in_process(tmp_path: Path, how: str) -> None:
    name, _, value = how.partition("=")
    flags = (how,) if how.startswith("--") else ()
    proc, server = _serve(tmp_path, *flags, extra={} if flags else {name: value})
    try:
        assert not [cmd for _, cmd in _children(proc.pid) if " worker " in cmd]
        _publishes(server)
    finally:
        _stop(proc)
