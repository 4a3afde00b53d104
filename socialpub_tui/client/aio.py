"""The asynchronous client: `AsyncClient`. Same methods as `Client`, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from backend.schemas.auth import SessionOut
from backend.schemas.keys import KeyCreated, KeyDeleted, KeyOut
from backend.schemas.workspace import WorkspaceOut, WorkspacePatch
from socialpub_tui.client import calls
from socialpub_tui.client._core import Call, ClientBase, RetryPolicy
from socialpub_tui.client.errors import NetworkError

T = TypeVar("T")


class AsyncClient(ClientBase):
    """The async /v1 client (the TUI's). Build one with `socialpub_tui.client.connect_async()`."""

    def __init__(self, base_url: str = "http://socialpub.invalid", *, api_key: str | None = None,
                 session_token: str | None = None, transport: httpx.AsyncBaseTransport | None = None,
                 retry: RetryPolicy | None = None, timeout: float = 60.0, poll_interval: float = 10.0,
                 embedded: bool = False, token_refresh: Callable[[], str] | None = None,
                 on_close: Callable[[], None] | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        super().__init__(api_key=api_key, session_token=session_token, retry=retry, poll_interval=poll_interval,
                         embedded=embedded, token_refresh=token_refresh)
        self._http = httpx.AsyncClient(base_url=base_url, transport=transport, timeout=timeout,
                                       follow_redirects=False)
        self._on_close = on_close
        self._sleep = sleep

    async def aclose(self) -> None:
        await self._http.aclose()
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run(self, call: Call[T]) -> T:
        attempt = 0
        refreshed = False
        while True:
            request = self._request(self._http, call)
            try:
                response = await self._http.send(request)
            except httpx.TimeoutException as exc:
                raise NetworkError(f"{call.method} {call.path}: timed out ({type(exc).__name__})", "timeout") from None
            except httpx.TransportError as exc:
                raise NetworkError(f"cannot reach the backend at {self._http.base_url}: {exc}") from None
            if self._should_refresh(response, refreshed):
                refreshed = True
                self._refresh()
                continue
            delay = self.retry.delay(response, attempt)
            if delay is not None:
                attempt += 1
                await self._sleep(delay)
                continue
            return self._finish(call, response)

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    # ---- endpoints ----------------------------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        return await self.run(calls.health())

    async def login(self, email: str, password: str) -> SessionOut:
        out = await self.run(calls.login(email, password))
        self.session_token = out.session_token
        return out

    async def create_key(self, name: str = "API key", expires_in_days: int | None = 90,
                         scopes: list[str] | None = None) -> KeyCreated:
        return await self.run(calls.create_key(name, expires_in_days, scopes))

    async def list_keys(self) -> list[KeyOut]:
        return (await self.run(calls.list_keys())).items

    async def revoke_key(self, key_id: str) -> KeyDeleted:
        return await self.run(calls.revoke_key(key_id))

    async def purge_key(self, key_id: str) -> KeyDeleted:
        return await self.run(calls.purge_key(key_id))

    async def get_workspace(self) -> WorkspaceOut:
        return await self.run(calls.get_workspace())

    async def edit_workspace(self, changes: WorkspacePatch | dict[str, Any]) -> WorkspaceOut:
        return await self.run(calls.edit_workspace(changes))
