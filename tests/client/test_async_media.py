"""The async client's media calls: a file upload streamed from an AsyncClient (an async body, progress as it
goes), and reading a media file back by its URL without credentials."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from socialpub_tui.client.aio import AsyncClient
from socialpub_tui.client.errors import NetworkError


async def test_async_upload_streams_base64_json_with_progress(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = bytes(range(256)) * 3000 + b"x"
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    got: dict[str, Any] = {}

    async def handler(request: httpx.Request) -> httpx.Response:
        raw = await request.aread()
        got["len"] = int(request.headers["content-length"])
        got["body"] = json.loads(raw)
        return httpx.Response(
            201, json={"type": "image", "url": "https://m/a.jpg", "key": "a.jpg", "bytes": 3}
        )

    client = AsyncClient("https://api.test", api_key="k", transport=httpx.MockTransport(handler))
    progress: list[int] = []
    media = await client.upload_media_file(path, progress.append)
    await client.aclose()
    assert media.url == "https://m/a.jpg"
    assert base64.b64decode(got["body"]["base64"]) == data
    assert got["len"] == len(json.dumps(got["body"], separators=(",", ":")))
    assert len(progress) > 1 and progress[-1] == len(data) and progress == sorted(progress)


async def test_fetch_media_reads_the_url_without_credentials() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/media/gone.jpg":
            return httpx.Response(404)
        return httpx.Response(200, content=b"\xff\xd8jpeg", headers={"content-type": "image/jpeg"})

    client = AsyncClient("https://api.test", api_key="sk_secret", transport=httpx.MockTransport(handler))
    data, content_type = await client.fetch_media("https://media.test/media/a.jpg")
    assert (data, content_type) == (b"\xff\xd8jpeg", "image/jpeg")
    assert seen[0].url.host == "media.test" and "x-api-key" not in seen[0].headers
    with pytest.raises(NetworkError) as err:
        await client.fetch_media("https://media.test/media/gone.jpg")
    assert err.value.code == "media_unavailable"
    with pytest.raises(NetworkError) as err:
        await client.fetch_media("https://media.test/media/a.jpg", max_bytes=3)
    assert err.value.code == "media_too_large"
    await client.aclose()
