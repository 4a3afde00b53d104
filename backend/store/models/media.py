"""Ingested and generated media files (spec 2.3) and the holds that extend their retention (spec 8)."""

from __future__ import annotations

from peewee import BigIntegerField, CharField, FloatField, ForeignKeyField, IntegerField, TextField

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace


class Media(BaseModel):
    """One stored file. `expires_at` is the effective retention deadline (None: no limit), kept up to
    date by backend.services.media from the base rule and the holds; the media host refuses a file
    whose deadline has passed even before the retention job deleted it."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="media", on_delete="CASCADE", index=True)
    workspace_id: str  # peewee's column for workspace, typed for mypy
    key = CharField(max_length=200, unique=True)
    type = CharField(max_length=10)  # image | video
    mime_type = CharField(max_length=60)
    bytes = BigIntegerField()
    width = IntegerField(null=True)  # an image's; a video's as displayed (migration 0031)
    height = IntegerField(null=True)
    # a video's, as probed at ingestion (migration 0031; null for a file ingested before it)
    duration_ms = IntegerField(null=True)
    frame_rate = FloatField(null=True)
    video_codec = CharField(max_length=30, null=True)
    audio_codec = CharField(max_length=30, null=True)
    sha256 = CharField(max_length=64)  # of the stored file
    source_sha256 = CharField(
        max_length=64, null=True
    )  # of the bytes as sent (an image is stored re-encoded)
    origin = CharField(max_length=12)  # upload | url | generated
    source_url = TextField(null=True)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField(null=True, index=True)


class MediaHold(BaseModel):
    """A reference keeping a file: `ref` names the holder (e.g. 'post:pst_…', 'generation:gen_…');
    `until` None holds without limit (until released), else until that instant."""

    media = ForeignKeyField(Media, backref="holds", on_delete="CASCADE")
    media_id: str  # peewee's column for media, typed for mypy
    ref = CharField(max_length=120, index=True)
    until = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()

    class Meta:
        indexes = ((("media", "ref"), True),)
