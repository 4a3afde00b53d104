"""The client against httpx.MockTransport: error mapping, 429 retries, cursors, auth headers, polling."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from socialpub_tui.client import ApiError, AsyncClient, Client, NetworkError, RetryPolicy
from socialpub_tui.client.errors import ConfigError, WaitTimeout

KEY = "spk_live_v1-SECRETSECRETSECRET"


def post_json(
    pid: str = "post_1", status: str = "processing", targets: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": pid,
        "status": status,
        "scheduledAt": None,
        "createdAt": "2026-01-01T00:00:00.000Z",
        "updatedAt": "2026-01-01T00:00:00.000Z",
        "content": "hello",
        "mediaUrls": ["https://m/x.jpg"],
        "options": {},
        "idempotencyKey": None,
        "targets": targets or [target()],
        **extra,
    }


def target(
    platform: str = "facebook",
    status: str = "pending",
    fail_type: str | None = None,
    account_id: str | None = "acc_1",
) -> dict[str, Any]:
    return {
        "platform": platform,
        "accountId": account_id,
        "accountName": f"{platform} page",
        "status": status,
        "externalPostId": None,
        "postUrl": None,
        "failReason": "boom" if fail_type else None,
        "failType": fail_type,
        "completedAt": None,
    }


def make(handler: Any, **kw: Any) -> tuple[Client, list[float]]:
    slept: list[float] = []
    kw.setdefault("api_key", KEY)
    client = Client("http://api.test", transport=httpx.MockTransport(handler), sleep=slept.append, **kw)
    return client, slept


def test_error_envelope_becomes_api_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            400,
            json={
                "error": "invalid_targets",
                "message": "bad targets",
                "details": [{"platform": "youtube", "error": "video_required_for_target"}],
            },
        )

    client, _ = make(handler)
    with pytest.raises(ApiError) as info:
        client.create_post({"targets": ["youtube"], "content": "x"})
    err = info.value
    assert (err.status, err.code, err.message) == (400, "invalid_targets", "bad targets")
    assert err.details == [{"platform": "youtube", "error": "video_required_for_target"}]
    assert err.body()["error"] == "invalid_targets"


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (502, "<html>Bad gateway</html>", "bad_gateway"),
        (404, {"detail": "Not Found"}, "not_found"),
        (500, "", "internal_error"),
    ],
)
def test_foreign_error_bodies_still_map(status: int, body: Any, code: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return (
            httpx.Response(status, json=body) if isinstance(body, dict) else httpx.Response(status, text=body)
        )

    client, _ = make(handler)
    with pytest.raises(ApiError) as info:
        client.get_workspace()
    assert info.value.status == status and info.value.code == code


def test_extension_404_says_it_is_an_extension() -> None:
    client, _ = make(lambda r: httpx.Response(404, json={"error": "not_found", "message": "no such route"}))
    with pytest.raises(ApiError) as info:
        client.list_posts()
    assert "extension" in info.value.message


def test_429_retried_after_retry_after_then_succeeds() -> None:
    calls = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] < 3:
            return httpx.Response(
                429,
                headers={"Retry-After": "7"},
                json={"error": "rate_limit_exceeded", "message": "slow down"},
            )
        return httpx.Response(200, json={"items": []})

    client, slept = make(handler, session_token="tok")
    assert client.list_keys() == []
    assert calls["n"] == 3 and slept == [7.0, 7.0]


def test_429_retries_are_bounded() -> None:
    client, slept = make(
        lambda r: httpx.Response(
            429, headers={"Retry-After": "1"}, json={"error": "rate_limit_exceeded", "message": "no"}
        ),
        retry=RetryPolicy(max_retries=2),
    )
    with pytest.raises(ApiError) as info:
        client.get_workspace()
    assert info.value.status == 429 and info.value.code == "rate_limit_exceeded"
    assert slept == [1.0, 1.0]


def test_429_with_too_long_retry_after_raises_at_once() -> None:
    client, slept = make(
        lambda r: httpx.Response(
            429, headers={"Retry-After": "3600"}, json={"error": "rate_limit_exceeded", "message": "no"}
        ),
        retry=RetryPolicy(max_wait_s=60),
    )
    with pytest.raises(ApiError):
        client.get_workspace()
    assert slept == []


def test_429_without_retry_after_backs_off() -> None:
    client, slept = make(
        lambda r: httpx.Response(429, json={"error": "rate_limit_exceeded", "message": "no"}),
        retry=RetryPolicy(max_retries=3, backoff_s=1.0),
    )
    with pytest.raises(ApiError):
        client.get_workspace()
    assert slept == [1.0, 2.0, 4.0]


def test_iter_posts_follows_cursors_and_passes_filters() -> None:
    seen: list[dict[str, Any]] = []
    pages = {None: (["p1", "p2"], "c1"), "c1": (["p3"], "c2"), "c2": (["p4"], None)}

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params.multi_items())
        seen.append(params)
        ids, nxt = pages[params.get("cursor")]
        return httpx.Response(200, json={"items": [post_json(i) for i in ids], "nextCursor": nxt})

    client, _ = make(handler)
    assert [p.id for p in client.iter_posts(status=["failed"], platform="tiktok")] == ["p1", "p2", "p3", "p4"]
    assert len(seen) == 3
    assert all(s["status"] == "failed" and s["platform"] == "tiktok" and s["limit"] == "100" for s in seen)
    seen.clear()
    assert [p.id for p in client.iter_posts(max_items=2)] == ["p1", "p2"]
    assert len(seen) == 1  # frugal: no page fetched beyond what was asked


def test_list_posts_search_order_and_due_range() -> None:
    seen: list[list[tuple[str, str]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.params.multi_items())
        return httpx.Response(200, json={"items": [post_json("p1")], "nextCursor": None})

    client, _ = make(handler)
    client.list_posts(
        q="Été sale", order="upcoming", time_field="dueAt", since="2027-01-01T00:00:00Z", limit=50
    )
    assert dict(seen[-1]) == {
        "q": "Été sale",
        "order": "upcoming",
        "timeField": "dueAt",
        "from": "2027-01-01T00:00:00Z",
        "limit": "50",
    }
    client.list_posts(q="")  # an empty search is no search: nothing sent
    assert seen[-1] == []


def test_auth_headers_key_vs_session() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/v1/api-keys":
            return httpx.Response(200, json={"items": []})
        return httpx.Response(200, json=post_json())

    client, _ = make(handler, session_token="sess")
    client.get_post("post_1")
    client.list_keys()
    assert seen[0].headers["x-api-key"] == KEY and "authorization" not in seen[0].headers
    assert seen[1].headers["authorization"] == "Bearer sess" and "x-api-key" not in seen[1].headers


def test_key_management_without_session_is_a_clear_error() -> None:
    client, _ = make(lambda r: httpx.Response(200, json={"items": []}))
    with pytest.raises(ConfigError) as info:
        client.list_keys()
    assert info.value.code == "session_required" and "socialpub login" in info.value.message


def test_secrets_never_in_repr() -> None:
    client, _ = make(lambda r: httpx.Response(200), session_token="sess-token-xyz")
    assert KEY not in repr(client) and "sess-token-xyz" not in repr(client)


def test_network_error_is_an_api_error_with_status_0() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    client, _ = make(handler)
    with pytest.raises(NetworkError) as info:
        client.get_workspace()
    assert isinstance(info.value, ApiError) and info.value.status == 0 and info.value.code == "network_error"


def test_invalid_response_is_reported() -> None:
    client, _ = make(lambda r: httpx.Response(200, json={"id": 1}))
    with pytest.raises(ApiError) as info:
        client.get_post("x")
    assert info.value.code == "invalid_response"


def test_cancel_and_camel_case_bodies() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "DELETE":
            return httpx.Response(204)
        return httpx.Response(202, json=post_json(status="scheduled"))

    client, _ = make(handler)
    client.create_post(
        {
            "targets": ["facebook", {"platform": "linkedin", "channelId": "acc_9"}],
            "content": "hi",
            "scheduledAt": "2030-01-01T09:00:00Z",
            "idempotencyKey": "k1",
            "options": {"tiktok": {"postMode": "MEDIA_UPLOAD"}},
        }
    )
    body = json.loads(seen[0].content)
    assert body == {
        "targets": ["facebook", {"platform": "linkedin", "channelId": "acc_9"}],
        "content": "hi",
        "scheduledAt": "2030-01-01T09:00:00Z",
        "idempotencyKey": "k1",
        "options": {"tiktok": {"postMode": "MEDIA_UPLOAD"}},
    }
    assert client.cancel_post("post 1") is None
    assert seen[1].url.raw_path == b"/v1/posts/post%201"


def test_upload_file_streams_base64_json(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import base64

    data = bytes(range(256)) * 3000 + b"x"  # not a multiple of the chunk size nor of 3
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    got: dict[str, Any] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        raw = request.read()
        got["len"] = int(request.headers["content-length"])
        got["body"] = json.loads(raw)
        return httpx.Response(
            201, json={"type": "image", "url": "https://m/a.jpg", "key": "a.jpg", "bytes": 3}
        )

    client, _ = make(handler)
    progress: list[int] = []
    media = client.upload_media_file(path, progress.append)
    assert media.url == "https://m/a.jpg"
    assert base64.b64decode(got["body"]["base64"]) == data
    assert got["len"] == len(json.dumps(got["body"], separators=(",", ":")))
    assert progress[-1] == len(data) and progress == sorted(progress)


def test_wait_post_polls_at_interval_until_final() -> None:
    states = iter(["processing", "processing", "partial"])

    def handler(request: httpx.Request) -> httpx.Response:
        s = next(states)
        tgts = [
            target("facebook", "succeeded"),
            target(
                "tiktok",
                "failed" if s == "partial" else "publishing",
                "retriable" if s == "partial" else None,
            ),
        ]
        return httpx.Response(200, json=post_json(status=s, targets=tgts))

    client, slept = make(handler, poll_interval=10.0)
    updates: list[str] = []
    final = client.wait_post("post_1", on_update=lambda p: updates.append(p.status))
    assert final.status == "partial"
    assert slept == [10.0, 10.0]
    assert updates == ["processing", "partial"]  # unchanged states are not reported twice


def test_wait_post_times_out() -> None:
    client, _ = make(lambda r: httpx.Response(200, json=post_json()), poll_interval=0.01)
    client._sleep = lambda s: None  # type: ignore[assignment]
    with pytest.raises(WaitTimeout) as info:
        client.wait_post("post_1", timeout=0.05)
    assert info.value.post is not None and info.value.post.status == "processing"


def test_retry_post_only_retriable_failures() -> None:
    created: list[dict[str, Any]] = []
    original = post_json(
        "post_orig",
        "partial",
        [
            target("facebook", "succeeded"),
            target("linkedin", "failed", "permanent"),
            target("tiktok", "failed", "retriable", account_id="acc_tt"),
            target("youtube", "failed", "retriable", account_id=None),
        ],
    )

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=original)
        created.append(json.loads(request.content))
        return httpx.Response(202, json=post_json("post_new"))

    client, _ = make(handler)
    new, orig = client.retry_post("post_orig")
    assert new is not None and new.id == "post_new" and orig.id == "post_orig"
    assert created == [
        {
            "targets": [{"platform": "tiktok", "channelId": "acc_tt"}, "youtube"],
            "content": "hello",
            "mediaUrls": ["https://m/x.jpg"],
            "idempotencyKey": "retry-of:post_orig",
        }
    ]


def test_retry_post_nothing_retriable_creates_nothing() -> None:
    methods: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        methods.append(request.method)
        return httpx.Response(200, json=post_json("p", "failed", [target("linkedin", "failed", "permanent")]))

    client, _ = make(handler)
    assert client.retry_post("p")[0] is None
    assert methods == ["GET"]


def test_async_client_same_behaviour() -> None:
    calls = {"n": 0}

    async def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx.Response(
                429, headers={"Retry-After": "2"}, json={"error": "rate_limit_exceeded", "message": "x"}
            )
        cursor = request.url.params.get("cursor")
        return httpx.Response(
            200, json={"items": [post_json(f"p{cursor or 0}")], "nextCursor": None if cursor else "1"}
        )

    slept: list[float] = []

    async def fake_sleep(s: float) -> None:
        slept.append(s)

    async def main() -> list[str]:
        async with AsyncClient(
            "http://api.test", api_key=KEY, transport=httpx.MockTransport(handler), sleep=fake_sleep
        ) as client:
            return [p.id async for p in client.iter_posts()]

    assert asyncio.run(main()) == ["p0", "p1"]
    assert slept == [2.0]


def test_async_error_mapping() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(409, json={"error": "post_not_cancellable", "message": "already sent"})

    async def main() -> None:
        async with AsyncClient(
            "http://api.test", api_key=KEY, transport=httpx.MockTransport(handler)
        ) as client:
            await client.cancel_post("p")

    with pytest.raises(ApiError) as info:
        asyncio.run(main())
    assert info.value.status == 409 and info.value.code == "post_not_cancellable"


def test_expired_session_refreshed_once() -> None:
    tokens = iter(["fresh"])
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization", ""))
        if request.headers.get("authorization") == "Bearer stale":
            return httpx.Response(401, json={"error": "invalid_session", "message": "expired"})
        return httpx.Response(200, json={"items": []})

    client, _ = make(handler, api_key=None, session_token="stale", token_refresh=lambda: next(tokens))
    assert client.list_keys() == []
    assert seen == ["Bearer stale", "Bearer fresh"]


async def test_ready_runs_on_ready_once_and_never_after_close() -> None:
    calls: list[str] = []
    client = AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200)),
        api_key=KEY,
        on_ready=lambda: calls.append("ready"),
    )
    client.ready()
    client.ready()
    assert calls == ["ready"]
    late = AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200)),
        api_key=KEY,
        on_ready=lambda: calls.append("late"),
    )
    await late.aclose()
    late.ready()  # the app closed before its first screen was drawn: nothing starts
    assert calls == ["ready"]
    await client.aclose()
    AsyncClient(api_key=KEY).ready()  # against a server: nothing to start
