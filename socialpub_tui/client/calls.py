"""Every /v1 endpoint as a Call: path, method, body, auth and the response model from backend.schemas
(the wire format is defined once, there). The sync and async clients run these.

Each function imports the schemas it uses when it is called (the module-level imports are for the type checker):
the fifteen schema modules cost ~45 ms to import, and a client — the TUI's launch, a CLI command — needs two or
three of them."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from backend.schemas.accounts import (
        AccountCheck,
        AccountChoices,
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
    from backend.schemas.keys import KeyCreated, KeyDeleted, KeyList
    from backend.schemas.media import MediaDeleted, MediaItem, MediaList, MediaOut
    from backend.schemas.networks import NetworkList
    from backend.schemas.posts import PostCreate, PostList, PostOut, PostPatch, PostQuery
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
from backend.schemas.statuses import TargetStatus
from socialpub_tui.client._core import Call, clean, dump
from socialpub_tui.client.errors import ApiError


def _id(value: str) -> str:
    return quote(value, safe="")


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/v1/health", dict, auth="none")


def networks() -> Call[NetworkList]:
    """GET /v1/networks (extension): the server's networks. Clients cache it (`Client.networks()`)."""
    from backend.schemas.networks import NetworkList  # deferred: the schemas a call needs (module docstring)

    return Call("GET", "/v1/networks", NetworkList, auth="none", optional_extension="GET /v1/networks")


def login(email: str, password: str) -> Call[SessionOut]:
    from backend.schemas.auth import (  # deferred: the schemas a call needs (module docstring)
        LoginRequest,
        SessionOut,
    )

    return Call(
        "POST",
        "/v1/auth/login",
        SessionOut,
        json=dump(LoginRequest(email=email, password=password)),
        auth="none",
        optional_extension="POST /v1/auth/login",
    )


# ---- API keys (session) -----------------------------------------------------------------------------------


def create_key(
    name: str = "API key", expires_in_days: int | None = 90, scopes: list[str] | None = None
) -> Call[KeyCreated]:
    from backend.schemas.keys import (  # deferred: the schemas a call needs (module docstring)
        KeyCreate,
        KeyCreated,
    )

    body = KeyCreate.model_validate(
        clean({"name": name, "scopes": scopes}) | {"expires_in_days": expires_in_days}
    )
    return Call(
        "POST",
        "/v1/api-keys",
        KeyCreated,
        json=body.model_dump(mode="json", by_alias=True, exclude_none=False),
        auth="session",
    )


def list_keys() -> Call[KeyList]:
    from backend.schemas.keys import KeyList  # deferred: the schemas a call needs (module docstring)

    return Call("GET", "/v1/api-keys", KeyList, auth="session")


def revoke_key(key_id: str) -> Call[KeyDeleted]:
    from backend.schemas.keys import KeyDeleted  # deferred: the schemas a call needs (module docstring)

    return Call("DELETE", f"/v1/api-keys/{_id(key_id)}", KeyDeleted, auth="session")


def purge_key(key_id: str) -> Call[KeyDeleted]:
    from backend.schemas.keys import KeyDeleted  # deferred: the schemas a call needs (module docstring)

    return Call("DELETE", f"/v1/api-keys/{_id(key_id)}", KeyDeleted, params={"purge": "true"}, auth="session")


# ---- workspace ---------------------------------------------------------------------------------------------


def get_workspace() -> Call[WorkspaceOut]:
    from backend.schemas.workspace import (
        WorkspaceOut,  # deferred: the schemas a call needs (module docstring)
    )

    return Call("GET", "/v1/workspace", WorkspaceOut)


def edit_workspace(changes: WorkspacePatch | dict[str, Any]) -> Call[WorkspaceOut]:
    from backend.schemas.workspace import (  # deferred: the schemas a call needs (module docstring)
        WorkspaceOut,
        WorkspacePatch,
    )

    patch = changes if isinstance(changes, WorkspacePatch) else WorkspacePatch.model_validate(changes)
    return Call(
        "PATCH",
        "/v1/workspace",
        WorkspaceOut,
        json=dump(patch),
        auth="session",
        optional_extension="PATCH /v1/workspace",
    )


# ---- accounts ----------------------------------------------------------------------------------------------


def list_accounts() -> Call[AccountList]:
    from backend.schemas.accounts import AccountList  # deferred: the schemas a call needs (module docstring)

    return Call("GET", "/v1/accounts", AccountList)


