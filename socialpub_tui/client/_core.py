"""What the sync and async clients share: the description of a call, request building, response mapping,
the 429 retry policy, and the sans-IO steps every endpoint is written as (`Steps`: a generator that yields what
it needs done — send this call, sleep, stream this URL — and returns the answer) with the two drivers that run
them, `SyncDriver` (in the caller's thread) and `AsyncDriver` (awaited). No I/O here: a client's transport
performs the steps (sync.py, aio.py)."""

from __future__ import annotations

import abc
import email.utils
import functools
import inspect
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Coroutine, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeAlias, TypeVar, overload

import httpx
from pydantic import BaseModel, ValidationError

from backend.schemas.statuses import POST_FINAL, PostStatus
from socialpub_tui.client.errors import ApiError, ConfigError, NetworkError, from_response
from socialpub_tui.client.networks import Networks

log = logging.getLogger("socialpub.client")

T = TypeVar("T")
I = TypeVar("I")  # noqa: E741 (an item)
P = ParamSpec("P")
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


# ---- steps: what an endpoint asks its transport to do ------------------------------------------------------


# (plain classes: a dataclass costs ~0.5 ms to build at import, and every CLI command imports these)
class Send:
    """Send this call once; the reply is the `httpx.Response` (a transport failure: NetworkError)."""

    __slots__ = ("call",)

    def __init__(self, call: Call[Any]) -> None:
        self.call = call


class Sleep:
    """Wait this long (the client's `sleep`: tests make it instant)."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class Stream:
    """GET `url` without credentials, following redirects: `start` sees the response before its body, `chunk`
    each piece of the body. No reply."""

    __slots__ = ("chunk", "start", "url")

    def __init__(
        self, url: str, start: Callable[[httpx.Response], None], chunk: Callable[[bytes], None]
    ) -> None:
        self.url, self.start, self.chunk = url, start, chunk


class Emit(Generic[I]):
    """An item of a listing walked page by page (only in `Items`)."""

    __slots__ = ("item",)

    def __init__(self, item: I) -> None:
        self.item = item


Step: TypeAlias = Send | Sleep | Stream
Steps: TypeAlias = Generator[Step, Any, T]
"""An endpoint, sans-IO: yields the steps it needs done, is sent each step's reply, returns its answer."""
Items: TypeAlias = Generator[Step | Emit[I], Any, None]
"""A listing, sans-IO: the steps of `Steps`, and each item found as `Emit`."""


def send_failed(call: Call[Any], exc: httpx.TransportError, base_url: object) -> NetworkError:
    if isinstance(exc, httpx.TimeoutException):
        return NetworkError(f"{call.method} {call.path}: timed out ({type(exc).__name__})", "timeout")
    return NetworkError(f"cannot reach the backend at {base_url}: {exc}")


def fetch_failed(url: str, exc: httpx.TransportError) -> NetworkError:
    if isinstance(exc, httpx.TimeoutException):
        return NetworkError(f"GET {url}: timed out", "timeout")
    return NetworkError(f"cannot fetch {url}: {exc}")


class Runner:
    """Advances a generator of steps: the step it yields next, given the reply to the last one (or the exception
    performing it raised, thrown in at the `yield` — an endpoint catches an ApiError as a call would)."""

    def __init__(self, steps: Generator[Any, Any, Any]) -> None:
        self.steps = steps
        self.reply: Any = None
        self.error: BaseException | None = None
        self.result: Any = None

    def next(self) -> Any:
        """The next step, or None when the generator has returned (its value in `result`)."""
        try:
            if self.error is not None:
                step = self.steps.throw(self.error)
            else:
                step = self.steps.send(self.reply)
        except StopIteration as stop:
            self.result = stop.value
            return None
        self.reply, self.error = None, None
        return step


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

    def exchange(self, call: Call[T]) -> Steps[T]:
        """One call, sans-IO: send it, renew an expired session once (`token_refresh`), retry a 429 after
        Retry-After (bounded by `retry`), map the answer (`_finish`)."""
        attempt = 0
        refreshed = False
        while True:
            response = yield Send(call)
            if self._should_refresh(response, refreshed):
                refreshed = True
                self._refresh()
                continue
            delay = self.retry.delay(response, attempt)
            if delay is not None:
                attempt += 1
                yield Sleep(delay)
                continue
            return self._finish(call, response)

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
            return None  # type: ignore[return-value]  # a Call without a model is a Call[None]
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
                return model  # type: ignore[return-value]  # call.model is T, a BaseModel here
            return data  # type: ignore[no-any-return]  # call.model is T, dict here: the JSON as it came
        except ValidationError as exc:
            raise ApiError(
                status,
                "invalid_response",
                f"{call.method} {call.path}: the answer does not match the /v1 contract: "
                f"{exc.error_count()} error(s), first: {exc.errors()[0]['msg']}",
            ) from None


class SyncDriver(ClientBase, abc.ABC):
    """Runs steps in the caller's thread: an endpoint is a plain method (`Client`)."""

    @abc.abstractmethod
    def perform(self, step: Step) -> Any:
        """Carry out one step (send, sleep, stream) and answer what the endpoint receives back."""

    def drive(self, steps: Steps[T]) -> T:
        runner = Runner(steps)
        while (step := runner.next()) is not None:
            try:
                runner.reply = self.perform(step)
            except Exception as exc:  # noqa: BLE001 (thrown into the endpoint, where a call raised it)
                runner.error = exc
        return runner.result  # type: ignore[no-any-return]  # the generator's return value: a Steps[T]'s T

    def drive_items(self, items: Items[I]) -> Iterator[I]:
        runner = Runner(items)
        while (step := runner.next()) is not None:
            if isinstance(step, Emit):
                yield step.item
                continue
            try:
                runner.reply = self.perform(step)
            except Exception as exc:  # noqa: BLE001 (thrown into the listing, where a call raised it)
                runner.error = exc


