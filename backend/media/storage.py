"""Storage backends for media files: a local directory (default) and S3-compatible object storage.

Both are atomic: a file becomes visible under its key only once it is complete (local: written to a
temporary file, fsynced, then renamed; S3: an object exists only after its upload completed), so a
half-written file is never served. Every failure is raised as 502 `storage_error`.

Serving: the media host (`GET /media/{key}`, backend/api/routers/media_host.py) serves both, with
ranges and ETags, reading through `open_range`. See docs/media.md for the S3 serving modes.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from backend.config import Settings
from backend.datadir import FILE_MODE, open_private, private_dir
from backend.errors import ApiError

log = logging.getLogger("socialpub.media.storage")

KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
CHUNK = 256 * 1024


def storage_error(message: str) -> ApiError:
    return ApiError(502, "storage_error", f"media storage failed: {message}; retry")


def valid_key(key: str) -> bool:
    return bool(KEY_RE.match(key)) and ".." not in key


@dataclass(frozen=True)
class StoredObject:
    key: str
    size: int
    sha256: str


@dataclass(frozen=True)
class KeyInfo:
    key: str
    size: int
    modified: datetime


class Storage(Protocol):
    """What the service needs from a media store."""

    name: str

    def put_bytes(self, key: str, data: bytes, content_type: str) -> StoredObject: ...

    def put_file(self, key: str, path: Path, content_type: str, *, move: bool = False) -> StoredObject: ...

    def open_range(self, key: str, start: int, end: int) -> Iterator[bytes]:
        """Bytes start..end inclusive, in chunks. Raises FileNotFoundError when the key is gone."""
        ...

    def size(self, key: str) -> int | None: ...

    def delete(self, key: str) -> None: ...

    def iter_keys(self) -> Iterator[KeyInfo]: ...

    def cleanup_temp(self, older_than_s: float) -> int: ...


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1024 * 1024):
            h.update(chunk)
    return h.hexdigest()


class LocalStorage:
    """Files under `<root>/<2-char shard>/<key>`; temporaries under `<root>/.tmp`. Owner-only, as the rest of the
    data dir: directories 0700, files 0600 (a file moved in from elsewhere, a generation's output, is made so)."""

    name = "local"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / ".tmp"

    def _path(self, key: str) -> Path:
        if not valid_key(key):
            raise FileNotFoundError(key)
        shard = hashlib.sha1(key.encode()).hexdigest()[:2]
        return self.root / shard / key

    def _tmp_path(self) -> Path:
        private_dir(self.root)
        private_dir(self.tmp)
        return self.tmp / f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}.part"

    def _publish(self, tmp: Path, key: str) -> None:
        dest = self._path(key)
        private_dir(dest.parent)
        os.chmod(tmp, FILE_MODE)  # a file moved in (a generation's output) keeps the mode it was made with
        os.replace(tmp, dest)

    def put_bytes(self, key: str, data: bytes, content_type: str) -> StoredObject:
        tmp = self._tmp_path() if valid_key(key) else None
        if tmp is None:
            raise storage_error(f"invalid key {key!r}")
        try:
            with open_private(tmp) as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            self._publish(tmp, key)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise storage_error(str(exc)) from exc
        return StoredObject(key, len(data), hashlib.sha256(data).hexdigest())

    def put_file(self, key: str, path: Path, content_type: str, *, move: bool = False) -> StoredObject:
        if not valid_key(key):
            raise storage_error(f"invalid key {key!r}")
        tmp = self._tmp_path()
        try:
            digest = _sha256_file(path)
            size = path.stat().st_size
            moved = False
            if move:
                try:
                    os.replace(path, tmp)  # same filesystem: no copy
                    moved = True
                except OSError:
                    moved = False
            if not moved:
                with open(path, "rb") as src, open_private(tmp) as dst:
                    while chunk := src.read(1024 * 1024):
                        dst.write(chunk)
                    dst.flush()
                    os.fsync(dst.fileno())
            self._publish(tmp, key)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise storage_error(str(exc)) from exc
        return StoredObject(key, size, digest)

    def open_range(self, key: str, start: int, end: int) -> Iterator[bytes]:
        f = open(self._path(key), "rb")  # noqa: SIM115  (closed by the generator)

        def gen() -> Iterator[bytes]:
            with f:
                f.seek(start)
                remaining = end - start + 1
                while remaining > 0:
                    chunk = f.read(min(CHUNK, remaining))
                    if not chunk:
                        break
                    remaining -= len(chunk)
                    yield chunk

        return gen()

    def size(self, key: str) -> int | None:
        try:
            return self._path(key).stat().st_size
        except (FileNotFoundError, NotADirectoryError):
            return None

    def delete(self, key: str) -> None:
        try:
            self._path(key).unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise storage_error(str(exc)) from exc

    def iter_keys(self) -> Iterator[KeyInfo]:
        if not self.root.exists():
            return
        for shard in self.root.iterdir():
            if not shard.is_dir() or shard.name.startswith("."):
                continue
            for p in shard.iterdir():
                with contextlib.suppress(FileNotFoundError):
                    st = p.stat()
                    yield KeyInfo(p.name, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC))

    def cleanup_temp(self, older_than_s: float) -> int:
        if not self.tmp.exists():
            return 0
        cutoff = time.time() - older_than_s
        removed = 0
        for p in self.tmp.iterdir():
            with contextlib.suppress(FileNotFoundError):
                if p.stat().st_mtime < cutoff:
                    p.unlink()
                    removed += 1
        return removed


