"""Media on S3-compatible storage (moto's server mode on 127.0.0.1), served through the media host."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.media.storage import get_storage
from backend.services import media as media_service
from tests.conftest import key_headers
from tests.media import corpus
from tests.media.httpserver import LocalServer, Route


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server._server.server_address[:2]  # noqa: SLF001
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3_client(settings, moto_endpoint, monkeypatch):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from backend.api.app import create_app

    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    settings.storage = "s3"
    settings.s3_endpoint_url = moto_endpoint
    settings.s3_bucket = "socialpub-media-" + settings.data_dir.parent.name[-12:].lower().replace("_", "-")
    settings.s3_access_key_id = "testing"
    settings.s3_secret_access_key = "testing"
    settings.allow_private_urls = True
    storage = get_storage(settings)
    storage.client.create_bucket(Bucket=settings.s3_bucket)  # type: ignore[attr-defined]
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client


def _objects(settings) -> set[str]:  # type: ignore[no-untyped-def]
    return {k.key for k in get_storage(settings).iter_keys()}


def test_image_and_video_on_s3_served_with_ranges(s3_client, owner, settings):
    img = s3_client.post(
        "/v1/media",
        json={"base64": base64.b64encode(corpus.jpeg(1500, 1000)).decode()},
        headers=key_headers(owner.api_key),
    )
    assert img.status_code == 201, img.text
    assert (img.json()["width"], img.json()["height"]) == (1080, 720)
    data = corpus.video("mov") * 4
    with LocalServer() as srv:
        srv.routes["/clip.mov"] = Route(body=data, content_type="video/quicktime", send_length=False)
        vid = s3_client.post(
            "/v1/media", json={"url": srv.url("/clip.mov")}, headers=key_headers(owner.api_key)
        )
    assert vid.status_code == 201, vid.text
    assert _objects(settings) == {img.json()["key"], vid.json()["key"]}
    path = vid.json()["url"].removeprefix("http://testserver")
    full = s3_client.get(path)
    assert full.status_code == 200 and full.content == data
    assert full.headers["content-type"] == "video/quicktime" and full.headers["etag"]
    part = s3_client.get(path, headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == data[100:200]
    assert part.headers["content-range"] == f"bytes 100-199/{len(data)}"


def test_retention_deletes_the_object(s3_client, owner, settings):
    with time_machine.travel(clock.now(), tick=True) as traveller:
        r = s3_client.post(
            "/v1/media",
            json={"base64": base64.b64encode(corpus.video("webm")).decode()},
            headers=key_headers(owner.api_key),
        )
        key = r.json()["key"]
        assert key in _objects(settings)
        traveller.shift(timedelta(days=30, seconds=5))
        report = media_service.enforce_retention(settings)
        assert report.deleted == [key]
        assert key not in _objects(settings)
        assert s3_client.get(f"/media/{key}").status_code == 404


def test_s3_down_is_502(s3_client, owner, settings, monkeypatch):
    storage = get_storage(settings)

    def down(**kw):  # type: ignore[no-untyped-def]
        from botocore.exceptions import EndpointConnectionError

        raise EndpointConnectionError(endpoint_url="http://127.0.0.1:1")

    monkeypatch.setattr(storage.client, "put_object", down)  # type: ignore[attr-defined]
    r = s3_client.post(
        "/v1/media",
        json={"base64": base64.b64encode(corpus.jpeg()).decode()},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 502 and r.json()["error"] == "storage_error"
    assert s3_client.get("/v1/media", headers=key_headers(owner.api_key)).json()["items"] == []


def test_migration_0030_gives_an_old_object_a_capability_key(s3_client, owner, settings):
    """An object stored under a key of the versions before 0030 (`med_<ULID>.jpg`) is copied to its new key; the row
    and the media host follow; the old object is an orphan the sweep removes."""
    from backend.store.models import Media
    from tests.store.test_media_capability_keys import rerun_migration

    row = media_service.ingest_bytes(settings, owner.workspace_id, corpus.jpeg(), origin="upload")
    storage = get_storage(settings)
    data = b"".join(storage.open_range(row.key, 0, row.bytes - 1))
    legacy = f"{row.id}.jpg"
    storage.put_bytes(legacy, data, "image/jpeg")
    storage.delete(row.key)
    Media.update(key=legacy).where(Media.id == row.id).execute()
    rerun_migration()
    new = Media.get_by_id(row.id).key
    assert new != legacy and new.startswith(row.id + "_")
    assert _objects(settings) == {legacy, new}
    assert s3_client.get(f"/media/{legacy}").status_code == 404
    assert s3_client.get(f"/media/{new}").content == data
    assert media_service.sweep_orphans(settings, clock.now() + timedelta(days=2)) == [legacy]
    assert _objects(settings) == {new}