class AsyncDriver(ClientBase, abc.ABC):
    """Runs steps awaiting each: an endpoint is a coroutine method (`AsyncClient`)."""

    @abc.abstractmethod
    async def perform(self, step: Step) -> Any:
        """Carry out one step (send, sleep, stream), awaited, and answer what the endpoint receives back."""

    async def drive(self, steps: Steps[T]) -> T:
        runner = Runner(steps)
        while (step := runner.next()) is not None:
            try:
                runner.reply = await self.perform(step)
            except Exception as exc:  # noqa: BLE001 (thrown into the endpoint, where a call raised it)
                runner.error = exc
        return runner.result  # type: ignore[no-any-return]  # the generator's return value: a Steps[T]'s T

    async def drive_items(self, items: Items[I]) -> AsyncIterator[I]:
        runner = Runner(items)
        while (step := runner.next()) is not None:
            if isinstance(step, Emit):
                yield step.item
                continue
            try:
                runner.reply = await self.perform(step)
            except Exception as exc:  # noqa: BLE001 (thrown into the listing, where a call raised it)
                runner.error = exc


class endpoint(Generic[P, T]):  # noqa: N801 (used as a decorator, like property)
    """An endpoint declared once, as a sans-IO method returning `Steps[T]`: on a `Client` it is a method
    returning T, on an `AsyncClient` a coroutine method returning T."""

    def __init__(self, steps: Callable[Concatenate[Any, P], Steps[T]]) -> None:
        self.steps = steps
        self.__doc__, self.__wrapped__ = steps.__doc__, steps

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> endpoint[P, T]: ...
    @overload
    def __get__(self, obj: SyncDriver, owner: type[Any] | None = None) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, obj: AsyncDriver, owner: type[Any] | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __call__(self, client: Any, /, *args: P.args, **kwargs: P.kwargs) -> Any:
        """Called on the class with its client, as a function accessed on a class is: `Client.get_post(c, id)`."""
        return self.__get__(client)(*args, **kwargs)

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        steps = self.steps
        if isinstance(obj, AsyncDriver):

            async def coroutine(*args: P.args, **kwargs: P.kwargs) -> T:
                return await obj.drive(steps(obj, *args, **kwargs))

            return _like(coroutine, steps)

        def method(*args: P.args, **kwargs: P.kwargs) -> T:
            return obj.drive(steps(obj, *args, **kwargs))  # type: ignore[no-any-return]  # a SyncDriver's T

        return _like(method, steps)


class listing(Generic[P, I]):  # noqa: N801 (used as a decorator, like property)
    """A listing declared once, as a sans-IO method returning `Items` (of T): on a `Client` an iterator, on an
    `AsyncClient` an async iterator."""

    def __init__(self, items: Callable[Concatenate[Any, P], Items[I]]) -> None:
        self.items = items
        self.__doc__, self.__wrapped__ = items.__doc__, items

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> listing[P, I]: ...
    @overload
    def __get__(self, obj: SyncDriver, owner: type[Any] | None = None) -> Callable[P, Iterator[I]]: ...
    @overload
    def __get__(self, obj: AsyncDriver, owner: type[Any] | None = None) -> Callable[P, AsyncIterator[I]]: ...
    def __call__(self, client: Any, /, *args: P.args, **kwargs: P.kwargs) -> Any:
        """Called on the class with its client, as a function accessed on a class is."""
        return self.__get__(client)(*args, **kwargs)

    def __get__(self, obj: Any, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        items = self.items

        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return obj.drive_items(items(obj, *args, **kwargs))

        return _like(method, items)


def _like(bound: Callable[..., Any], steps: Callable[..., Any]) -> Any:
    """`bound` named and documented as `steps`, with its signature without the client (read when asked)."""
    bound.__name__, bound.__qualname__, bound.__doc__ = steps.__name__, steps.__qualname__, steps.__doc__
    bound.__module__ = steps.__module__
    bound.__signature__ = _method_signature(steps)  # type: ignore[attr-defined]  # read by inspect.signature
    return bound


@functools.cache
def _method_signature(steps: Callable[..., Any]) -> inspect.Signature:
    """A sans-IO method's signature as its caller sees it: without the client (a `sends` endpoint: its call's
    arguments); the return annotation left out (the steps' is not what the caller gets)."""
    made = getattr(steps, "sends", None)
    sig = inspect.signature(made or steps)
    parameters = list(sig.parameters.values())
    return sig.replace(parameters=parameters if made else parameters[1:], return_annotation=sig.empty)


def sends(make: Callable[P, Call[T]]) -> endpoint[P, T]:
    """The endpoint that is one call: `make`'s arguments (and docstring), the call's answer."""

    def steps(client: ClientBase, /, *args: P.args, **kwargs: P.kwargs) -> Steps[T]:
        return client.exchange(make(*args, **kwargs))

    steps.__name__, steps.__qualname__, steps.__doc__ = make.__name__, make.__qualname__, make.__doc__
    steps.sends = make  # type: ignore[attr-defined]  # its signature is the method's (_method_signature)
    return endpoint(steps)


def pages(
    client: ClientBase, page: Callable[[str | None], Call[Any]], max_items: int | None = None
) -> Items[Any]:
    """Follow cursors: emit the items of successive pages until there is no next cursor (or `max_items`)."""
    cursor: str | None = None
    seen = 0
    while True:
        answer = yield from client.exchange(page(cursor))
        for item in list(getattr(answer, "items", None) or []):
            yield Emit(item)
            seen += 1
            if max_items is not None and seen >= max_items:
                return
        cursor = getattr(answer, "next_cursor", None) or None
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