def add_sandbox_account(platform: str, name: str, behaviour: str = "ok") -> Call[AccountOut]:
    from backend.schemas.accounts import (  # deferred: the schemas a call needs (module docstring)
        AccountCreate,
        AccountOut,
    )

    body = AccountCreate.model_validate({"platform": platform, "name": name, "behaviour": behaviour})
    return Call(
        "POST",
        "/v1/accounts",
        AccountOut,
        json=dump(body) | {"kind": "sandbox"},
        auth="session",
        optional_extension="POST /v1/accounts",
    )


def remove_account(account_id: str) -> Call[AccountOut]:
    from backend.schemas.accounts import AccountOut  # deferred: the schemas a call needs (module docstring)

    return Call(
        "DELETE",
        f"/v1/accounts/{_id(account_id)}",
        AccountOut,
        auth="session",
        optional_extension="DELETE /v1/accounts/:id",
    )


def start_oauth(
    platform: str, redirect_uri: str, name: str | None = None, instance: str | None = None
) -> Call[OAuthStarted]:
    """Start connecting live accounts with OAuth: open `authorize_url`; the redirect brings `state` and `code`
    (`instance`: the server of a network with one app per server, e.g. a Mastodon instance)."""
    from backend.schemas.accounts import (  # deferred: the schemas a call needs (module docstring)
        OAuthStart,
        OAuthStarted,
    )

    given = {"platform": platform, "redirect_uri": redirect_uri, "name": name}
    if instance:
        given["instance"] = instance
    body = OAuthStart.model_validate(given)
    return Call(
        "POST",
        "/v1/accounts/oauth/start",
        OAuthStarted,
        json=dump(body),
        auth="session",
        optional_extension="POST /v1/accounts/oauth/start",
    )


def finish_oauth(state: str, code: str) -> Call[OAuthFinished]:
    from backend.schemas.accounts import (  # deferred: the schemas a call needs (module docstring)
        OAuthFinish,
        OAuthFinished,
    )

    return Call(
        "POST",
        "/v1/accounts/oauth/finish",
        OAuthFinished,
        json=dump(OAuthFinish(state=state, code=code)),
        auth="session",
        optional_extension="POST /v1/accounts/oauth/finish",
    )


def connect_oauth_accounts(grant_id: str, external_ids: list[str]) -> Call[ConnectedAccounts]:
    from backend.schemas.accounts import (  # deferred: the schemas a call needs (module docstring)
        ConnectedAccounts,
        OAuthConnect,
    )

    return Call(
        "POST",
        f"/v1/accounts/oauth/{_id(grant_id)}/connect",
        ConnectedAccounts,
        json=dump(OAuthConnect(external_ids=external_ids)),
        auth="session",
        optional_extension="POST /v1/accounts/oauth/:grantId/connect",
    )


def connect_account_token(
    platform: str,
    access_token: str,
    *,
    refresh_token: str | None = None,
    expires_in: int | None = None,
    external_id: str | None = None,
    name: str | None = None,
) -> Call[AccountOut]:
    from backend.schemas.accounts import (  # deferred: the schemas a call needs (module docstring)
        AccountOut,
        TokenConnect,
    )

    body = TokenConnect.model_validate(
        {
            "platform": platform,
            "access_token": access_token,
            "refresh_token": refresh_token,
            "expires_in": expires_in,
            "external_id": external_id,
            "name": name,
        }
    )
    return Call(
        "POST",
        "/v1/accounts/connect/token",
        AccountOut,
        json=dump(body),
        auth="session",
        optional_extension="POST /v1/accounts/connect/token",
    )


def accounts_doctor(platform: str | None = None) -> Call[DoctorReport]:
    """What stands between this installation and publishing: each network's configured app and each connected
    account, findings with their fix (extension GET /v1/accounts/doctor)."""
    from backend.schemas.accounts import DoctorReport  # deferred: the schemas a call needs (module docstring)

    return Call(
        "GET",
        "/v1/accounts/doctor",
        DoctorReport,
        params={"platform": platform},
        optional_extension="GET /v1/accounts/doctor",
    )


