"""Storage backends: the local directory and S3 (moto's server mode on 127.0.0.1)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.config import Settings
from backend.errors import ApiError
from backend.media.storage import LocalStorage, S3Storage, Storage, media_base_url, valid_key


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server._server.server_address[:2]  # noqa: SLF001  (the bound port)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def s3_settings(tmp_path: Path, endpoint: str, bucket: str = "media") -> Settings:
    return Settings(
        data_dir=tmp_path,
        storage="s3",
        s3_endpoint_url=endpoint,
        s3_bucket=bucket,
        s3_access_key_id="testing",
        s3_secret_access_key="testing",
        s3_region="us-east-1",
    )


@pytest.fixture
def s3(tmp_path: Path, moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> S3Storage:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    storage = S3Storage(s3_settings(tmp_path, moto_endpoint, bucket=f"b-{tmp_path.name[-20:].lower()}"))
    storage.client.create_bucket(Bucket=storage.bucket)
    return storage


@pytest.fixture
def local(tmp_path: Path) -> LocalStorage:
    return LocalStorage(tmp_path / "media")


@pytest.fixture(params=["local", "s3"])
def storage(request: pytest.FixtureRequest) -> Storage:
    return request.getfixturevalue(request.param)


def _read(storage: Storage, key: str, start: int, end: int) -> bytes:
    return b"".join(storage.open_range(key, start, end))


def test_put_read_ranges_delete(storage: Storage, tmp_path: Path) -> None:
    data = os.urandom(700_000)
    stored = storage.put_bytes("med_a.mp4", data, "video/mp4")
    assert stored.size == len(data) and len(stored.sha256) == 64
    assert storage.size("med_a.mp4") == len(data)
    assert _read(storage, "med_a.mp4", 0, len(data) - 1) == data
    assert _read(storage, "med_a.mp4", 1000, 1999) == data[1000:2000]
    src = tmp_path / "upload.bin"
    src.write_bytes(data[:300_000])
    storage.put_file("med_b.webm", src, "video/webm", move=True)
    assert storage.size("med_b.webm") == 300_000
    assert {k.key for k in storage.iter_keys()} >= {"med_a.mp4", "med_b.webm"}
    storage.delete("med_a.mp4")
    assert storage.size("med_a.mp4") is None
    with pytest.raises(FileNotFoundError):
        _read(storage, "med_a.mp4", 0, 10)
    storage.delete("med_a.mp4")  # deleting twice is fine


def test_big_file_goes_up_in_parts(s3: S3Storage, tmp_path: Path) -> None:
    src = tmp_path / "big.mp4"
    with open(src, "wb") as f:
        for _ in range(20):
            f.write(os.urandom(1024 * 1024))
    stored = s3.put_file("med_big.mp4", src, "video/mp4")
    assert stored.size == 20 * 1024 * 1024
    head = s3.client.head_object(Bucket=s3.bucket, Key="med_big.mp4")
    assert head["ContentType"] == "video/mp4"
    assert "-" in head["ETag"]  # a multipart upload's ETag


def test_local_write_is_atomic(local: LocalStorage, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(src: object, dst: object) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(ApiError) as err:
        local.put_bytes("med_x.jpg", b"\xff\xd8\xff" * 1000, "image/jpeg")
    assert err.value.status == 502 and err.value.code == "storage_error"
    monkeypatch.undo()
    assert local.size("med_x.jpg") is None
    assert list(local.tmp.iterdir()) == []


def test_s3_failure_is_storage_error(tmp_path: Path, moto_endpoint: str) -> None:
    storage = S3Storage(s3_settings(tmp_path, moto_endpoint, bucket="no-such-bucket"))
    with pytest.raises(ApiError) as err:
        storage.put_bytes("med_y.jpg", b"x", "image/jpeg")
    assert err.value.status == 502 and err.value.code == "storage_error"


def test_unreachable_s3_is_storage_error(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    storage = S3Storage(s3_settings(tmp_path, f"http://127.0.0.1:{port}"))
    with pytest.raises(ApiError) as err:
        storage.put_bytes("med_z.jpg", b"x", "image/jpeg")
    assert err.value.code == "storage_error"


@pytest.mark.parametrize("key", ["../etc/passwd", ".tmp", "a/b", "", "..", "x" * 300, ".hidden"])
def test_invalid_keys(key: str) -> None:
    assert not valid_key(key)


def test_media_base_url(tmp_path: Path) -> None:
    assert (
        media_base_url(Settings(data_dir=tmp_path, base_url="https://api.example.com"))
        == "https://api.example.com/media/"
    )
    assert (
        media_base_url(Settings(data_dir=tmp_path, media_url="https://cdn.example.com/m"))
        == "https://cdn.example.com/m/"
    )
    assert (
        media_base_url(
            Settings(data_dir=tmp_path, storage="s3", s3_bucket="b", s3_public_url="https://b.s3.example.com")
        )
        == "https://b.s3.example.com/"
    )
