"""The asynchronous client: `AsyncClient` (the TUI's). Its methods are `Endpoints`' (endpoints.py), awaited;
this module is its transport (`httpx.AsyncClient`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from socialpub_tui.client._core import (
    AsyncDriver,
    Call,
    RetryPolicy,
    Send,
    Sleep,
    Step,
    fetch_failed,
    send_failed,
)
from socialpub_tui.client.calls import AsyncBase64FileBody, Base64FileBody
from socialpub_tui.client.endpoints import Endpoints

T = TypeVar("T")


class AsyncClient(AsyncDriver, Endpoints):
    """The /v1 client (the TUI's). Build one with `socialpub_tui.client.connect_async()`."""

    def __init__(
        self,
        base_url: str = "http://socialpub.invalid",
        *,
        api_key: str | None = None,
        session_token: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 60.0,
        poll_interval: float = 10.0,
        embedded: bool = False,
        token_refresh: Callable[[], str] | None = None,
        on_close: Callable[[], None] | None = None,
        on_ready: Callable[[], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(
            api_key=api_key,
            session_token=session_token,
            retry=retry,
            poll_interval=poll_interval,
            embedded=embedded,
            token_refresh=token_refresh,
        )
        self._http = httpx.AsyncClient(
            base_url=base_url, transport=transport, timeout=timeout, follow_redirects=False
        )
        self._on_close = on_close
        self._on_ready = on_ready
        self._sleep = sleep

    def ready(self) -> None:
        """The caller's first screen is drawn: start what was left out of its launch — the embedded backend's
        worker (socialpub_tui.client.embedded). Once; nothing to do against a server."""
        if self._on_ready is not None:
            on_ready, self._on_ready = self._on_ready, None
            on_ready()

    async def aclose(self) -> None:
        self._on_ready = None
        await self._http.aclose()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run(self, call: Call[T]) -> T:
        """Send one call: map errors to ApiError, retry 429 after Retry-After (bounded by `retry`)."""
        return await self.drive(self.exchange(call))

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def perform(self, step: Step) -> Any:
        if isinstance(step, Send):
            call = step.call
            if isinstance(call.content, Base64FileBody):  # an async client sends only an async body
                call = dataclasses.replace(call, content=AsyncBase64FileBody(call.content))
            request = self._request(self._http, call)
            try:
                return await self._http.send(request)
            except httpx.TransportError as exc:
                raise send_failed(call, exc, self._http.base_url) from None
        if isinstance(step, Sleep):
            await self._sleep(step.seconds)
            return None
        try:
            async with self._http.stream("GET", step.url, follow_redirects=True) as response:
                step.start(response)
                async for chunk in response.aiter_bytes():
                    step.chunk(chunk)
        except httpx.TransportError as exc:
            raise fetch_failed(step.url, exc) from None
        return None