def account_choices(account_id: str) -> Call[AccountChoices]:
    """What the account's network says its creator may choose now (extension GET /v1/accounts/:id/choices)."""
    from backend.schemas.accounts import (
        AccountChoices,
    )  # deferred: the schema modules' import (module docstring)

    return Call(
        "GET",
        f"/v1/accounts/{_id(account_id)}/choices",
        AccountChoices,
        optional_extension="GET /v1/accounts/:id/choices",
    )


def connect_account_login(
    platform: str, identifier: str, password: str, *, service: str | None = None, name: str | None = None
) -> Call[AccountOut]:
    from backend.schemas.accounts import (  # deferred: the schemas a call needs (module docstring)
        AccountOut,
        LoginConnect,
    )

    body = LoginConnect.model_validate(
        {
            "platform": platform,
            "identifier": identifier,
            "password": password,
            "service": service,
            "name": name,
        }
    )
    return Call(
        "POST",
        "/v1/accounts/connect/login",
        AccountOut,
        json=dump(body),
        auth="session",
        optional_extension="POST /v1/accounts/connect/login",
    )


def check_account(account_id: str) -> Call[AccountCheck]:
    from backend.schemas.accounts import AccountCheck  # deferred: the schemas a call needs (module docstring)

    return Call(
        "POST",
        f"/v1/accounts/{_id(account_id)}/check",
        AccountCheck,
        auth="session",
        optional_extension="POST /v1/accounts/:id/check",
    )


# ---- posts -------------------------------------------------------------------------------------------------


def create_post(post: PostCreate | dict[str, Any]) -> Call[PostOut]:
    from backend.schemas.posts import (  # deferred: the schemas a call needs (module docstring)
        PostCreate,
        PostOut,
    )

    body = post if isinstance(post, PostCreate) else PostCreate.model_validate(post)
    return Call("POST", "/v1/posts", PostOut, json=dump(body))


def get_post(post_id: str) -> Call[PostOut]:
    from backend.schemas.posts import PostOut  # deferred: the schemas a call needs (module docstring)

    return Call("GET", f"/v1/posts/{_id(post_id)}", PostOut)


def post_query(query: PostQuery | None = None, /, **filters: Any) -> PostQuery:
    """`query` with `filters` (PostQuery's field names; None: not given) over it, validated."""
    from backend.schemas.posts import PostQuery  # deferred: as every schema here (the module's docstring)

    data = query.model_dump(exclude_unset=True) if query is not None else {}
    return PostQuery.model_validate(data | clean(filters))


def paging_query(query: PostQuery | None, filters: dict[str, Any], page_size: int) -> PostQuery:
    """The query of a walk over every page: `page_size` a page unless the query or the filters set `limit`."""
    merged = post_query(query, **filters)
    return merged if "limit" in merged.model_fields_set else post_query(merged, limit=page_size)


def list_posts(query: PostQuery | None = None, /, **filters: Any) -> Call[PostList]:
    """A page of posts: a PostQuery, or its fields as keyword arguments (`cursor`, `limit`, `status`,
    `platform`, `account_id`, `since`, `until`, `time_field`, `idempotency_key`, `q`, `order`, `label`) — over
    the query when both are given. `q`: text contains (ignoring case); `order`: `newest` (the server's default)
    or `upcoming` (scheduled soonest first, then the rest most recent first); `time_field` `dueAt` ranges over
    scheduledAt-else-createdAt. A cursor is valid with the order it came from. `label`: `KEY=VALUE` each, all
    must match. Only the parameters set are sent."""
    from backend.schemas.posts import PostList  # deferred: the schemas a call needs (module docstring)

    params = post_query(query, **filters).params()
    return Call("GET", "/v1/posts", PostList, params=params, optional_extension="GET /v1/posts")


def edit_post(post_id: str, changes: PostPatch | dict[str, Any]) -> Call[PostOut]:
    from backend.schemas.posts import (  # deferred: the schemas a call needs (module docstring)
        PostOut,
        PostPatch,
    )

    patch = changes if isinstance(changes, PostPatch) else PostPatch.model_validate(changes)
    return Call("PATCH", f"/v1/posts/{_id(post_id)}", PostOut, json=dump(patch))


def cancel_post(post_id: str) -> Call[None]:
    return Call("DELETE", f"/v1/posts/{_id(post_id)}", None)