class S3Storage:
    """Objects in an S3-compatible bucket (AWS S3, MinIO, Ceph, moto…), uploaded with multipart for big files."""

    name = "s3"

    def __init__(self, settings: Settings) -> None:
        import boto3
        from botocore.config import Config

        if not settings.s3_bucket:
            raise ValueError("SOCIALPUB_STORAGE=s3 needs SOCIALPUB_S3_BUCKET")
        self.bucket = settings.s3_bucket
        self.client = boto3.client(
            "s3",
            endpoint_url=settings.s3_endpoint_url,
            region_name=settings.s3_region,
            aws_access_key_id=settings.s3_access_key_id,
            aws_secret_access_key=settings.s3_secret_access_key,
            config=Config(
                retries={"max_attempts": 3, "mode": "standard"},
                connect_timeout=5,
                read_timeout=60,
                s3={"addressing_style": "path"},
            ),
        )

    def _wrap(self, exc: Exception) -> ApiError:
        log.warning("s3 storage error: %s", exc)
        return storage_error(f"object storage: {type(exc).__name__}")

    def put_bytes(self, key: str, data: bytes, content_type: str) -> StoredObject:
        if not valid_key(key):
            raise storage_error(f"invalid key {key!r}")
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType=content_type)
        except Exception as exc:  # noqa: BLE001
            raise self._wrap(exc) from exc
        return StoredObject(key, len(data), hashlib.sha256(data).hexdigest())

    def put_file(self, key: str, path: Path, content_type: str, *, move: bool = False) -> StoredObject:
        if not valid_key(key):
            raise storage_error(f"invalid key {key!r}")
        from boto3.s3.transfer import TransferConfig

        try:
            digest = _sha256_file(path)
            size = path.stat().st_size
            self.client.upload_file(
                str(path),
                self.bucket,
                key,
                ExtraArgs={"ContentType": content_type},
                Config=TransferConfig(
                    multipart_threshold=16 * 1024 * 1024,
                    multipart_chunksize=8 * 1024 * 1024,
                    max_concurrency=2,
                ),
            )
        except Exception as exc:  # noqa: BLE001
            raise self._wrap(exc) from exc
        if move:
            with contextlib.suppress(OSError):
                path.unlink()
        return StoredObject(key, size, digest)

    def open_range(self, key: str, start: int, end: int) -> Iterator[bytes]:
        from botocore.exceptions import ClientError

        try:
            obj = self.client.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end}")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "InvalidRange"):
                raise FileNotFoundError(key) from exc
            raise self._wrap(exc) from exc
        except Exception as exc:  # noqa: BLE001
            raise self._wrap(exc) from exc
        body = obj["Body"]

        def gen() -> Iterator[bytes]:
            try:
                yield from body.iter_chunks(CHUNK)
            finally:
                body.close()

        return gen()

    def size(self, key: str) -> int | None:
        from botocore.exceptions import ClientError

        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return None
            raise self._wrap(exc) from exc
        return int(head["ContentLength"])

    def delete(self, key: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except Exception as exc:  # noqa: BLE001
            raise self._wrap(exc) from exc

    def iter_keys(self) -> Iterator[KeyInfo]:
        try:
            paginator = self.client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket):
                for item in page.get("Contents", []):
                    yield KeyInfo(item["Key"], int(item["Size"]), item["LastModified"])
        except Exception as exc:  # noqa: BLE001
            raise self._wrap(exc) from exc

    def cleanup_temp(self, older_than_s: float) -> int:
        """Abort multipart uploads left behind by a crash (their parts are never visible as objects)."""
        removed = 0
        try:
            listing = self.client.list_multipart_uploads(Bucket=self.bucket)
            cutoff = time.time() - older_than_s
            for up in listing.get("Uploads", []):
                if up["Initiated"].timestamp() < cutoff:
                    self.client.abort_multipart_upload(
                        Bucket=self.bucket, Key=up["Key"], UploadId=up["UploadId"]
                    )
                    removed += 1
        except Exception as exc:  # noqa: BLE001
            log.warning("s3 cleanup of multipart uploads failed: %s", exc)
        return removed


_cache: dict[tuple[object, ...], Storage] = {}
_cache_lock = threading.Lock()


def get_storage(settings: Settings) -> Storage:
    """The configured backend (one instance per configuration)."""
    if settings.storage == "s3":
        ident: tuple[object, ...] = (
            "s3",
            settings.s3_endpoint_url,
            settings.s3_bucket,
            settings.s3_region,
            settings.s3_access_key_id,
        )
    else:
        ident = ("local", str(settings.data_dir / "media"))
    with _cache_lock:
        found = _cache.get(ident)
        if found is None:
            found = (
                S3Storage(settings) if settings.storage == "s3" else LocalStorage(settings.data_dir / "media")
            )
            _cache[ident] = found
        return found


def media_base_url(settings: Settings) -> str:
    """Where media URLs point: SOCIALPUB_MEDIA_URL, else (S3 with a public URL) the bucket's public
    address, else the media host of this service (`<base_url>/media/`). Always ends with '/'."""
    if settings.media_url:
        return settings.public_media_url
    if settings.storage == "s3" and settings.s3_public_url:
        url = settings.s3_public_url
        return url if url.endswith("/") else url + "/"
    return settings.public_media_url
