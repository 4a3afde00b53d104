"""Issue 30 item 0: a media key is a capability. The media host serves `/media/{key}` without credentials (networks
pull from it), so the key is the only secret: before this migration it was `med_<ULID>.<ext>`, and ULIDs made in one
millisecond by one process are consecutive (the next is the previous + 1), so a tenant uploading continuously could
read another tenant's files as its own key + 1. Keys made from now on are `med_<ULID>_<26 base32 characters: 128
bits from secrets>.<ext>` (backend/services/media.py `new_key`); this migration gives every file stored before it
such a key:

1. each stored file gets a second name, its new key (local storage: a hard link in the file's new shard; S3: a
   server-side copy of the object); a file already gone (deleted, expired) is simply re-keyed;
2. its row takes the new key, and every reference the store keeps to the old one is rewritten to the new one (in
   the same transaction): posts' `media_urls` and resolved `media`, TikTok publications' `media_urls`,
   generations' `media_key` and `source_urls`, the workspace's `logo_url` and `brand`, events' bodies and jobs'
   payloads. A scheduled post with such a file goes out with the new URL; the old URL answers 404 at once.
3. the old names are not removed here (were the transaction to fail, the rows would still name them): with no row
   left they are orphans, which the retention job's orphan sweep deletes (they are older than its grace period).
   In the direct-bucket serving mode (`SOCIALPUB_S3_PUBLIC_URL`), the bucket serves the old names until then.

Idempotent: a key that already has its random part is left alone; a run interrupted before its commit leaves only
new names without rows (orphans, swept). The key format, the local layout and the S3 client are frozen here."""

import base64
import contextlib
import hashlib
import json
import os
import re
import secrets
from typing import Any

from peewee import CharField, Database, Field, JSONField, Model, TextField
from playhouse.migrate import SchemaMigrator

from backend.config import Settings
from backend.store.db import migration_settings

_LEGACY_KEY = re.compile(r"^(med_[0-9a-z]{26})\.([0-9a-z]{1,10})$")
# a legacy key inside a URL or a JSON text: never part of a new key (the ULID is followed by `_` there)
_LEGACY_IN_TEXT = re.compile(r"med_[0-9a-z]{26}\.[0-9a-z]{1,10}(?![0-9a-z])")
BATCH = 500


def _new_key(stem: str, ext: str) -> str:
    return f"{stem}_{base64.b32encode(secrets.token_bytes(16)).decode().rstrip('=').lower()}.{ext}"


def _local_path(root: str, key: str) -> str:
    return os.path.join(root, hashlib.sha1(key.encode()).hexdigest()[:2], key)


class _Local:
    def __init__(self, root: str) -> None:
        self.root = root

    def copy(self, old: str, new: str) -> None:
        source = _local_path(self.root, old)
        if not os.path.exists(source):
            return
        target = _local_path(self.root, new)
        with contextlib.suppress(FileExistsError):
            os.mkdir(os.path.dirname(target), 0o700)
        with contextlib.suppress(FileExistsError):
            os.link(source, target)


class _S3:
    def __init__(self, settings: Settings) -> None:
        import boto3
        from botocore.config import Config

        self.bucket = settings.s3_bucket
        self.client = boto3.client(
            "s3",
            endpoint_url=settings.s3_endpoint_url,
            region_name=settings.s3_region,
            aws_access_key_id=settings.s3_access_key_id,
            aws_secret_access_key=settings.s3_secret_access_key,
            config=Config(retries={"max_attempts": 3, "mode": "standard"}, s3={"addressing_style": "path"}),
        )

    def copy(self, old: str, new: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self.client.copy_object(
                Bucket=self.bucket, Key=new, CopySource={"Bucket": self.bucket, "Key": old}
            )
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") not in ("NoSuchKey", "404", "NotFound"):
                raise


def _storage(settings: Settings) -> _Local | _S3:
    return _S3(settings) if settings.storage == "s3" else _Local(str(settings.data_dir / "media"))


def _model(db: Database, table: str, columns: dict[str, Field]) -> type[Any]:
    # a model class made at run time for the columns given: what a type checker can say of its fields is Any
    attrs: dict[str, object] = {
        "id": CharField(primary_key=True),
        "Meta": type("Meta", (), {"table_name": table, "database": db}),
    }
    attrs.update(columns)
    return type(f"M_{table}", (Model,), attrs)


# (table, {column: kind}) whose values may name a media key: kind "text" (a plain string) or "json"
_REFERENCES = (
    ("post", {"media_urls": "json", "media": "json"}),
    ("tiktok_publish", {"media_urls": "json"}),
    ("generation", {"media_key": "text", "source_urls": "json"}),
    ("workspace", {"logo_url": "text", "brand": "json"}),
    ("event", {"data": "json"}),
    ("job", {"payload": "json"}),
)


def _rewrite_references(db: Database, renamed: dict[str, str]) -> None:
    def sub(text: str) -> str:
        return _LEGACY_IN_TEXT.sub(lambda m: renamed.get(m.group(0), m.group(0)), text)

    present = set(db.get_tables())
    for table, columns in _REFERENCES:
        if table not in present:
            continue
        existing = {c.name for c in db.get_columns(table)}
        kinds = {name: kind for name, kind in columns.items() if name in existing}
        if not kinds:
            continue
        fields: dict[str, Field] = {
            name: (JSONField(null=True) if kind == "json" else TextField(null=True))
            for name, kind in kinds.items()
        }
        model = _model(db, table, fields)
        last = ""
        while True:
            rows = list(model.select().where(model.id > last).order_by(model.id).limit(BATCH))
            if not rows:
                break
            last = rows[-1].id
            for row in rows:
                changes: dict[Field, object] = {}
                for name, kind in kinds.items():
                    value = getattr(row, name)
                    if value is None:
                        continue
                    text = value if kind == "text" else json.dumps(value)
                    if "med_" not in text:
                        continue
                    new = sub(text)
                    if new != text:
                        changes[getattr(model, name)] = new if kind == "text" else json.loads(new)
                if changes:
                    model.update(changes).where(model.id == row.id).execute()


def up(migrator: SchemaMigrator, db: Database) -> None:
    media = _model(db, "media", {"key": CharField()})
    legacy = [(row.id, row.key) for row in media.select(media.id, media.key) if _LEGACY_KEY.match(row.key)]
    if not legacy:
        return
    storage = _storage(migration_settings())
    renamed: dict[str, str] = {}
    for media_id, key in legacy:
        match = _LEGACY_KEY.match(key)
        if match is None:  # the keys listed are the ones it matched
            continue
        stem, ext = match.groups()
        new = _new_key(stem, ext)
        storage.copy(key, new)
        media.update({media.key: new}).where(media.id == media_id).execute()
        renamed[key] = new
    _rewrite_references(db, renamed)


def down(migrator: SchemaMigrator, db: Database) -> None:
    """Keys stay capabilities: nothing to undo (an older version serves the new keys as they are)."""
