"""Each endpoint is declared once (socialpub_tui.client.endpoints) and offered by both clients: a plain method on
`Client`, a coroutine method on `AsyncClient`, an iterator / async iterator for the `iter_*` listings."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import httpx
import pytest

from socialpub_tui.client import AsyncClient, Client
from socialpub_tui.client._core import endpoint, listing
from socialpub_tui.client.endpoints import Endpoints
from socialpub_tui.client.errors import ApiError, NetworkError, WaitTimeout
from tests.client.test_generations_client import generation

KEY = "spk_live_v1-SECRETSECRETSECRET"
DECLARED = {name: kind for name, kind in vars(Endpoints).items() if isinstance(kind, (endpoint, listing))}


def test_both_clients_offer_every_declared_endpoint_with_one_signature() -> None:
    assert len(DECLARED) > 50
    sync = Client("http://api.test", api_key=KEY)
    aio = AsyncClient("http://api.test", api_key=KEY)
    for name, kind in DECLARED.items():
        plain, coroutine = getattr(sync, name), getattr(aio, name)
        assert inspect.signature(plain) == inspect.signature(coroutine), name
        assert "self" not in inspect.signature(plain).parameters, name
        if isinstance(kind, endpoint):
            assert not inspect.iscoroutinefunction(plain) and inspect.iscoroutinefunction(coroutine), name
        assert plain.__doc__ == coroutine.__doc__, name
    # what each client had alone before: both have both now
    assert {"download_media", "fetch_media", "retry_post", "wait_tiktok", "iter_media"} <= set(DECLARED)
    sync.close()
    asyncio.run(aio.aclose())


def _media(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/media/gone.jpg":
        return httpx.Response(404)
    return httpx.Response(200, content=b"\xff\xd8jpeg", headers={"content-type": "image/jpeg"})


def test_the_sync_client_fetches_and_the_async_one_downloads(tmp_path: Path) -> None:
    sync = Client("http://api.test", api_key=KEY, transport=httpx.MockTransport(_media))
    assert sync.fetch_media("https://media.test/media/a.jpg") == (b"\xff\xd8jpeg", "image/jpeg")
    with pytest.raises(NetworkError) as err:
        sync.fetch_media("https://media.test/media/a.jpg", max_bytes=3)
    assert err.value.code == "media_too_large"

    async def main() -> int:
        async with AsyncClient("http://api.test", api_key=KEY, transport=httpx.MockTransport(_media)) as aio:
            with pytest.raises(NetworkError) as gone:
                await aio.download_media("https://media.test/media/gone.jpg", tmp_path / "gone.jpg")
            assert gone.value.code == "media_unavailable" and not (tmp_path / "gone.jpg").exists()
            return await aio.download_media("https://media.test/media/a.jpg", tmp_path / "a.jpg")

    assert asyncio.run(main()) == 6 and (tmp_path / "a.jpg").read_bytes() == b"\xff\xd8jpeg"


def test_a_download_cut_off_leaves_no_partial_file(tmp_path: Path) -> None:
    class Cut(httpx.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield b"part"
            raise httpx.ReadError("connection reset")

    client = Client(
        "http://api.test",
        api_key=KEY,
        transport=httpx.MockTransport(lambda r: httpx.Response(200, stream=Cut())),
    )
    with pytest.raises(NetworkError) as err:
        client.download_media("https://media.test/media/a.jpg", tmp_path / "a.jpg")
    assert "connection reset" in err.value.message and not (tmp_path / "a.jpg").exists()


def test_one_poll_loop_for_both_clients() -> None:
    """wait_generation (the async client had it; the sync one too): polls, reports changes once, times out."""
    states = iter(["pending", "processing", "processing", "completed"])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=generation(next(states)))

    slept: list[float] = []
    seen: list[str] = []
    client = Client(
        "http://api.test",
        api_key=KEY,
        transport=httpx.MockTransport(handler),
        poll_interval=3.0,
        sleep=slept.append,
    )
    done = client.wait_generation("gen_1", on_update=lambda g: seen.append(g.status))
    assert done.status == "completed" and slept == [3.0, 3.0, 3.0]
    assert seen == ["pending", "processing", "completed"]

    async def never(_: float) -> None:
        return None

    async def main() -> None:
        async with AsyncClient(
            "http://api.test",
            api_key=KEY,
            transport=httpx.MockTransport(lambda r: httpx.Response(200, json=generation("pending"))),
            sleep=never,
        ) as aio:
            await aio.wait_generation("gen_1", timeout=0.0)

    with pytest.raises(WaitTimeout) as info:
        asyncio.run(main())
    assert "generation gen_1 is still pending" in info.value.message


def test_an_error_raised_by_a_call_reaches_the_endpoint_that_made_it() -> None:
    """`networks()` catches the 404 of a server without the extension (thrown into the endpoint at its call)."""
    client = Client(
        "http://api.test",
        api_key=KEY,
        transport=httpx.MockTransport(
            lambda r: httpx.Response(404, json={"error": "not_found", "message": "x"})
        ),
    )
    assert list(client.networks()) == []
    with pytest.raises(ApiError) as err:
        client.get_post("p")
    assert err.value.status == 404


def test_an_endpoint_taken_from_the_class_is_called_with_its_client() -> None:
    """As a function accessed on a class: `Client.get_post(client, id)` (tests wrap methods this way)."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(200, json={"items": [], "nextCursor": None})

    client = Client("http://api.test", api_key=KEY, transport=httpx.MockTransport(handler))
    assert Client.list_posts(client).items == []
    assert list(Client.iter_posts(client)) == []
    assert seen == ["/v1/posts", "/v1/posts"]
