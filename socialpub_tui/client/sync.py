"""The synchronous client: `Client`. Its methods are `Endpoints`' (endpoints.py), run in the caller's thread;
this module is its transport (`httpx.Client`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from socialpub_tui.client._core import (
    Call,
    RetryPolicy,
    Send,
    Sleep,
    Step,
    SyncDriver,
    fetch_failed,
    send_failed,
)
from socialpub_tui.client.endpoints import Endpoints

T = TypeVar("T")


class Client(SyncDriver, Endpoints):
    """A /v1 client. Build one with `socialpub_tui.client.connect()` (profiles, embedded mode), or directly::

    Client("https://pub.example.com", api_key=KEY)
    Client("http://test", api_key=KEY, transport=httpx.MockTransport(handler))
    """

    def __init__(
        self,
        base_url: str = "http://socialpub.invalid",
        *,
        api_key: str | None = None,
        session_token: str | None = None,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 60.0,
        poll_interval: float = 10.0,
        embedded: bool = False,
        token_refresh: Callable[[], str] | None = None,
        on_close: Callable[[], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        super().__init__(
            api_key=api_key,
            session_token=session_token,
            retry=retry,
            poll_interval=poll_interval,
            embedded=embedded,
            token_refresh=token_refresh,
        )
        self._http = httpx.Client(
            base_url=base_url, transport=transport, timeout=timeout, follow_redirects=False
        )
        self._on_close = on_close
        self._on_ready = on_ready
        self._sleep = sleep

    def ready(self) -> None:
        """Start what the client left out when it was made (an embedded backend's worker made without one); once."""
        if self._on_ready is not None:
            on_ready, self._on_ready = self._on_ready, None
            on_ready()

    def close(self) -> None:
        self._http.close()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, call: Call[T]) -> T:
        """Send one call: map errors to ApiError, retry 429 after Retry-After (bounded by `retry`)."""
        return self.drive(self.exchange(call))

    def sleep(self, seconds: float) -> None:
        self._sleep(seconds)

    def perform(self, step: Step) -> Any:
        if isinstance(step, Send):
            request = self._request(self._http, step.call)
            try:
                return self._http.send(request)
            except httpx.TransportError as exc:
                raise send_failed(step.call, exc, self._http.base_url) from None
        if isinstance(step, Sleep):
            self._sleep(step.seconds)
            return None
        try:
            with self._http.stream("GET", step.url, follow_redirects=True) as response:
                step.start(response)
                for chunk in response.iter_bytes():
                    step.chunk(chunk)
        except httpx.TransportError as exc:
            raise fetch_failed(step.url, exc) from None
        return None
