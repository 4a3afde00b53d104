"""The one bound on a whole HTTP exchange (backend/networks/watchdog.py): through httpx's `trace` extension, a
loopback server that trickles its answer (each byte well within the per-phase timeout) is cut at the deadline."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import httpx
import pytest

from backend.outbound.watchdog import Watchdog


def _trickle(server: socket.socket, stop: threading.Event) -> None:
    with contextlib.suppress(OSError):
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            while not stop.wait(0.05):
                conn.sendall(b".")


def test_a_trickling_answer_is_cut_at_the_deadline() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    thread = threading.Thread(target=_trickle, args=(server, stop), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}/"
    dog = Watchdog(0.5)
    started = time.monotonic()
    try:
        with (
            httpx.Client(timeout=2.0, trust_env=False) as client,
            dog.running(),
            pytest.raises(httpx.HTTPError),
        ):
            client.get(url, extensions={"trace": dog.trace})
    finally:
        stop.set()
        server.close()
        thread.join(5)
    took = time.monotonic() - started
    assert dog.fired and 0.4 < took < 1.5, took


def test_a_quick_exchange_is_left_alone() -> None:
    dog = Watchdog(5.0)
    with dog.running():
        pass
    time.sleep(0.05)
    assert not dog.fired
