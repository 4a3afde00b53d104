"""`socialpub serve` bounds its clients (issue 30 item 6; backend/operator/httpserver.py): half-sent requests are
closed after the header timeout, a body too slow is 408, connections are bounded per client and in all, while
`GET /v1/health` keeps answering. Real connections to the app served by uvicorn on loopback addresses."""

from __future__ import annotations

import resource
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from backend.operator.httpserver import bounded_config
from tests.support.live import served

PARTIAL = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: a"  # a request line and half a header, then nothing


@pytest.fixture
def fds() -> Iterator[None]:
    """Room for ~2,100 descriptors in this process (the test's 1,000 sockets and the server's 1,000)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the open-files hard limit ({hard}) is under {wanted}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def serve(app: Any, settings: Any, **limits: Any) -> Any:
    for name, value in limits.items():
        setattr(settings, f"server_{name}", value)
    config = bounded_config(app, settings, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    return served(app, config)


def half_open(port: int, source: str, n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
        s.sendall(PARTIAL)
        out.append(s)
    return out


def read_until_closed(s: socket.socket, deadline: float) -> bytes | None:
    """What the server sent before closing, or None if it was still open at `deadline`."""
    data = b""
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            return None
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk
    return None


class Health:
    """GET /v1/health from another client address, every 50 ms, in a thread: the slowest answer, the failures."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.slowest = 0.0
        self.failures: list[str] = []
        self.count = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=f"http://127.0.0.1:{self.port}", transport=transport, timeout=5) as http:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    r = http.get("/v1/health", headers={"Connection": "close"})
                    if r.status_code != 200:
                        self.failures.append(str(r.status_code))
                except httpx.HTTPError as exc:
                    self.failures.append(repr(exc))
                self.slowest = max(self.slowest, time.monotonic() - started)
                self.count += 1
                self.stop.wait(0.05)

    def __enter__(self) -> Health:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def test_a_thousand_half_open_connections_are_closed_and_health_keeps_answering(app, settings, fds):
    with serve(
        app, settings, header_timeout_s=2.0, max_connections=2048, max_connections_per_client=64
    ) as port:
        with Health(port) as health:
            while health.count == 0:  # the first request includes every router (a one-off cost): not measured
                time.sleep(0.05)
            health.slowest = 0.0
            started = time.monotonic()
            sockets = [s for i in range(20) for s in half_open(port, f"127.0.1.{i + 1}", 50)]
            assert len(sockets) == 1000
            time.sleep(0.5)
            assert health.failures == [] and health.count > 0  # answered while all 1,000 were open
            deadline = started + 2.0 + 8.0
            outcomes = [read_until_closed(s, deadline) for s in sockets]
            closed_at = time.monotonic() - started
            for s in sockets:
                s.close()
            assert sum(o is None for o in outcomes) == 0, "connections still open after the header timeout"
            assert all(o == b"" or o.startswith(b"HTTP/1.1 408") for o in outcomes if o is not None)
            assert sum(1 for o in outcomes if o and b'"request_timeout"' in o) > 900
            assert closed_at < 10
        assert health.failures == [] and health.slowest < 1.0, (health.failures[:3], health.slowest)


def test_one_client_gets_its_share_of_connections_and_no_more(app, settings):
    with serve(
        app, settings, header_timeout_s=5.0, max_connections=1024, max_connections_per_client=8
    ) as port:
        held = half_open(port, "127.0.0.5", 8)
        extra = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.5", 0))
        answer = read_until_closed(extra, time.monotonic() + 5)
        assert answer is not None and answer.startswith(b"HTTP/1.1 503")
        assert b'"too_many_connections"' in answer and b"this client" in answer
        other = httpx.Client(
            base_url=f"http://127.0.0.1:{port}", transport=httpx.HTTPTransport(local_address="127.0.0.6")
        )
        assert other.get("/v1/health").status_code == 200  # another client is not concerned
        other.close()
        for s in held:
            s.close()
        extra.close()


def test_the_open_connections_are_bounded_in_all(app, settings):
    with serve(app, settings, header_timeout_s=5.0, max_connections=20, max_connections_per_client=0) as port:
        held = [s for i in range(4) for s in half_open(port, f"127.0.2.{i + 1}", 5)]
        extra = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.2.9", 0))
        answer = read_until_closed(extra, time.monotonic() + 5)
        assert answer is not None and b"503" in answer.split(b"\r\n")[0] and b"maximum of 20" in answer
        for s in held:
            s.close()
        time.sleep(0.3)  # the server saw them go: room again
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
            assert http.get("/v1/health").status_code == 200
        extra.close()


def test_a_body_too_slow_is_408_and_the_connection_closed(app, settings, owner):
    settings.server_body_timeout_s = 1.0
    from backend.api.app import create_app

    slow_app = create_app(settings)
    with serve(slow_app, settings, header_timeout_s=5.0) as port:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(
            b"POST /v1/posts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"x-api-key: {owner.api_key}\r\nContent-Length: 100\r\n\r\n".encode()
            + b'{"targets":'
        )
        started = time.monotonic()
        answer = read_until_closed(s, started + 8)
        s.close()
        assert answer is not None, "the connection was left open"
        assert answer.startswith(b"HTTP/1.1 408") and b'"request_timeout"' in answer
        assert 0.8 < time.monotonic() - started < 6


def test_headers_over_the_bound_are_431(app, settings):
    with serve(app, settings, max_header_bytes=4096) as port:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 8000)
        answer = read_until_closed(s, time.monotonic() + 5)
        s.close()
        assert answer is not None and answer.startswith(b"HTTP/1.1 431") and b'"headers_too_large"' in answer


def test_a_keep_alive_connection_idle_past_its_timeout_is_closed_and_requests_still_work(app, settings):
    with serve(app, settings, keep_alive_s=1, header_timeout_s=5.0) as port:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        first = s.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")  # keep-alive: a second request is served
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        assert read_until_closed(s, time.monotonic() + 4) == b""  # then idle: closed
        s.close()


def test_socialpub_serve_runs_with_the_bounds(tmp_path):
    """The real command: `socialpub serve` closes a half-sent request after SOCIALPUB_SERVER_HEADER_TIMEOUT_S
    and refuses a client's connection over SOCIALPUB_SERVER_MAX_CONNECTIONS_PER_CLIENT."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).with_name("socialpub"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env.update(
        SOCIALPUB_DATA_DIR=str(tmp_path / "data"),
        SOCIALPUB_LOG_LEVEL="WARNING",
        SOCIALPUB_SERVER_HEADER_TIMEOUT_S="1",
        SOCIALPUB_SERVER_MAX_CONNECTIONS_PER_CLIENT="3",
    )
    assert subprocess.run([exe, "init", "--json"], env=env, capture_output=True, timeout=60).returncode == 0
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [exe, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-worker"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.2)
        held = half_open(port, "127.0.3.1", 3)
        extra = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.3.1", 0))
        refused = read_until_closed(extra, time.monotonic() + 5)
        assert refused is not None and refused.startswith(b"HTTP/1.1 503")
        started = time.monotonic()
        outcomes = [read_until_closed(s, started + 6) for s in held]
        assert all(o is not None and o.startswith(b"HTTP/1.1 408") for o in outcomes), outcomes
        for s in [*held, extra]:
            s.close()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