def retry_body(post: PostOut) -> tuple[dict[str, Any] | None, list[Any], list[Any]]:
    """`posts retry`: a new post for the targets that failed with failType `retriable` — never the permanent
    failures, never the successes. Returns (body or None, retried targets, skipped targets).

    The idempotency key is derived from the original post, so running the retry twice creates one post.
    To retry again after the retry failed, retry the new post."""
    retried = [t for t in post.targets if t.status == TargetStatus.FAILED and t.fail_type == "retriable"]
    skipped = [t for t in post.targets if t not in retried]
    if not retried:
        return None, [], skipped
    targets: list[Any] = [
        {"platform": t.platform, "channelId": t.account_id} if t.account_id else t.platform for t in retried
    ]
    body: dict[str, Any] = {
        "targets": targets,
        "content": post.content,
        "mediaUrls": list(post.media_urls),
        "idempotencyKey": f"retry-of:{post.id}",
    }
    if post.options:
        body["options"] = post.options
    return body, retried, skipped


def activity(
    *, days: int | None = None, tz: str | None = None, failures: int | None = None
) -> Call[ActivityOut]:
    """Outcomes per local day of `tz` over the last `days` days and the latest failures (extension
    GET /v1/activity)."""
    from backend.schemas.activity import ActivityOut  # deferred: the schemas a call needs (module docstring)

    return Call(
        "GET",
        "/v1/activity",
        ActivityOut,
        params={"days": days, "tz": tz, "failures": failures},
        optional_extension="GET /v1/activity",
    )


# ---- media -------------------------------------------------------------------------------------------------

MAX_MEDIA_BODY = 30 * 1024 * 1024  # spec 4.3: whole request body at most 30 MB (about 22 MB of file)


