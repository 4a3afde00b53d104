"""The client's dedicated TikTok calls against httpx.MockTransport: request shape, status polling, timeout."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from socialpub_tui.client import AsyncClient, Client
from socialpub_tui.client.errors import WaitTimeout

KEY = "spk_live_v1-SECRETSECRETSECRET"


def test_publish_photo_sends_the_wire_body() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "success": True,
                "publishId": "p_inbox_url~v2.1",
                "title": "T",
                "description": "",
                "postMode": "MEDIA_UPLOAD",
                "channelId": "acc_1",
            },
        )

    client = Client("http://api.test", api_key=KEY, transport=httpx.MockTransport(handler))
    out = client.publish_tiktok_photo({"imageUrls": ["http://m/a.jpg"], "title": "T", "channelId": "acc_1"})
    assert out.publish_id == "p_inbox_url~v2.1" and out.post_mode == "MEDIA_UPLOAD"
    req = seen[0]
    assert req.method == "POST" and req.url.path == "/v1/publish/tiktok/photo"
    assert json.loads(req.content) == {"imageUrls": ["http://m/a.jpg"], "title": "T", "channelId": "acc_1"}
    with pytest.raises(ValidationError):  # the shared schema refuses a too-long title before sending
        client.publish_tiktok_photo({"imageUrls": ["http://m/a.jpg"], "title": "t" * 91})
    assert len(seen) == 1


def test_wait_tiktok_polls_until_terminal_and_reports_changes() -> None:
    states = iter(
        [
            ("PROCESSING_UPLOAD", None),
            ("PROCESSING_DOWNLOAD", 10),
            ("PROCESSING_DOWNLOAD", 10),
            ("FAILED", 20),
        ]
    )
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(f"{request.url.path}?{request.url.query.decode()}")
        status, done = next(states)
        body: dict[str, Any] = {"status": status, "downloadedBytes": done}
        if status == "FAILED":
            body["failReason"] = "video_pull_failed"
        return httpx.Response(200, json=body)

    slept: list[float] = []
    client = Client(
        "http://api.test",
        api_key=KEY,
        transport=httpx.MockTransport(handler),
        sleep=slept.append,
        poll_interval=10.0,
    )
    updates: list[str] = []
    final = client.wait_tiktok("v_pub~1", "acc_2", on_update=lambda s: updates.append(s.status))
    assert final.status == "FAILED" and final.fail_reason == "video_pull_failed"
    assert slept == [10.0, 10.0, 10.0]
    assert updates == ["PROCESSING_UPLOAD", "PROCESSING_DOWNLOAD", "FAILED"]
    assert paths[0] == "/v1/publish/tiktok/status/v_pub~1?channelId=acc_2"


def test_wait_tiktok_times_out_with_the_last_status() -> None:
    client = Client(
        "http://api.test",
        api_key=KEY,
        sleep=lambda s: None,
        poll_interval=0.01,
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"status": "PROCESSING_DOWNLOAD"})),
    )
    with pytest.raises(WaitTimeout) as info:
        client.wait_tiktok("p~1", timeout=0.05)
    assert info.value.post.status == "PROCESSING_DOWNLOAD"


def test_async_wait_tiktok() -> None:
    states = iter(["PROCESSING_DOWNLOAD", "SEND_TO_USER_INBOX"])

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"status": next(states)})

    async def no_sleep(s: float) -> None:
        return None

    async def main() -> str:
        async with AsyncClient(
            "http://api.test", api_key=KEY, transport=httpx.MockTransport(handler), sleep=no_sleep
        ) as client:
            return (await client.wait_tiktok("p~1")).status

    assert asyncio.run(main()) == "SEND_TO_USER_INBOX"
