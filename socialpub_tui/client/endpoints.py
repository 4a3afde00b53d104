"""Every client method, declared once: `Client` (sync.py) and `AsyncClient` (aio.py) both inherit `Endpoints`,
and each method here is offered as a plain method by the one and a coroutine method by the other.

A method is written sans-IO (socialpub_tui.client._core): `sends(calls.x)` for an endpoint that is one call, or a
generator yielding the steps it needs (`yield from self.exchange(call)`, `yield Sleep(s)`, `yield Stream(…)`) for
the ones that do more — the one poll loop (`_poll`) behind every `wait_*`, the one cursor walk (`pages`) behind
every `iter_*`. The transports only perform the steps."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from backend.schemas.statuses import GENERATION_FINAL
from backend.schemas.tiktok import TIKTOK_FINAL
from socialpub_tui.client import calls
from socialpub_tui.client._core import (
    Call,
    ClientBase,
    Items,
    Sleep,
    Steps,
    Stream,
    endpoint,
    is_final,
    listing,
    next_poll_in,
    pages,
    sends,
    snapshot,
)
from socialpub_tui.client.errors import ApiError, NetworkError, WaitTimeout
from socialpub_tui.client.networks import Networks

if TYPE_CHECKING:
    from backend.schemas.auth import SessionOut
    from backend.schemas.generations import GenerationCreate, GenerationOut, GenerationQuote
    from backend.schemas.keys import KeyOut
    from backend.schemas.media import MediaItem
    from backend.schemas.posts import PostOut, PostQuery
    from backend.schemas.tiktok import TikTokStatusOut
    from backend.schemas.webhooks import DeliveryOut

T = TypeVar("T")
S = TypeVar("S")

MEDIA_PREVIEW_MAX = 64 * 1024 * 1024  # fetch_media: bytes read at most (a preview, not a download)


class Endpoints(ClientBase):
    """The /v1 client's methods (see the module's docstring). `Client` and `AsyncClient` add the transport."""

    health = sends(calls.health)

    @endpoint
    def networks(self) -> Steps[Networks]:
        """The server's networks (GET /v1/networks), read once by this client. A server without the extension
        (404/405): an empty list, every name then shown and checked as an unknown network."""
        if self._networks is None:
            try:
                found = yield from self.exchange(calls.networks())
                self._networks = Networks(found.items)
            except ApiError as err:
                if err.status not in (404, 405):
                    raise
                self._networks = Networks()
        return self._networks

    @endpoint
    def login(self, email: str, password: str) -> Steps[SessionOut]:
        """POST /v1/auth/login; the session is also used by this client from then on."""
        out = yield from self.exchange(calls.login(email, password))
        self.session_token = out.session_token
        return out

    # ---- API keys, workspace ---------------------------------------------------------------------------------
    create_key = sends(calls.create_key)

    @endpoint
    def list_keys(self) -> Steps[list[KeyOut]]:
        return (yield from self.exchange(calls.list_keys())).items

    revoke_key = sends(calls.revoke_key)
    purge_key = sends(calls.purge_key)
    get_workspace = sends(calls.get_workspace)
    edit_workspace = sends(calls.edit_workspace)

    # ---- accounts ---------------------------------------------------------------------------------------------
    list_accounts = sends(calls.list_accounts)
    add_sandbox_account = sends(calls.add_sandbox_account)
    remove_account = sends(calls.remove_account)
    start_oauth = sends(calls.start_oauth)
    finish_oauth = sends(calls.finish_oauth)
    connect_oauth_accounts = sends(calls.connect_oauth_accounts)
    connect_account_token = sends(calls.connect_account_token)
    accounts_doctor = sends(calls.accounts_doctor)
    account_choices = sends(calls.account_choices)
    connect_account_login = sends(calls.connect_account_login)
    check_account = sends(calls.check_account)

    # ---- posts ------------------------------------------------------------------------------------------------
    create_post = sends(calls.create_post)
    get_post = sends(calls.get_post)
    list_posts = sends(calls.list_posts)
    edit_post = sends(calls.edit_post)
    cancel_post = sends(calls.cancel_post)
    activity = sends(calls.activity)
    credits = sends(calls.credits)

    @listing
    def iter_posts(
        self, query: PostQuery | None = None, /, *, max_items: int | None = None, **filters: Any
    ) -> Items[PostOut]:
        """Every post matching the query (and/or the filters), newest first, following cursors (100 a page
        unless the query says `limit`)."""
        paged = calls.paging_query(query, filters, 100)
        return pages(self, lambda cursor: calls.list_posts(paged, cursor=cursor), max_items)

    @endpoint
    def wait_post(
        self,
        post_id: str,
        *,
        timeout: float | None = None,
        interval: float | None = None,
        on_update: Callable[[PostOut], None] | None = None,
    ) -> Steps[PostOut]:
        """Poll until the post is completed, partial, failed or cancelled (every `poll_interval`: 10 s on a
        server, faster embedded; a scheduled post is not read again before its time). `on_update` is called
        with each changed state. Raises WaitTimeout after `timeout` seconds."""
        return (
            yield from self._poll(
                lambda: calls.get_post(post_id),
                is_final,
                snapshot,
                f"post {post_id}",
                timeout=timeout,
                interval=interval,
                on_update=on_update,
                next_wait=next_poll_in,
            )
        )

    @endpoint
    def retry_post(self, post_id: str) -> Steps[tuple[PostOut | None, PostOut]]:
        """A new post for the original's targets that failed `retriable` (see calls.retry_body).
        Returns (new post or None when nothing is retriable, original post)."""
        original = yield from self.exchange(calls.get_post(post_id))
        body, _, _ = calls.retry_body(original)
        if body is None:
            return None, original
        return (yield from self.exchange(calls.create_post(body))), original

    # ---- dedicated tiktok publishing --------------------------------------------------------------------------
    publish_tiktok_photo = sends(calls.publish_tiktok_photo)
    publish_tiktok_video = sends(calls.publish_tiktok_video)
    tiktok_status = sends(calls.tiktok_status)

    @endpoint
    def wait_tiktok(
        self,
        publish_id: str,
        channel_id: str | None = None,
        *,
        timeout: float | None = calls.TIKTOK_WAIT_S,
        interval: float | None = None,
        on_update: Callable[[TikTokStatusOut], None] | None = None,
    ) -> Steps[TikTokStatusOut]:
        """Poll until SEND_TO_USER_INBOX, PUBLISH_COMPLETE or FAILED (every `poll_interval`: 10 s on a server,
        faster embedded; 2 minutes at most by default, as spec 4.6 suggests). Raises WaitTimeout."""
        return (
            yield from self._poll(
                lambda: calls.tiktok_status(publish_id, channel_id),
                lambda status: status.status in TIKTOK_FINAL,
                calls.tiktok_snapshot,
                f"tiktok publication {publish_id}",
                timeout=timeout,
                interval=interval,
                on_update=on_update,
            )
        )

    # ---- media ------------------------------------------------------------------------------------------------
    upload_media_url = sends(calls.upload_media_url)
    upload_media_file = sends(calls.upload_media_file)
    list_media = sends(calls.list_media)
    get_media = sends(calls.get_media)
    delete_media = sends(calls.delete_media)

    @listing
    def iter_media(self, /, *, max_items: int | None = None, **filters: Any) -> Items[MediaItem]:
        """The whole media library, newest first, following cursors."""
        filters.setdefault("limit", 200)
        return pages(self, lambda cursor: calls.list_media(**(filters | {"cursor": cursor})), max_items)

    @endpoint
    def fetch_media(self, url: str, *, max_bytes: int = MEDIA_PREVIEW_MAX) -> Steps[tuple[bytes, str | None]]:
        """The bytes of a media file by its URL (a post's `mediaUrls` entry), read through this client's transport:
        the embedded backend's media host in this process, else the network. No credential is sent (a media URL
        is public). Returns (bytes, content type). NetworkError on an error status, past `max_bytes`, or when
        unreachable."""
        chunks: list[bytes] = []
        types: list[str | None] = []
        total = 0

        def start(response: httpx.Response) -> None:
            _refuse_error_status(url, response)
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise NetworkError(
                    f"{url}: {int(declared) / 1e6:.1f} MB is over {max_bytes / 1e6:.0f} MB", "media_too_large"
                )
            types.append(response.headers.get("content-type"))

        def chunk(data: bytes) -> None:
            nonlocal total
            total += len(data)
            if total > max_bytes:
                raise NetworkError(f"{url}: over {max_bytes / 1e6:.0f} MB", "media_too_large")
            chunks.append(data)

        yield Stream(url, start, chunk)
        return b"".join(chunks), types[0]

    @endpoint
    def download_media(self, url: str, dest: str | Path) -> Steps[int]:
        """Save a media file (a `mediaUrl`) to `dest`, streamed, through this client's transport (the embedded
        backend's media host in this process, else the network). No credential is sent. Returns the bytes written;
        NetworkError on an error status or when unreachable (a partial file is removed)."""
        path = Path(dest)
        files: list[Any] = []  # the file, once the answer is a success
        written = 0

        def start(response: httpx.Response) -> None:
            _refuse_error_status(url, response)
            files.append(path.open("wb"))

        def chunk(data: bytes) -> None:
            nonlocal written
            files[0].write(data)
            written += len(data)

        try:
            yield Stream(url, start, chunk)
        except NetworkError:
            if files:
                files[0].close()
                path.unlink(missing_ok=True)
            raise
        finally:
            if files:
                files[0].close()
        return written

    # ---- webhooks (extension; docs/webhooks.md) ---------------------------------------------------------------
    create_webhook = sends(calls.create_webhook)
    check_webhook_url = sends(calls.check_webhook_url)
    list_webhooks = sends(calls.list_webhooks)
    get_webhook = sends(calls.get_webhook)
    update_webhook = sends(calls.update_webhook)
    delete_webhook = sends(calls.delete_webhook)
    rotate_webhook = sends(calls.rotate_webhook)
    test_webhook = sends(calls.test_webhook)
    list_deliveries = sends(calls.list_deliveries)
    get_event = sends(calls.get_event)
    redeliver_event = sends(calls.redeliver_event)

    @listing
    def iter_deliveries(
        self, webhook_id: str, /, *, max_items: int | None = None, **filters: Any
    ) -> Items[DeliveryOut]:
        """An endpoint's whole delivery log, newest first, following cursors."""
        filters.setdefault("limit", 100)
        return pages(
            self,
            lambda cursor: calls.list_deliveries(webhook_id, **(filters | {"cursor": cursor})),
            max_items,
        )

    # ---- generations ------------------------------------------------------------------------------------------
    @endpoint
    def create_generation(
        self,
        body: GenerationCreate | dict[str, Any],
        *,
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> Steps[GenerationOut | GenerationQuote]:
        """Create an image or a 5/10/15 s video from a prompt (202 `pending`, credits charged); with `dry_run`,
        only the cost and the balance after (nothing created or charged; a socialpub extension).
        `idempotency_key` (extension): a key already used in the workspace answers the generation made with it
        (200, `_http_status` 200), nothing charged again."""
        if dry_run:
            return (yield from self.exchange(calls.quote_generation(body)))
        return (yield from self.exchange(calls.create_generation(body, idempotency_key=idempotency_key)))

    get_generation = sends(calls.get_generation)
    list_generations = sends(calls.list_generations)
    delete_generation = sends(calls.delete_generation)

    @listing
    def iter_generations(self, /, *, max_items: int | None = None, **filters: Any) -> Items[GenerationOut]:
        """Every creation matching the filters, newest first, following cursors."""
        filters.setdefault("limit", 100)
        return pages(self, lambda cursor: calls.list_generations(**(filters | {"cursor": cursor})), max_items)

    @endpoint
    def wait_generation(
        self,
        generation_id: str,
        *,
        timeout: float | None = None,
        interval: float | None = None,
        on_update: Callable[[GenerationOut], None] | None = None,
    ) -> Steps[GenerationOut]:
        """Poll until the generation is completed or failed (every `poll_interval`: 10 s on a server, as spec 8
        suggests; faster embedded). `on_update` is called with each changed state. Raises WaitTimeout."""
        return (
            yield from self._poll(
                lambda: calls.get_generation(generation_id),
                lambda generation: generation.status in GENERATION_FINAL,
                calls.generation_snapshot,
                f"generation {generation_id}",
                timeout=timeout,
                interval=interval,
                on_update=on_update,
            )
        )

    # ---- sandbox networks -------------------------------------------------------------------------------------
    sandbox_published = sends(calls.sandbox_published)

    # ---- the one poll loop ------------------------------------------------------------------------------------
    def _poll(
        self,
        read: Callable[[], Call[S]],
        done: Callable[[S], bool],
        seen_of: Callable[[S], tuple[Any, ...]],
        what: str,
        *,
        timeout: float | None,
        interval: float | None,
        on_update: Callable[[S], None] | None,
        next_wait: Callable[[S, float], float] = lambda _state, interval: interval,
    ) -> Steps[S]:
        """Read `read()` until `done`, sleeping `next_wait` between reads (`interval`, else the client's
        `poll_interval`); `on_update` with the first state and each that changed (`seen_of`). WaitTimeout with the
        last state read after `timeout` seconds."""
        every = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        state = yield from self.exchange(read())
        seen = seen_of(state)
        if on_update:
            on_update(state)
        while not done(state):
            wait = next_wait(state, every)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    status = getattr(state, "status", "?")
                    raise WaitTimeout(f"{what} is still {status} after {timeout:g} s", state)
                wait = min(wait, left)
            yield Sleep(wait)
            state = yield from self.exchange(read())
            if on_update and seen_of(state) != seen:
                seen = seen_of(state)
                on_update(state)
        return state


def _refuse_error_status(url: str, response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise NetworkError(f"GET {url}: HTTP {response.status_code}", "media_unavailable")
