"""What the sync and async clients share: the description of a call, request building, response mapping,
the 429 retry policy. No I/O here."""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from backend.schemas.statuses import POST_FINAL, PostStatus
from socialpub_tui.client.errors import ApiError, ConfigError, from_response
from socialpub_tui.client.networks import Networks

log = logging.getLogger("socialpub.client")

T = TypeVar("T")
Auth = Literal["key", "session", "none"]

USER_AGENT = "socialpub-client/0.1"


@dataclass
class Call(Generic[T]):
    """One API call: what to send and how to read the answer (`model=None`: no body expected)."""

    method: str
    path: str
    model: type[T] | None
    params: dict[str, Any] | None = None
    json: Any = None
    content: bytes | Iterable[bytes] | AsyncIterable[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    auth: Auth = "key"
    optional_extension: str | None = None  # a socialpub /v1 extension: a 404/405 from another service says so


@dataclass
class RetryPolicy:
    """429 handling: wait `Retry-After` (or a backoff when absent) and retry, at most `max_retries` times,
    never waiting more than `max_wait_s` for one retry (a longer Retry-After raises at once)."""

    max_retries: int = 3
    max_wait_s: float = 65.0
    backoff_s: float = 2.0

    def delay(self, response: httpx.Response, attempt: int) -> float | None:
        if response.status_code != 429 or attempt >= self.max_retries:
            return None
        wait = parse_retry_after(response.headers.get("retry-after"))
        if wait is None:
            wait = self.backoff_s * (2**attempt)
        if wait > self.max_wait_s:
            return None
        return max(0.0, wait)


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def clean(d: dict[str, Any]) -> dict[str, Any]:
    """Drop None values (query parameters and PATCH bodies send only what is set)."""
    return {k: v for k, v in d.items() if v is not None}


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


class ClientBase:
    """Configuration and the pure parts of sending a call."""

    def __init__(
        self,
        *,
        api_key: str | None,
        session_token: str | None,
        retry: RetryPolicy | None,
        poll_interval: float,
        embedded: bool,
        token_refresh: Callable[[], str] | None,
    ) -> None:
        self.api_key = api_key
        self.session_token = session_token
        self.retry = retry or RetryPolicy()
        self.poll_interval = poll_interval
        self.embedded = embedded
        self._token_refresh = token_refresh
        self._networks: Networks | None = None  # GET /v1/networks, read once (`networks()`)

    def __repr__(self) -> str:  # never the key or the token
        return f"<{type(self).__name__} embedded={self.embedded}>"

    @property
    def has_session(self) -> bool:
        return bool(self.session_token)

    def _auth_headers(self, call: Call[Any]) -> dict[str, str]:
        if call.auth == "none":
            return {}
        if call.auth == "session":
            if not self.session_token:
                raise ConfigError(
                    "this needs the owner's session, not an API key: run `socialpub login` first",
                    code="session_required",
                )
            return {"Authorization": f"Bearer {self.session_token}"}
        if self.api_key:
            return {"x-api-key": self.api_key}
        if self.session_token:
            return {"Authorization": f"Bearer {self.session_token}"}
        raise ConfigError(
            "no API key: set SOCIALPUB_API_KEY or `api_key_env` in the profile", code="no_api_key"
        )

    def _request(self, http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> httpx.Request:
        headers = {"user-agent": USER_AGENT, **call.headers, **self._auth_headers(call)}
        kwargs: dict[str, Any] = {"params": clean(call.params or {}) or None, "headers": headers}
        if call.content is not None:
            kwargs["content"] = call.content
        elif call.json is not None:
            kwargs["json"] = call.json
        return http.build_request(call.method, call.path, **kwargs)

    def _should_refresh(self, response: httpx.Response, refreshed: bool) -> bool:
        if refreshed or self._token_refresh is None or response.status_code != 401:
            return False
        try:
            code = response.json().get("error")
        except ValueError:
            return False
        return code in {"invalid_session", "session_expired"}

    def _refresh(self) -> None:
        assert self._token_refresh is not None
        self.session_token = self._token_refresh()

    def _finish(self, call: Call[T], response: httpx.Response) -> T:
        log.debug("%s %s -> %s", call.method, call.path, response.status_code)
        status = response.status_code
        if status >= 400:
            try:
                body: Any = response.json()
            except ValueError:
                body = response.text
            err = from_response(status, body, dict(response.headers))
            if (
                call.optional_extension
                and status in (404, 405)
                and err.code in ("not_found", "method_not_allowed")
            ):
                err.message = (
                    f"{err.message} — {call.optional_extension} is a socialpub extension of /v1 "
                    "that this server does not offer"
                )
            raise err
        if call.model is None:
            return None  # type: ignore[return-value]
        try:
            data = response.json()
        except ValueError:
            raise ApiError(
                status, "invalid_response", f"{call.method} {call.path}: the answer is not JSON"
            ) from None
        try:
            if isinstance(call.model, type) and issubclass(call.model, BaseModel):
                model = call.model.model_validate(data)
                model._http_status = status  # e.g. 200 vs 202 on POST /v1/posts: an idempotent replay
                return model  # type: ignore[return-value]
            return data  # type: ignore[no-any-return]
        except ValidationError as exc:
            raise ApiError(
                status,
                "invalid_response",
                f"{call.method} {call.path}: the answer does not match the /v1 contract: "
                f"{exc.error_count()} error(s), first: {exc.errors()[0]['msg']}",
            ) from None


def items_and_cursor(page: Any) -> tuple[list[Any], str | None]:
    items = list(getattr(page, "items", None) or [])
    cursor = getattr(page, "next_cursor", None)
    return items, cursor or None


def iterate(fetch: Callable[[str | None], Any], limit: int | None = None) -> Iterator[Any]:
    """Follow cursors: yield items of successive pages until there is no next cursor (or `limit` items)."""
    cursor: str | None = None
    seen = 0
    while True:
        items, cursor = items_and_cursor(fetch(cursor))
        for item in items:
            yield item
            seen += 1
            if limit is not None and seen >= limit:
                return
        if not cursor:
            return


async def aiterate(
    fetch: Callable[[str | None], Awaitable[Any]], limit: int | None = None
) -> AsyncIterator[Any]:
    """`iterate` for an async `fetch`: items of successive pages until there is no next cursor (or `limit`)."""
    cursor: str | None = None
    seen = 0
    while True:
        items, cursor = items_and_cursor(await fetch(cursor))
        for item in items:
            yield item
            seen += 1
            if limit is not None and seen >= limit:
                return
        if not cursor:
            return


def is_final(post: Any) -> bool:
    return post.status in POST_FINAL


def next_poll_in(post: Any, interval: float, now: float | None = None) -> float:
    """Seconds to the next read of a post being waited for: the polling interval, or — for a scheduled
    post — until its scheduled time (no point asking earlier)."""
    if post.status == PostStatus.SCHEDULED and post.scheduled_at:
        from datetime import datetime

        try:
            due = datetime.fromisoformat(post.scheduled_at.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return interval
        return max(interval, due - (time.time() if now is None else now) + interval)
    return interval


def snapshot(post: Any) -> tuple[Any, ...]:
    return (post.status, tuple((t.platform, t.account_id, t.status, t.post_url) for t in post.targets))
