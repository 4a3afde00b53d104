"""The one bound on a whole HTTP exchange (httpx and httpcore time each phase alone: connect, each write, each
read; a slow trickle or a stalled peer can outlive any total). A `Watchdog` is told of each socket the exchange
opens; `seconds` after `start()` it shuts them all down (the blocked read or write fails at once) and says so
(`fired`). Used by the webhook sender and the media fetcher (their PinnedBackend tells it of its sockets) and by
the token refresh (through httpx's `trace` request extension: `extensions={"trace": dog.trace}`)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any


class Watchdog:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.fired = False
        self._timer: threading.Timer | None = None

    def watch(self, sock: socket.socket | None) -> None:
        """A socket of the exchange: shut down when the watchdog fires (at once if it has)."""
        if sock is None:
            return
        with self.lock:
            self.sockets.append(sock)
            if self.fired:
                _shutdown(sock)

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's `trace` request extension: each new connection's socket is watched."""
        if event == "connection.connect_tcp.complete" or event == "connection.connect_unix_socket.complete":
            stream = info.get("return_value")
            if stream is not None:
                self.watch(stream.get_extra_info("socket"))

    def kill(self) -> None:
        with self.lock:
            self.fired = True
            for sock in self.sockets:
                _shutdown(sock)

    def start(self) -> None:
        self._timer = threading.Timer(self.seconds, self.kill)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    @contextlib.contextmanager
    def running(self) -> Iterator[Watchdog]:
        self.start()
        try:
            yield self
        finally:
            self.stop()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
