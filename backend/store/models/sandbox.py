"""State of the sandbox networks (the emulators of backend/networks/sandbox): their accounts and every
object they hold (TikTok publishes, Instagram containers and media, LinkedIn assets and posts, Facebook
posts, YouTube videos). Asynchronous progress is computed from started_at + processing_s and the clock,
so a restart or a time-machine jump sees the same state."""

from __future__ import annotations

from peewee import BooleanField, CharField, FloatField, IntegerField, JSONField, TextField

from backend.store.fields import UTCDateTimeField
from backend.store.models.base import BaseModel


class SandboxAccount(BaseModel):
    id = CharField(primary_key=True, max_length=40)
    platform = CharField(max_length=20)
    external_id = CharField(max_length=80)
    token_hash = CharField(max_length=64, unique=True)  # sha256 of the access token; never the token
    name = CharField(max_length=200)
    username = CharField(max_length=120)
    display_name = CharField(max_length=200)
    behaviour = CharField(max_length=20, default="ok")
    is_private = BooleanField(default=False)
    privacy_level_options = JSONField(default=list)
    calls = IntegerField(default=0)  # publish-call counter (flaky behaviour)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "sandbox_account"
        indexes = ((("platform", "external_id"), True),)


class SandboxItem(BaseModel):
    id = CharField(primary_key=True, max_length=120)  # the network's own id or URN
    platform = CharField(max_length=20)
    account_id = CharField(max_length=40)
    kind = CharField(max_length=20)  # publish | container | media | post | image | document | video | upload
    mode = CharField(max_length=40, default="")  # e.g. DIRECT_POST / MEDIA_UPLOAD, media_type, REELS
    text = TextField(default="")
    title = TextField(default="")
    media = JSONField(default=list)
    data = JSONField(default=dict)  # request details kept for tests and listings
    outcome = CharField(max_length=60, default="ok")  # ok, or the failure revealed when processing ends
    post_id = CharField(max_length=120, null=True)  # public id once published
    url = TextField(null=True)
    state = CharField(max_length=30, default="")  # explicit states (uploaded, published, cancelled)
    started_at = UTCDateTimeField()
    processing_s = FloatField(default=0.0)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "sandbox_item"
        indexes = ((("platform", "account_id", "kind", "created_at"), False),)
        # and migration 0008: sandbox_item_post_id on (post_id) WHERE post_id IS NOT NULL
