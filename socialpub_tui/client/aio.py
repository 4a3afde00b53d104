"""The asynchronous client: `AsyncClient`. Same methods as `Client`, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
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
    aiterate,
    is_final,
    next_poll_in,
    snapshot,
)
from socialpub_tui.client.errors import ApiError, NetworkError, WaitTimeout
from socialpub_tui.client.networks import Networks

T = TypeVar("T")

MEDIA_PREVIEW_MAX = 64 * 1024 * 1024  # fetch_media: bytes read at most (a preview, not a download)


class AsyncClient(ClientBase):
    """The async /v1 client (the TUI's). Build one with `socialpub_tui.client.connect_async()`."""

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
        attempt = 0
        refreshed = False
        while True:
            request = self._request(self._http, call)
            try:
                response = await self._http.send(request)
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
                await self._sleep(delay)
                continue
            return self._finish(call, response)

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    # ---- endpoints ----------------------------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        return await self.run(calls.health())

    async def networks(self) -> Networks:
        """The server's networks (GET /v1/networks), read once by this client. A server without the extension
        (404/405): an empty list, every name then shown and checked as an unknown network."""
        if self._networks is None:
            try:
                self._networks = Networks((await self.run(calls.networks())).items)
            except ApiError as err:
                if err.status not in (404, 405):
                    raise
                self._networks = Networks()
        return self._networks

    async def login(self, email: str, password: str) -> SessionOut:
        out = await self.run(calls.login(email, password))
        self.session_token = out.session_token
        return out

    async def create_key(
        self, name: str = "API key", expires_in_days: int | None = 90, scopes: list[str] | None = None
    ) -> KeyCreated:
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

    # accounts
    async def list_accounts(self) -> AccountList:
        return await self.run(calls.list_accounts())

    async def add_sandbox_account(self, platform: str, name: str, behaviour: str = "ok") -> AccountOut:
        return await self.run(calls.add_sandbox_account(platform, name, behaviour))

    async def remove_account(self, account_id: str) -> AccountOut:
        return await self.run(calls.remove_account(account_id))

    async def start_oauth(
        self, platform: str, redirect_uri: str, name: str | None = None, instance: str | None = None
    ) -> OAuthStarted:
        """Start connecting live accounts with OAuth: open `authorize_url`; the redirect brings `state` and `code`."""
        return await self.run(calls.start_oauth(platform, redirect_uri, name, instance))

    async def finish_oauth(self, state: str, code: str) -> OAuthFinished:
        return await self.run(calls.finish_oauth(state, code))

    async def connect_oauth_accounts(self, grant_id: str, external_ids: list[str]) -> ConnectedAccounts:
        return await self.run(calls.connect_oauth_accounts(grant_id, external_ids))

    async def connect_account_token(
        self,
        platform: str,
        access_token: str,
        *,
        refresh_token: str | None = None,
        expires_in: int | None = None,
        external_id: str | None = None,
        name: str | None = None,
    ) -> AccountOut:
        return await self.run(
            calls.connect_account_token(
                platform,
                access_token,
                refresh_token=refresh_token,
                expires_in=expires_in,
                external_id=external_id,
                name=name,
            )
        )

    async def accounts_doctor(self, platform: str | None = None) -> DoctorReport:
        return await self.run(calls.accounts_doctor(platform))

    async def connect_account_login(
        self,
        platform: str,
        identifier: str,
        password: str,
        *,
        service: str | None = None,
        name: str | None = None,
    ) -> AccountOut:
        return await self.run(
            calls.connect_account_login(platform, identifier, password, service=service, name=name)
        )

    async def check_account(self, account_id: str) -> AccountCheck:
        return await self.run(calls.check_account(account_id))

    # posts
    async def create_post(self, post: PostCreate | dict[str, Any]) -> PostOut:
        return await self.run(calls.create_post(post))

    async def get_post(self, post_id: str) -> PostOut:
        return await self.run(calls.get_post(post_id))

    async def list_posts(self, **filters: Any) -> PostList:
        return await self.run(calls.list_posts(**filters))

    async def iter_posts(self, *, max_items: int | None = None, **filters: Any) -> AsyncIterator[PostOut]:
        filters.setdefault("limit", 100)
        async for item in aiterate(
            lambda cursor: self.list_posts(**(filters | {"cursor": cursor})), max_items
        ):
            yield item

    async def edit_post(self, post_id: str, changes: PostPatch | dict[str, Any]) -> PostOut:
        return await self.run(calls.edit_post(post_id, changes))

    async def cancel_post(self, post_id: str) -> None:
        await self.run(calls.cancel_post(post_id))

    async def wait_post(
        self,
        post_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (same API as Client)
        interval: float | None = None,
        on_update: Callable[[PostOut], None] | None = None,
    ) -> PostOut:
        interval = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        post = await self.get_post(post_id)
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
            await self._sleep(wait)
            post = await self.get_post(post_id)
            if on_update and snapshot(post) != seen:
                seen = snapshot(post)
                on_update(post)
        return post

    async def publish_tiktok_photo(self, body: TikTokPhotoCreate | dict[str, Any]) -> TikTokPhotoOut:
        return await self.run(calls.publish_tiktok_photo(body))

    async def publish_tiktok_video(self, body: TikTokVideoCreate | dict[str, Any]) -> TikTokVideoOut:
        return await self.run(calls.publish_tiktok_video(body))

    async def tiktok_status(self, publish_id: str, channel_id: str | None = None) -> TikTokStatusOut:
        return await self.run(calls.tiktok_status(publish_id, channel_id))

    async def wait_tiktok(
        self,
        publish_id: str,
        channel_id: str | None = None,
        *,
        timeout: float | None = calls.TIKTOK_WAIT_S,  # noqa: ASYNC109 (same API as Client)
        interval: float | None = None,
        on_update: Callable[[TikTokStatusOut], None] | None = None,
    ) -> TikTokStatusOut:
        interval = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        status = await self.tiktok_status(publish_id, channel_id)
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
            await self._sleep(wait)
            status = await self.tiktok_status(publish_id, channel_id)
            if on_update and calls.tiktok_snapshot(status) != seen:
                seen = calls.tiktok_snapshot(status)
                on_update(status)
        return status

    async def retry_post(self, post_id: str) -> tuple[PostOut | None, PostOut]:
        original = await self.get_post(post_id)
        body, _, _ = calls.retry_body(original)
        if body is None:
            return None, original
        return await self.create_post(body), original

    async def activity(
        self, *, days: int | None = None, tz: str | None = None, failures: int | None = None
    ) -> ActivityOut:
        """Outcomes per local day and the latest failures (extension GET /v1/activity)."""
        return await self.run(calls.activity(days=days, tz=tz, failures=failures))

    async def credits(self, *, cursor: str | None = None, limit: int | None = None) -> CreditHistory:
        """The balance and the credit ledger (each charge, refund, grant), newest first (extension
        GET /v1/credits)."""
        return await self.run(calls.credits(cursor=cursor, limit=limit))

    # media
    async def upload_media_url(self, url: str) -> MediaOut:
        """Ingest a file from a public http(s) URL (recommended for videos)."""
        return await self.run(calls.upload_media_url(url))

    async def upload_media_file(
        self, path: str | Path, progress: Callable[[int], None] | None = None
    ) -> MediaOut:
        """Upload a local file (streamed in base64; `progress(bytes_sent)` as it goes)."""
        return await self.run(calls.upload_media_file(path, progress, asynchronous=True))

    async def fetch_media(self, url: str, *, max_bytes: int = MEDIA_PREVIEW_MAX) -> tuple[bytes, str | None]:
        """The bytes of a media file by its URL (a post's `mediaUrls` entry), read through this client's transport:
        the embedded backend's media host in this process, else the network. No credential is sent (a media URL
        is public). Returns (bytes, content type). NetworkError on an error status, past `max_bytes`, or when
        unreachable."""
        try:
            async with self._http.stream("GET", url, follow_redirects=True) as response:
                if response.status_code >= 400:
                    raise NetworkError(f"GET {url}: HTTP {response.status_code}", "media_unavailable")
                declared = response.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise NetworkError(
                        f"{url}: {int(declared) / 1e6:.1f} MB is over {max_bytes / 1e6:.0f} MB",
                        "media_too_large",
                    )
                chunks: list[bytes] = []
                total = 0
                async for chunk in response.aiter_bytes():
                    total += len(chunk)
                    if total > max_bytes:
                        raise NetworkError(f"{url}: over {max_bytes / 1e6:.0f} MB", "media_too_large")
                    chunks.append(chunk)
                return b"".join(chunks), response.headers.get("content-type")
        except httpx.TimeoutException:
            raise NetworkError(f"GET {url}: timed out", "timeout") from None
        except httpx.TransportError as exc:
            raise NetworkError(f"cannot fetch {url}: {exc}") from None

    async def list_media(self, **filters: Any) -> MediaList:
        """One page of the media library (`cursor`, `limit`, `type`)."""
        return await self.run(calls.list_media(**filters))

    async def get_media(self, key: str) -> MediaItem:
        return await self.run(calls.get_media(key))

    async def delete_media(self, key: str) -> MediaDeleted:
        return await self.run(calls.delete_media(key))

    # webhooks (extension; docs/webhooks.md)
    async def create_webhook(
        self, url: str, *, events: list[str] | None = None, description: str | None = None
    ) -> WebhookWithSecret:
        """Register an endpoint; the answer holds its `whsec_` secret, shown this once."""
        return await self.run(calls.create_webhook(url, events=events, description=description))

    async def check_webhook_url(self, url: str, *, events: list[str] | None = None) -> WebhookDryRun:
        """Would `url` be registered? Every check of create_webhook, nothing created (ApiError
        `invalid_webhook_url` when refused)."""
        return await self.run(calls.check_webhook_url(url, events=events))

    async def list_webhooks(self) -> WebhookList:
        return await self.run(calls.list_webhooks())

    async def get_webhook(self, webhook_id: str) -> WebhookOut:
        return await self.run(calls.get_webhook(webhook_id))

    async def update_webhook(self, webhook_id: str, changes: WebhookPatch | dict[str, Any]) -> WebhookOut:
        return await self.run(calls.update_webhook(webhook_id, changes))

    async def delete_webhook(self, webhook_id: str) -> WebhookDeleted:
        return await self.run(calls.delete_webhook(webhook_id))

    async def rotate_webhook(self, webhook_id: str) -> WebhookWithSecret:
        return await self.run(calls.rotate_webhook(webhook_id))

    async def test_webhook(self, webhook_id: str) -> WebhookTestOut:
        return await self.run(calls.test_webhook(webhook_id))

    async def list_deliveries(self, webhook_id: str, **filters: Any) -> DeliveryList:
        """One page of an endpoint's delivery log (`status`, `limit`, `cursor`), newest first."""
        return await self.run(calls.list_deliveries(webhook_id, **filters))

    async def iter_deliveries(
        self, webhook_id: str, *, max_items: int | None = None, **filters: Any
    ) -> AsyncIterator[DeliveryOut]:
        filters.setdefault("limit", 100)
        async for item in aiterate(
            lambda cursor: self.list_deliveries(webhook_id, **(filters | {"cursor": cursor})), max_items
        ):
            yield item

    async def get_event(self, event_id: str) -> EventOut:
        return await self.run(calls.get_event(event_id))

    async def redeliver_event(self, event_id: str, *, endpoint_id: str | None = None) -> RedeliverOut:
        return await self.run(calls.redeliver_event(event_id, endpoint_id=endpoint_id))

    # generations
    async def create_generation(
        self,
        body: GenerationCreate | dict[str, Any],
        *,
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> GenerationOut | GenerationQuote:
        """Create an image or a 5/10/15 s video (202 `pending`); with `dry_run`, only the cost and the balance
        after. `idempotency_key`: as the sync client's."""
        from backend.schemas.generations import GenerationCreate

        if idempotency_key is not None and not dry_run:
            body = (
                body.model_dump(by_alias=True, exclude_none=True)
                if isinstance(body, GenerationCreate)
                else dict(body)
            ) | {"idempotencyKey": idempotency_key}
        return await self.run(calls.quote_generation(body) if dry_run else calls.create_generation(body))

    async def get_generation(self, generation_id: str) -> GenerationOut:
        return await self.run(calls.get_generation(generation_id))

    async def list_generations(self, **filters: Any) -> GenerationList:
        return await self.run(calls.list_generations(**filters))

    async def iter_generations(
        self, *, max_items: int | None = None, **filters: Any
    ) -> AsyncIterator[GenerationOut]:
        filters.setdefault("limit", 100)
        async for item in aiterate(
            lambda cursor: self.list_generations(**(filters | {"cursor": cursor})), max_items
        ):
            yield item

    async def delete_generation(self, generation_id: str) -> GenerationDeleted:
        return await self.run(calls.delete_generation(generation_id))

    async def wait_generation(
        self,
        generation_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (same API as Client)
        interval: float | None = None,
        on_update: Callable[[GenerationOut], None] | None = None,
    ) -> GenerationOut:
        interval = self.poll_interval if interval is None else interval
        deadline = None if timeout is None else time.monotonic() + timeout
        generation = await self.get_generation(generation_id)
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
            await self._sleep(wait)
            generation = await self.get_generation(generation_id)
            if on_update and calls.generation_snapshot(generation) != seen:
                seen = calls.generation_snapshot(generation)
                on_update(generation)
        return generation

    # sandbox networks
    async def sandbox_published(
        self, *, platform: str | None = None, account_id: str | None = None, limit: int | None = None
    ) -> SandboxPublishedList:
        """What the sandbox networks published for this workspace (extension GET /v1/sandbox/published)."""
        return await self.run(calls.sandbox_published(platform=platform, account_id=account_id, limit=limit))
