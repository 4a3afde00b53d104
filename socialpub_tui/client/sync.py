"""The synchronous client: `Client`. Same methods as `AsyncClient`, without `await`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from backend.schemas.auth import SessionOut
from backend.schemas.keys import KeyCreated, KeyDeleted, KeyOut
from backend.schemas.workspace import WorkspaceOut, WorkspacePatch
from socialpub_tui.client import calls
from socialpub_tui.client._core import Call, ClientBase, RetryPolicy
from socialpub_tui.client.errors import NetworkError

T = TypeVar("T")


class Client(ClientBase):
    """A /v1 client. Build one with `socialpub_tui.client.connect()` (profiles, embedded mode), or directly::

        Client("https://pub.example.com", api_key=KEY)
        Client("http://test", api_key=KEY, transport=httpx.MockTransport(handler))
    """

    def __init__(self, base_url: str = "http://socialpub.invalid", *, api_key: str | None = None,
                 session_token: str | None = None, transport: httpx.BaseTransport | None = None,
                 retry: RetryPolicy | None = None, timeout: float = 60.0, poll_interval: float = 10.0,
                 embedded: bool = False, token_refresh: Callable[[], str] | None = None,
                 on_close: Callable[[], None] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(api_key=api_key, session_token=session_token, retry=retry, poll_interval=poll_interval,
                         embedded=embedded, token_refresh=token_refresh)
        self._http = httpx.Client(base_url=base_url, transport=transport, timeout=timeout, follow_redirects=False)
        self._on_close = on_close
        self._sleep = sleep

    # ---- plumbing --------------------------------------------------------------------------------------
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
        attempt = 0
        refreshed = False
        while True:
            request = self._request(self._http, call)
            try:
                response = self._http.send(request)
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
                self._sleep(delay)
                continue
            return self._finish(call, response)

    def sleep(self, seconds: float) -> None:
        self._sleep(seconds)

    # ---- endpoints ----------------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self.run(calls.health())

    def login(self, email: str, password: str) -> SessionOut:
        """POST /v1/auth/login; the session is also used by this client from then on."""
        out = self.run(calls.login(email, password))
        self.session_token = out.session_token
        return out

    def create_key(self, name: str = "API key", expires_in_days: int | None = 90,
                   scopes: list[str] | None = None) -> KeyCreated:
        return self.run(calls.create_key(name, expires_in_days, scopes))

    def list_keys(self) -> list[KeyOut]:
        return self.run(calls.list_keys()).items

    def revoke_key(self, key_id: str) -> KeyDeleted:
        return self.run(calls.revoke_key(key_id))

    def purge_key(self, key_id: str) -> KeyDeleted:
        return self.run(calls.purge_key(key_id))

    def get_workspace(self) -> WorkspaceOut:
        return self.run(calls.get_workspace())

    def edit_workspace(self, changes: WorkspacePatch | dict[str, Any]) -> WorkspaceOut:
        return self.run(calls.edit_workspace(changes))
