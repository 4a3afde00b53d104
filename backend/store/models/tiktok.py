"""Dedicated TikTok publications (spec 2.6, 3.5, 4.6): one row per photo/video init, tracked to a terminal status."""

from __future__ import annotations

from peewee import CharField, ForeignKeyField, IntegerField, JSONField, TextField

from backend.store.fields import EncryptedTextField, UTCDateTimeField
from backend.store.models.accounts import Account
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace

# `status` holds TikTok's own status names (spec 3.5), plus INITIATING while the init call is under way: the values
# of backend.schemas.statuses.TikTokStatus (the store imports no wire-format module: it stores the enum's strings).


class TikTokPublish(BaseModel):
    """One dedicated publication. The row is committed (INITIATING) before the network is called, then
    carries TikTok's `publish_id` (unique) and the last status read. `account` is the account that
    created it: only its token may read the status. `fail_reason` is TikTok's code (spec 4.6) or ours
    (`tracking_timeout`, `upload_failed`); `fail_message` says it in plain words. Init refusals are kept too (FAILED,
    no publish_id) so the workspace can see what was attempted."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="tiktok_publishes", on_delete="CASCADE")
    workspace_id: str  # peewee's column for workspace, typed for mypy
    account = ForeignKeyField(Account, null=True, on_delete="SET NULL", index=True)
    account_id: str | None  # peewee's column for account, typed for mypy
    kind = CharField(max_length=8)  # photo | video
    post_mode = CharField(max_length=16)  # MEDIA_UPLOAD | DIRECT_POST
    publish_id = CharField(max_length=100, null=True, unique=True)
    status = CharField(max_length=24, default="INITIATING")
    title = TextField(default="")
    description = TextField(default="")
    media_urls = JSONField(default=list)
    post_info = JSONField(default=dict)  # what was sent as post_info (privacy level, interactions)
    fail_reason = CharField(max_length=80, null=True)
    fail_message = TextField(null=True)
    public_post_ids = JSONField(default=list)
    downloaded_bytes = IntegerField(null=True)
    # a FILE_UPLOAD video: TikTok's upload URL (valid 1 h; it carries an upload token, so encrypted at rest) while
    # the `tiktok.upload` job sends the bytes; cleared once the last chunk is in
    upload_url = EncryptedTextField(null=True)
    checks = IntegerField(default=0)
    checked_at = UTCDateTimeField(null=True)
    track_deadline = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()
    completed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "tiktok_publish"
        indexes = ((("workspace", "created_at"), False), (("status",), False))
