"""The generation methods of the client against httpx.MockTransport: the dryRun quote, waiting (sync and async)
at the polling interval, paging, and a server that does not know dryRun."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from socialpub_tui.client import ApiError, AsyncClient, Client
from socialpub_tui.client.errors import WaitTimeout


def generation(status: str = "pending", gid: str = "gen_1", **extra: Any) -> dict[str, Any]:
    return {
        "id": gid,
        "type": "video",
        "status": status,
        "prompt": "beans",
        "aspectRatio": "9:16",
        "durationSec": 5,
        "sourceUrls": [],
        "mediaUrl": "https://m/x.mp4" if status == "completed" else None,
        "mimeType": "video/mp4" if status == "completed" else None,
        "error": "Nope. Your 15 credits were refunded." if status == "failed" else None,
        "creditsCost": 15,
        "createdAt": "2026-11-24T00:00:00.000Z",
        "completedAt": None,
        **extra,
    }


def test_create_and_quote() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.params.get("dryRun") == "true":
            return httpx.Response(
                200,
                json={
                    "dryRun": True,
                    "type": "video",
                    "durationSec": 10,
                    "creditsCost": 30,
                    "balance": 20,
                    "balanceAfter": None,
                    "enough": False,
                },
            )
        return httpx.Response(202, json=generation())

    client = Client("http://api.test", api_key="k", transport=httpx.MockTransport(handler))
    quote = client.create_generation({"type": "video", "prompt": "beans", "durationSec": 10}, dry_run=True)
    assert (quote.credits_cost, quote.enough, quote.balance_after) == (30, False, None)
    created = client.create_generation({"type": "video", "prompt": "beans"})
    assert created.status == "pending" and created.credits_cost == 15
    assert json.loads(seen[0].content) == {"type": "video", "prompt": "beans", "durationSec": 10}
    assert "dryRun" not in seen[1].url.params


def test_a_server_without_dry_run_is_reported() -> None:
    client = Client(
        "http://api.test",
        api_key="k",
        transport=httpx.MockTransport(lambda r: httpx.Response(202, json=generation())),
    )
    with pytest.raises(ApiError) as err:
        client.create_generation({"type": "image", "prompt": "a cup"}, dry_run=True)
    assert err.value.code == "invalid_response"


def _polling(states: list[str]):  # type: ignore[no-untyped-def]
    reads = iter(states)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=generation(next(reads)))

    return handler


def test_wait_generation_polls_until_final() -> None:
    slept: list[float] = []
    client = Client(
        "http://api.test",
        api_key="k",
        sleep=slept.append,
        transport=httpx.MockTransport(_polling(["pending", "processing", "processing", "completed"])),
    )
    updates: list[str] = []
    final = client.wait_generation("gen_1", on_update=lambda g: updates.append(g.status))
    assert final.status == "completed" and final.media_url == "https://m/x.mp4"
    assert updates == ["pending", "processing", "completed"] and slept == [10.0, 10.0, 10.0]


def test_wait_generation_times_out() -> None:
    client = Client(
        "http://api.test",
        api_key="k",
        sleep=lambda s: None,
        transport=httpx.MockTransport(_polling(["processing"] * 100)),
    )
    with pytest.raises(WaitTimeout) as err:
        client.wait_generation("gen_1", timeout=0.0)
    assert err.value.post.status == "processing"


def test_async_wait_and_iterate() -> None:
    pages = {
        None: ([generation("completed", "gen_3"), generation("failed", "gen_2")], "c1"),
        "c1": ([generation("pending", "gen_1")], None),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/generations":
            items, cursor = pages[request.url.params.get("cursor")]
            return httpx.Response(
                200,
                json={
                    "items": items,
                    "nextCursor": cursor,
                    "credits": {
                        "balance": 5,
                        "cost": {"IMAGE": 2, "VIDEO": 15},
                        "clip": {"5": 15, "10": 30, "15": 45},
                    },
                },
            )
        return httpx.Response(200, json=generation("failed"))

    async def main() -> tuple[list[str], str]:
        async def no_sleep(_: float) -> None:
            return None

        async with AsyncClient(
            "http://api.test", api_key="k", transport=httpx.MockTransport(handler), sleep=no_sleep
        ) as client:
            ids = [g.id async for g in client.iter_generations()]
            final = await client.wait_generation("gen_1")
            return ids, final.status

    assert asyncio.run(main()) == (["gen_3", "gen_2", "gen_1"], "failed")
