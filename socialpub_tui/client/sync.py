"""The synchronous client: `Client`. Same methods as `AsyncClient`, without `await`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

if TYPE_CHECKING:
    from backend.schemas.accounts import (
        AccountCheck,
        AccountList,
        AccountOut,
        ConnectedAccounts,
        DoctorReport,
        OAuthFinished,
        OAuthStarted,
    )
    from backend.schemas.activity import ActivityOut
    from backend.schemas.auth import SessionOut
    from backend.schemas.credits import CreditHistory
    from backend.schemas.generations import (
        GenerationCreate,
        GenerationDeleted,
        GenerationList,
        GenerationOut,
        GenerationQuote,
    )
    from backend.schemas.keys import KeyCreated, KeyDeleted, KeyOut
    from backend.schemas.media import MediaDeleted, MediaItem, MediaList, MediaOut
    from backend.schemas.posts import PostCreate, PostList, PostOut, PostPatch
    from backend.schemas.sandbox import SandboxPublishedList
    from backend.schemas.tiktok import (
        TikTokPhotoCreate,
        TikTokPhotoOut,
        TikTokStatusOut,
        TikTokVideoCreate,
        TikTokVideoOut,
    )
    from backend.schemas.webhooks import (
        DeliveryList,
        DeliveryOut,
        EventOut,
        RedeliverOut,
        WebhookDeleted,
        WebhookDryRun,
        WebhookList,
        WebhookOut,
        WebhookPatch,
        WebhookTestOut,
        WebhookWithSecret,
    )
    from backend.schemas.workspace import WorkspaceOut, WorkspacePatch
from backend.schemas.statuses import GENERATION_FINAL
from backend.schemas.tiktok import TIKTOK_FINAL
from socialpub_tui.client import calls
from socialpub_tui.client._core import (
    Call,
    ClientBase,
    RetryPolicy,
    is_final,
    iterate,
    next_poll_in,
    snapshot,
)
from socialpub_tui.client.errors import ApiError, NetworkError, WaitTimeout
from socialpub_tui.client.networks import Networks

T = TypeVar("T")


class Client(ClientBase):
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

    # ---- plumbing --------------------------------------------------------------------------------------
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
        attempt = 0
        refreshed = False
        while True:
            request = self._request(self._http, call)
            try:
                response = self._http.send(request)
            except httpx.TimeoutException as exc:
                raise NetworkError(
                    f"{call.method} {call.path}: timed out ({type(exc).__name__})", "timeout"
                ) from None
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

    def networks(self) -> Networks:
        """The server's networks (GET /v1/networks), read once by this client. A server without the extension
        (404/405): an empty list, every name then shown and checked as an unknown network."""
        if self._networks is None:
            try:
                self._networks = Networks(self.run(calls.networks()).items)
            except ApiError as err:
                if err.status not in (404, 405):
                    raise
                self._networks = Networks()
        return self._networks

    def login(self, email: str, password: str) -> SessionOut:
        """POST /v1/auth/login; the session is also used by this client from then on."""
        out = self.run(calls.login(email, password))
        self.session_token = out.session_token
        return out

    def create_key(
        self, name: str = "API key", expires_in_days: int | None = 90, scopes: list[str] | None = None
    ) -> KeyCreated:
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

    # accounts
    def list_accounts(self) -> AccountList:
        return self.run(calls.list_accounts())

    def add_sandbox_account(self, platform: str, name: str, behaviour: str = "ok") -> AccountOut:
        return self.run(calls.add_sandbox_account(platform, name, behaviour))

    def remove_account(self, account_id: str) -> AccountOut:
        return self.run(calls.remove_account(account_id))

    def start_oauth(
        self, platform: str, redirect_uri: str, name: str | None = None, instance: str | None = None
    ) -> OAuthStarted:
        """Start connecting live accounts with OAuth: open `authorize_url`; the redirect brings `state` and `code`."""
        return self.run(calls.start_oauth(platform, redirect_uri, name, instance))

    def finish_oauth(self, state: str, code: str) -> OAuthFinished:
        return self.run(calls.finish_oauth(state, code))

    def connect_oauth_accounts(self, grant_id: str, external_ids: list[str]) -> ConnectedAccounts:
        return self.run(calls.connect_oauth_accounts(grant_id, external_ids))

    def connect_account_token(
        self,
        platform: str,
        access_token: str,
        *,
        refresh_token: str | None = None,
        expires_in: int | None = None,
        external_id: str | None = None,
        name: str | None = None,
    ) -> AccountOut:
        return self.run(
            calls.connect_account_token(
                platform,
                access_token,
                refresh_token=refresh_token,
                expires_in=expires_in,
                external_id=external_id,
                name=name,
            )
        )

    def accounts_doctor(self, platform: str | None = None) -> DoctorReport:
        return self.run(calls.accounts_doctor(platform))

    def connect_account_login(
        self,
        platform: str,
        identifier: str,
        password: str,
        *,
        service: str | None = None,
        name: str | None = None,
    ) -> AccountOut:
        return self.run(
            calls.connect_account_login(platform, identifier, password, service=service, name=name)
        )

    def check_account(self, account_id: str) -> AccountCheck:
        return self.run(calls.check_account(account_id))

    # posts
    def create_post(self, post: PostCreate | dict[str, Any]) -> PostOut:
        return self.run(calls.create_post(post))

    def get_post(self, post_id: str) -> PostOut:
        return self.run(calls.get_post(post_id))

    def list_posts(self, **filters: Any) -> PostList:
        """One page (`cursor`, `limit`, `status`, `platform`, `account_id`, `since`, `until`, `time_field`,
        `idempotency_key`, `q`, `order`, `label`)."""
        return self.run(calls.list_posts(**filters))

    def iter_posts(self, *, max_items: int | None = None, **filters: Any) -> Iterator[PostOut]:
        """Every post matching the filters, newest first, following cursors (100 a page)."""
        filters.setdefault("limit", 100)
        return iterate(lambda cursor: self.list_posts(**(filters | {"cursor": cursor})), max_items)

    def edit_post(self, post_id: str, changes: PostPatch | dict[str, Any]) -> PostOut:
        return self.run(calls.edit_post(post_id, changes))

    def cancel_post(self, post_id: str) -> None:
        self.run(calls.cancel_post(post_id))

    def wait_post(
        self,
        post_id: str,
        *,
        timeout: float | None = None,
        interval: float | None = None,
        on_update: Callable[[PostOut], None] | None = None,
    ) -> PostOut:
        """Poll until the post is completed, partial, failed or cancelled (every `poll_interval`: 10 s on a
        server, faster embedded; a scheduled post is not read again before its time). `on_update` is called
        with each changed state. Raises WaitTimeout after `timeout` seconds."""
        interval = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        post = self.get_post(post_id)
        seen = snapshot(post)
        if on_update:
            on_update(post)
        while not is_final(post):
            wait = next_poll_in(post, interval)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(f"post {post_id} is still {post.status} after {timeout:g} s", post)
                wait = min(wait, left)
            self._sleep(wait)
            post = self.get_post(post_id)
            if on_update and snapshot(post) != seen:
                seen = snapshot(post)
                on_update(post)
        return post

    def retry_post(self, post_id: str) -> tuple[PostOut | None, PostOut]:
        """A new post for the original's targets that failed `retriable` (see calls.retry_body).
        Returns (new post or None when nothing is retriable, original post)."""
        original = self.get_post(post_id)
        body, _, _ = calls.retry_body(original)
        if body is None:
            return None, original
        return self.create_post(body), original

    def activity(
        self, *, days: int | None = None, tz: str | None = None, failures: int | None = None
    ) -> ActivityOut:
        """Outcomes per local day of `tz` over the last `days` days, and the latest failures (extension
        GET /v1/activity)."""
        return self.run(calls.activity(days=days, tz=tz, failures=failures))

    def credits(self, *, cursor: str | None = None, limit: int | None = None) -> CreditHistory:
        """The balance and the credit ledger (each charge, refund, grant), newest first (extension
        GET /v1/credits)."""
        return self.run(calls.credits(cursor=cursor, limit=limit))

    # dedicated tiktok publishing
    def publish_tiktok_photo(self, body: TikTokPhotoCreate | dict[str, Any]) -> TikTokPhotoOut:
        """A photo carousel (1-35 images on the media host); postMode defaults to MEDIA_UPLOAD (a draft)."""
        return self.run(calls.publish_tiktok_photo(body))

    def publish_tiktok_video(self, body: TikTokVideoCreate | dict[str, Any]) -> TikTokVideoOut:
        """A video on the media host; the title is published only in DIRECT_POST."""
        return self.run(calls.publish_tiktok_video(body))

    def tiktok_status(self, publish_id: str, channel_id: str | None = None) -> TikTokStatusOut:
        """The publication's status (`failReason` on FAILED); pass the channelId used at creation."""
        return self.run(calls.tiktok_status(publish_id, channel_id))

    def wait_tiktok(
        self,
        publish_id: str,
        channel_id: str | None = None,
        *,
        timeout: float | None = calls.TIKTOK_WAIT_S,
        interval: float | None = None,
        on_update: Callable[[TikTokStatusOut], None] | None = None,
    ) -> TikTokStatusOut:
        """Poll until SEND_TO_USER_INBOX, PUBLISH_COMPLETE or FAILED (every `poll_interval`: 10 s on a server,
        faster embedded; 2 minutes at most by default, as spec 4.6 suggests). Raises WaitTimeout."""
        interval = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        status = self.tiktok_status(publish_id, channel_id)
        seen = calls.tiktok_snapshot(status)
        if on_update:
            on_update(status)
        while status.status not in TIKTOK_FINAL:
            wait = interval
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(
                        f"tiktok publication {publish_id} is still {status.status} after {timeout:g} s",
                        status,
                    )
                wait = min(wait, left)
            self._sleep(wait)
            status = self.tiktok_status(publish_id, channel_id)
            if on_update and calls.tiktok_snapshot(status) != seen:
                seen = calls.tiktok_snapshot(status)
                on_update(status)
        return status

    # media
    def upload_media_url(self, url: str) -> MediaOut:
        """Ingest a file from a public http(s) URL (recommended for videos)."""
        return self.run(calls.upload_media_url(url))

    def upload_media_file(self, path: str | Path, progress: Callable[[int], None] | None = None) -> MediaOut:
        """Upload a local file (streamed in base64; `progress(bytes_sent)` as it goes)."""
        return self.run(calls.upload_media_file(path, progress))

    def list_media(self, **filters: Any) -> MediaList:
        """One page of the media library (`cursor`, `limit`, `type`)."""
        return self.run(calls.list_media(**filters))

    def get_media(self, key: str) -> MediaItem:
        return self.run(calls.get_media(key))

    def delete_media(self, key: str) -> MediaDeleted:
        return self.run(calls.delete_media(key))

    def iter_media(self, *, max_items: int | None = None, **filters: Any) -> Iterator[MediaItem]:
        """The whole media library, newest first, following cursors."""
        filters.setdefault("limit", 200)
        return iterate(lambda cursor: self.list_media(**(filters | {"cursor": cursor})), max_items)

    # webhooks (extension; docs/webhooks.md)
    def create_webhook(
        self, url: str, *, events: list[str] | None = None, description: str | None = None
    ) -> WebhookWithSecret:
        """Register an endpoint; the answer holds its `whsec_` secret, shown this once."""
        return self.run(calls.create_webhook(url, events=events, description=description))

    def check_webhook_url(self, url: str, *, events: list[str] | None = None) -> WebhookDryRun:
        """Would `url` be registered? Every check of create_webhook, nothing created (ApiError
        `invalid_webhook_url` when refused)."""
        return self.run(calls.check_webhook_url(url, events=events))

    def list_webhooks(self) -> WebhookList:
        return self.run(calls.list_webhooks())

    def get_webhook(self, webhook_id: str) -> WebhookOut:
        return self.run(calls.get_webhook(webhook_id))

    def update_webhook(self, webhook_id: str, changes: WebhookPatch | dict[str, Any]) -> WebhookOut:
        return self.run(calls.update_webhook(webhook_id, changes))

    def delete_webhook(self, webhook_id: str) -> WebhookDeleted:
        return self.run(calls.delete_webhook(webhook_id))

    def rotate_webhook(self, webhook_id: str) -> WebhookWithSecret:
        return self.run(calls.rotate_webhook(webhook_id))

    def test_webhook(self, webhook_id: str) -> WebhookTestOut:
        return self.run(calls.test_webhook(webhook_id))

    def list_deliveries(self, webhook_id: str, **filters: Any) -> DeliveryList:
        """One page of an endpoint's delivery log (`status`, `limit`, `cursor`), newest first."""
        return self.run(calls.list_deliveries(webhook_id, **filters))

    def iter_deliveries(
        self, webhook_id: str, *, max_items: int | None = None, **filters: Any
    ) -> Iterator[DeliveryOut]:
        """An endpoint's whole delivery log, newest first, following cursors."""
        filters.setdefault("limit", 100)
        return iterate(
            lambda cursor: self.list_deliveries(webhook_id, **(filters | {"cursor": cursor})), max_items
        )

    def get_event(self, event_id: str) -> EventOut:
        return self.run(calls.get_event(event_id))

    def redeliver_event(self, event_id: str, *, endpoint_id: str | None = None) -> RedeliverOut:
        return self.run(calls.redeliver_event(event_id, endpoint_id=endpoint_id))

    # generations
    def create_generation(
        self,
        body: GenerationCreate | dict[str, Any],
        *,
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> GenerationOut | GenerationQuote:
        """Create an image or a 5/10/15 s video from a prompt (202 `pending`, credits charged); with `dry_run`,
        only the cost and the balance after (nothing created or charged; a socialpub extension).
        `idempotency_key` (extension): a key already used in the workspace answers the generation made with it
        (200, `_http_status` 200), nothing charged again."""
        from backend.schemas.generations import GenerationCreate

        if idempotency_key is not None and not dry_run:
            body = (
                body.model_dump(by_alias=True, exclude_none=True)
                if isinstance(body, GenerationCreate)
                else dict(body)
            ) | {"idempotencyKey": idempotency_key}
        return self.run(calls.quote_generation(body) if dry_run else calls.create_generation(body))

    def get_generation(self, generation_id: str) -> GenerationOut:
        return self.run(calls.get_generation(generation_id))

    def list_generations(self, **filters: Any) -> GenerationList:
        """One page (`cursor`, `limit`, `status`, `type`) with the workspace's `credits`."""
        return self.run(calls.list_generations(**filters))

    def iter_generations(self, *, max_items: int | None = None, **filters: Any) -> Iterator[GenerationOut]:
        """Every creation matching the filters, newest first, following cursors."""
        filters.setdefault("limit", 100)
        return iterate(lambda cursor: self.list_generations(**(filters | {"cursor": cursor})), max_items)

    def delete_generation(self, generation_id: str) -> GenerationDeleted:
        return self.run(calls.delete_generation(generation_id))

    def wait_generation(
        self,
        generation_id: str,
        *,
        timeout: float | None = None,
        interval: float | None = None,
        on_update: Callable[[GenerationOut], None] | None = None,
    ) -> GenerationOut:
        """Poll until the generation is completed or failed (every `poll_interval`: 10 s on a server, as spec 8
        suggests; faster embedded). `on_update` is called with each changed state. Raises WaitTimeout."""
        interval = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        generation = self.get_generation(generation_id)
        seen = calls.generation_snapshot(generation)
        if on_update:
            on_update(generation)
        while generation.status not in GENERATION_FINAL:
            wait = interval
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(
                        f"generation {generation_id} is still {generation.status} after {timeout:g} s",
                        generation,
                    )
                wait = min(wait, left)
            self._sleep(wait)
            generation = self.get_generation(generation_id)
            if on_update and calls.generation_snapshot(generation) != seen:
                seen = calls.generation_snapshot(generation)
                on_update(generation)
        return generation

    def download_media(self, url: str, dest: str | Path) -> int:
        """Save a media file (a `mediaUrl`) to `dest`, streamed, through this client's transport (the embedded
        backend's media host in this process, else the network). No credential is sent. Returns the bytes written;
        NetworkError on an error status or when unreachable (a partial file is removed)."""
        dest = Path(dest)
        written = 0
        try:
            with self._http.stream("GET", url, follow_redirects=True) as response:
                if response.status_code >= 400:
                    raise NetworkError(f"GET {url}: HTTP {response.status_code}", "media_unavailable")
                with dest.open("wb") as fh:
                    for chunk in response.iter_bytes():
                        fh.write(chunk)
                        written += len(chunk)
        except httpx.TimeoutException:
            dest.unlink(missing_ok=True)
            raise NetworkError(f"GET {url}: timed out", "timeout") from None
        except httpx.TransportError as exc:
            dest.unlink(missing_ok=True)
            raise NetworkError(f"cannot fetch {url}: {exc}") from None
        return written

    # sandbox networks
    def sandbox_published(
        self, *, platform: str | None = None, account_id: str | None = None, limit: int | None = None
    ) -> SandboxPublishedList:
        """What the sandbox networks published for this workspace (extension GET /v1/sandbox/published)."""
        return self.run(calls.sandbox_published(platform=platform, account_id=account_id, limit=limit))