class Base64FileBody:
    """The JSON body `{"base64": "…"}` of a local file, encoded while it is sent (constant memory), with a
    progress callback receiving the count of file bytes sent so far. Re-iterable (a 429 retry resends it)."""

    PREFIX = b'{"base64":"'
    SUFFIX = b'"}'
    CHUNK = 3 * 64 * 1024  # a multiple of 3: chunks encode independently

    def __init__(self, path: Path, progress: Callable[[int], None] | None = None) -> None:
        self.path = path
        self.size = path.stat().st_size
        self.progress = progress
        self.length = len(self.PREFIX) + 4 * ((self.size + 2) // 3) + len(self.SUFFIX)

    def __iter__(self) -> Iterator[bytes]:
        yield self.PREFIX
        sent = 0
        with self.path.open("rb") as fh:
            while chunk := fh.read(self.CHUNK):
                yield base64.b64encode(chunk)
                sent += len(chunk)
                if self.progress:
                    self.progress(sent)
        yield self.SUFFIX


class AsyncBase64FileBody:
    """The same body for the async client (an `httpx.AsyncClient` sends only an async iterable): the file is
    read chunk by chunk in a thread, so the event loop — the TUI — keeps running and can draw the progress."""

    def __init__(self, body: Base64FileBody) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        import asyncio

        body = self.body
        yield body.PREFIX
        sent = 0
        fh = await asyncio.to_thread(body.path.open, "rb")
        try:
            while chunk := await asyncio.to_thread(fh.read, body.CHUNK):
                yield base64.b64encode(chunk)
                sent += len(chunk)
                if body.progress:
                    body.progress(sent)
        finally:
            fh.close()
        yield body.SUFFIX


def upload_media_url(url: str) -> Call[MediaOut]:
    """Ingest a file from a public http(s) URL (recommended for videos)."""
    from backend.schemas.media import (  # deferred: the schemas a call needs (module docstring)
        MediaCreate,
        MediaOut,
    )

    return Call("POST", "/v1/media", MediaOut, json=dump(MediaCreate(url=url)))


def upload_media_file(path: str | Path, progress: Callable[[int], None] | None = None) -> Call[MediaOut]:
    """Upload a local file: POST /v1/media with the file in base64, streamed (`progress(bytes_sent)` as it goes;
    the async client reads the file in a thread). Refused locally when over the body limit."""
    from backend.schemas.media import MediaOut  # deferred: the schemas a call needs (module docstring)

    body = Base64FileBody(Path(path), progress)
    if body.length > MAX_MEDIA_BODY:
        raise ApiError(
            0,
            "payload_too_large",
            f"{path}: {body.size / 1e6:.1f} MB is over the {MAX_MEDIA_BODY * 3 // 4 // 10**6} MB a file "
            "upload allows (30 MB body in base64); host it and pass its https URL instead",
        )
    return Call(
        "POST",
        "/v1/media",
        MediaOut,
        content=body,
        headers={"content-type": "application/json", "content-length": str(body.length)},
    )


def credits(*, cursor: str | None = None, limit: int | None = None) -> Call[CreditHistory]:
    """The balance and the credit ledger, newest first (extension GET /v1/credits)."""
    from backend.schemas.credits import CreditHistory  # deferred: the schemas a call needs (module docstring)

    return Call(
        "GET",
        "/v1/credits",
        CreditHistory,
        params={"cursor": cursor, "limit": limit},
        optional_extension="GET /v1/credits",
    )


def list_media(
    *,
    cursor: str | None = None,
    limit: int | None = None,
    type: str | None = None,
    sha256: str | None = None,
    source_sha256: str | None = None,
) -> Call[MediaList]:
    """A page of the media library; `sha256`: only the files with these stored bytes; `source_sha256`: only those
    ingested from bytes with this hash (before re-encoding)."""
    from backend.schemas.media import MediaList  # deferred: the schemas a call needs (module docstring)

    return Call(
        "GET",
        "/v1/media",
        MediaList,
        params={
            "cursor": cursor,
            "limit": limit,
            "type": type,
            "sha256": sha256,
            "sourceSha256": source_sha256,
        },
        optional_extension="GET /v1/media",
    )


def get_media(key: str) -> Call[MediaItem]:
    from backend.schemas.media import MediaItem  # deferred: the schemas a call needs (module docstring)

    return Call("GET", f"/v1/media/{_id(key)}", MediaItem, optional_extension="GET /v1/media/:key")


def delete_media(key: str) -> Call[MediaDeleted]:
    from backend.schemas.media import MediaDeleted  # deferred: the schemas a call needs (module docstring)

    return Call("DELETE", f"/v1/media/{_id(key)}", MediaDeleted, optional_extension="DELETE /v1/media/:key")


# ---- dedicated tiktok publishing ---------------------------------------------------------------------------


def publish_tiktok_photo(body: TikTokPhotoCreate | dict[str, Any]) -> Call[TikTokPhotoOut]:
    """A photo carousel (1-35 images on the media host); postMode defaults to MEDIA_UPLOAD (a draft)."""
    from backend.schemas.tiktok import (  # deferred: the schemas a call needs (module docstring)
        TikTokPhotoCreate,
        TikTokPhotoOut,
    )

    model = body if isinstance(body, TikTokPhotoCreate) else TikTokPhotoCreate.model_validate(body)
    return Call("POST", "/v1/publish/tiktok/photo", TikTokPhotoOut, json=dump(model))


def publish_tiktok_video(body: TikTokVideoCreate | dict[str, Any]) -> Call[TikTokVideoOut]:
    """A video on the media host; the title is published only in DIRECT_POST."""
    from backend.schemas.tiktok import (  # deferred: the schemas a call needs (module docstring)
        TikTokVideoCreate,
        TikTokVideoOut,
    )

    model = body if isinstance(body, TikTokVideoCreate) else TikTokVideoCreate.model_validate(body)
    return Call("POST", "/v1/publish/tiktok/video", TikTokVideoOut, json=dump(model))


def tiktok_status(publish_id: str, channel_id: str | None = None) -> Call[TikTokStatusOut]:
    """The publication's status (`failReason` on FAILED); pass the channelId used at creation."""
    from backend.schemas.tiktok import (
        TikTokStatusOut,  # deferred: the schemas a call needs (module docstring)
    )

    return Call(
        "GET",
        f"/v1/publish/tiktok/status/{_id(publish_id)}",
        TikTokStatusOut,
        params={"channelId": channel_id},
    )


TIKTOK_WAIT_S = 120.0  # spec 4.6: poll every 10 s, 2 minutes at most


def tiktok_snapshot(status: TikTokStatusOut) -> tuple[Any, ...]:
    return (status.status, status.fail_reason, status.downloaded_bytes)


# ---- generations -------------------------------------------------------------------------------------------

GENERATION_POLL_S = 10.0  # spec 8: poll a generation every 10 seconds


def _generation_body(body: GenerationCreate | dict[str, Any], idempotency_key: str | None = None) -> Any:
    from backend.schemas.generations import (
        GenerationCreate,  # deferred: the schemas a call needs (module docstring)
    )

    if idempotency_key is not None:
        data = (
            body.model_dump(by_alias=True, exclude_none=True) if isinstance(body, GenerationCreate) else body
        )
        body = dict(data) | {"idempotencyKey": idempotency_key}
    model = body if isinstance(body, GenerationCreate) else GenerationCreate.model_validate(body)
    return dump(model)


def create_generation(
    body: GenerationCreate | dict[str, Any], *, idempotency_key: str | None = None
) -> Call[GenerationOut]:
    """POST /v1/generations: 202 `pending`, the credits charged. `idempotency_key` (extension): over the body's."""
    from backend.schemas.generations import (
        GenerationOut,  # deferred: the schemas a call needs (module docstring)
    )

    return Call("POST", "/v1/generations", GenerationOut, json=_generation_body(body, idempotency_key))


def quote_generation(body: GenerationCreate | dict[str, Any]) -> Call[GenerationQuote]:
    """POST /v1/generations?dryRun=true (a socialpub extension): the cost and the balance after, nothing charged.
    A service that does not know `dryRun` would create the generation: its answer (a generation, not a quote) is
    then reported as an invalid response."""
    from backend.schemas.generations import (
        GenerationQuote,  # deferred: the schemas a call needs (module docstring)
    )

    return Call(
        "POST",
        "/v1/generations",
        GenerationQuote,
        json=_generation_body(body),
        params={"dryRun": "true"},
        optional_extension="POST /v1/generations?dryRun=true",
    )


def get_generation(generation_id: str) -> Call[GenerationOut]:
    from backend.schemas.generations import (
        GenerationOut,  # deferred: the schemas a call needs (module docstring)
    )

    return Call("GET", f"/v1/generations/{_id(generation_id)}", GenerationOut)


def list_generations(
    *,
    cursor: str | None = None,
    limit: int | None = None,
    status: list[str] | None = None,
    type: str | None = None,
) -> Call[GenerationList]:
    """A page of recent creations (newest first) with the workspace's `credits`."""
    from backend.schemas.generations import (
        GenerationList,  # deferred: the schemas a call needs (module docstring)
    )

    return Call(
        "GET",
        "/v1/generations",
        GenerationList,
        params={"cursor": cursor, "limit": limit, "status": status or None, "type": type},
    )


def delete_generation(generation_id: str) -> Call[GenerationDeleted]:
    from backend.schemas.generations import (
        GenerationDeleted,  # deferred: the schemas a call needs (module docstring)
    )

    return Call("DELETE", f"/v1/generations/{_id(generation_id)}", GenerationDeleted)


def generation_snapshot(generation: GenerationOut) -> tuple[Any, ...]:
    return (generation.status, generation.media_url, generation.error)


# ---- webhooks (extension; docs/webhooks.md) -----------------------------------------------------------------

_WEBHOOKS = "/v1/webhooks (webhooks)"


def create_webhook(
    url: str, *, events: list[str] | None = None, description: str | None = None
) -> Call[WebhookWithSecret]:
    """POST /v1/webhooks: 201 with the `whsec_` secret (shown this once)."""
    from backend.schemas.webhooks import (  # deferred: the schemas a call needs (module docstring)
        WebhookCreate,
        WebhookWithSecret,
    )

    body = WebhookCreate.model_validate(clean({"url": url, "events": events, "description": description}))
    return Call("POST", "/v1/webhooks", WebhookWithSecret, json=dump(body), optional_extension=_WEBHOOKS)


def check_webhook_url(url: str, *, events: list[str] | None = None) -> Call[WebhookDryRun]:
    """POST /v1/webhooks?dryRun=true: every check of a registration, nothing created (400 `invalid_webhook_url`
    when the address rule refuses the URL, its message naming the setting)."""
    from backend.schemas.webhooks import (  # deferred: the schemas a call needs (module docstring)
        WebhookCreate,
        WebhookDryRun,
    )

    body = WebhookCreate.model_validate(clean({"url": url, "events": events}))
    return Call(
        "POST",
        "/v1/webhooks",
        WebhookDryRun,
        json=dump(body),
        params={"dryRun": "true"},
        optional_extension=_WEBHOOKS,
    )


def list_webhooks() -> Call[WebhookList]:
    from backend.schemas.webhooks import WebhookList  # deferred: the schemas a call needs (module docstring)

    return Call("GET", "/v1/webhooks", WebhookList, optional_extension=_WEBHOOKS)


def get_webhook(webhook_id: str) -> Call[WebhookOut]:
    from backend.schemas.webhooks import WebhookOut  # deferred: the schemas a call needs (module docstring)

    return Call("GET", f"/v1/webhooks/{_id(webhook_id)}", WebhookOut, optional_extension=_WEBHOOKS)


def update_webhook(webhook_id: str, changes: WebhookPatch | dict[str, Any]) -> Call[WebhookOut]:
    """PATCH /v1/webhooks/{id}: any of url, events, description (None clears it), enabled."""
    from backend.schemas.webhooks import (  # deferred: the schemas a call needs (module docstring)
        WebhookOut,
        WebhookPatch,
    )

    body = changes if isinstance(changes, WebhookPatch) else WebhookPatch.model_validate(changes)
    return Call(
        "PATCH",
        f"/v1/webhooks/{_id(webhook_id)}",
        WebhookOut,
        json=body.model_dump(mode="json", by_alias=True, exclude_unset=True),
        optional_extension=_WEBHOOKS,
    )


def delete_webhook(webhook_id: str) -> Call[WebhookDeleted]:
    from backend.schemas.webhooks import (
        WebhookDeleted,  # deferred: the schemas a call needs (module docstring)
    )

    return Call("DELETE", f"/v1/webhooks/{_id(webhook_id)}", WebhookDeleted, optional_extension=_WEBHOOKS)


def rotate_webhook(webhook_id: str) -> Call[WebhookWithSecret]:
    """A new secret (shown this once); the old one keeps signing beside it for 24 h."""
    from backend.schemas.webhooks import (
        WebhookWithSecret,  # deferred: the schemas a call needs (module docstring)
    )

    return Call(
        "POST", f"/v1/webhooks/{_id(webhook_id)}/rotate", WebhookWithSecret, optional_extension=_WEBHOOKS
    )


def test_webhook(webhook_id: str) -> Call[WebhookTestOut]:
    """Queue a `webhook.test` event to this endpoint only (202)."""
    from backend.schemas.webhooks import (
        WebhookTestOut,  # deferred: the schemas a call needs (module docstring)
    )

    return Call("POST", f"/v1/webhooks/{_id(webhook_id)}/test", WebhookTestOut, optional_extension=_WEBHOOKS)


def list_deliveries(
    webhook_id: str, *, status: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Call[DeliveryList]:
    """The delivery log of one endpoint, newest first, each with its attempts."""
    from backend.schemas.webhooks import DeliveryList  # deferred: the schemas a call needs (module docstring)

    return Call(
        "GET",
        f"/v1/webhooks/{_id(webhook_id)}/deliveries",
        DeliveryList,
        params={"status": status, "limit": limit, "cursor": cursor},
        optional_extension=_WEBHOOKS,
    )


def get_event(event_id: str) -> Call[EventOut]:
    from backend.schemas.webhooks import EventOut  # deferred: the schemas a call needs (module docstring)

    return Call("GET", f"/v1/events/{_id(event_id)}", EventOut, optional_extension=_WEBHOOKS)


def redeliver_event(event_id: str, *, endpoint_id: str | None = None) -> Call[RedeliverOut]:
    """Deliver an event again (same `webhook-id`) to every endpoint that had it, or to `endpoint_id` (202)."""
    from backend.schemas.webhooks import RedeliverOut  # deferred: the schemas a call needs (module docstring)

    return Call(
        "POST",
        f"/v1/events/{_id(event_id)}/redeliver",
        RedeliverOut,
        json=clean({"endpointId": endpoint_id}),
        optional_extension=_WEBHOOKS,
    )


# ---- sandbox networks (extension) --------------------------------------------------------------------------


def sandbox_published(
    *, platform: str | None = None, account_id: str | None = None, limit: int | None = None
) -> Call[SandboxPublishedList]:
    """What the sandbox networks published for this workspace (extension GET /v1/sandbox/published)."""
    from backend.schemas.sandbox import (
        SandboxPublishedList,  # deferred: the schemas a call needs (module docstring)
    )

    return Call(
        "GET",
        "/v1/sandbox/published",
        SandboxPublishedList,
        params={"platform": platform, "accountId": account_id, "limit": limit},
        optional_extension="GET /v1/sandbox/published",
    )
