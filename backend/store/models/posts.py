"""Multi-network posts (spec 2.4) and their targets, one per network account reached."""

from __future__ import annotations

from peewee import BooleanField, CharField, ForeignKeyField, IntegerField, JSONField, TextField

from backend.store.fields import UTCDateTimeField
from backend.store.models.accounts import Account
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace

# `Post.status` holds a backend.schemas.statuses.PostStatus value, `PostTarget.status` a TargetStatus value (the
# store imports no wire-format module: it stores the enums' strings).


def folded(text: str) -> str:
    """A post's text as the search compares it (`Post.content_folded`, written with `content` by every writer):
    Python's case folding, the same on SQLite and PostgreSQL (SQLite's own LIKE folds ASCII letters only,
    PostgreSQL's ILIKE lower-cases), so `ÉTÉ` finds `été` and `STRASSE` finds `Straße` on both. Stored rather
    than computed per row in the query: a search reads 100,000 posts in C, with no Python call per row."""
    return text.casefold()


class Post(BaseModel):
    """A post. `status` follows spec 3.1. `version` grows with every change (PATCH re-validates against it).

    `idempotency_key` is unique per workspace (a UNIQUE index decides races, not a look-up).
    `free_publication`: this post used one of the workspace's free publications (given back on cancel).
    """

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="posts", on_delete="CASCADE")
    workspace_id: str  # peewee's column for workspace, typed for mypy
    status = CharField(max_length=12)
    content = TextField()
    content_folded = TextField(null=True)  # migration 0025: folded(content), what GET /v1/posts?q= compares
    media_urls = JSONField(default=list)
    media = JSONField(default=list)  # MediaRef dicts (url, kind, mime, ...) as checked at acceptance
    options = JSONField(default=dict)
    scheduled_at = UTCDateTimeField(null=True)
    idempotency_key = CharField(max_length=200, null=True)
    # sha256 of the creation request as sent with the key (migration 0032): the same key with another body is 409
    idempotency_fingerprint = CharField(max_length=64, null=True)
    free_publication = BooleanField(default=False)
    version = IntegerField(default=1)
    sent_at = UTCDateTimeField(null=True)  # when publishing started (scheduled/processing -> sending)
    completed_at = UTCDateTimeField(null=True)
    cancelled_at = UTCDateTimeField(null=True)
    lateness_ms = IntegerField(null=True)  # engine (migration 0006): how late the post was sent
    labels = JSONField(
        null=True
    )  # {key: value} fixed at creation (migration 0016); filtered through PostLabel
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        indexes = (
            (("workspace", "idempotency_key"), True),
            (("workspace", "status"), False),
            (("workspace", "scheduled_at"), False),
            (("workspace", "completed_at"), False),  # migration 0014: GET /v1/activity
        )


class PostTarget(BaseModel):
    """One network account reached by a post. `status` follows spec 3.2.

    `idempotency_token` is stable for the life of the target: the engine sends it to the network (or
    asks the network about it) so that a target is never published twice. `account_name` is a snapshot
    of the account's display name at acceptance.

    `external_post_id` is unique per account (migration 0053: a partial UNIQUE index on (account_id,
    external_post_id) where it is not null): one publication of an account is held by one target at most, so two
    reconciliations matching one listed publication by its text cannot both take it.
    """

    id = CharField(primary_key=True, max_length=40)
    post = ForeignKeyField(Post, backref="targets", on_delete="CASCADE")
    post_id: str  # peewee's column for post, typed for mypy
    position = IntegerField()
    platform = CharField(max_length=20)
    account = ForeignKeyField(Account, null=True, on_delete="SET NULL", index=True)
    account_id: str | None  # peewee's column for account, typed for mypy
    account_name = CharField(max_length=200)
    status = CharField(max_length=16, default="pending")
    external_post_id = CharField(max_length=300, null=True)
    post_url = TextField(null=True)
    fail_reason = TextField(null=True)
    fail_type = CharField(max_length=10, null=True)
    idempotency_token = CharField(max_length=64, unique=True)
    started_at = UTCDateTimeField(null=True)
    completed_at = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField()
    # engine tracking (columns added by migration 0006_engine)
    tracking_ref = TextField(null=True)
    call_started_at = UTCDateTimeField(null=True)
    attempts = IntegerField(default=0)
    track_deadline = UTCDateTimeField(null=True)
    network_status = TextField(null=True)
    next_attempt_at = UTCDateTimeField(
        null=True
    )  # a waiting target's next try (migration 0010); API nextAttemptAt
    # what the network holds of an attempt under way (an Instagram container, a YouTube upload session), saved
    # by the adapter once created; an interrupted attempt's successor continues from it (migration 0029)
    progress_ref = TextField(null=True)
    # what the user must know about a target that went through not quite as asked: [{code, message}] given by the
    # adapter (networks/base.py TargetWarning), kept one per code; NULL when none (migration 0035)
    warnings = JSONField(null=True)

    class Meta:
        indexes = ((("post", "position"), True), (("platform", "status"), False))


class PublishAttempt(BaseModel):
    """One attempt to publish a target: recorded (own transaction) before the network call, closed with its
    outcome after it. `finished_at` stays null while the outcome is unknown (the process died mid-call, or the
    call was ambiguous): the target's next attempt asks the network first (`find_existing`) from the earliest
    such attempt's `started_at` on (migration 0011)."""

    id = CharField(primary_key=True, max_length=40)
    target = ForeignKeyField(PostTarget, backref="attempt_rows", on_delete="CASCADE", index=True)
    target_id: str  # peewee's column for target, typed for mypy
    account = ForeignKeyField(Account, null=True, on_delete="SET NULL", index=False)
    account_id: str | None  # peewee's column for account, typed for mypy
    started_at = UTCDateTimeField()
    finished_at = UTCDateTimeField(null=True)
    outcome = TextField(null=True)


class PostLabel(BaseModel):
    """One label of a post, for `GET /v1/posts?label=KEY=VALUE` (an index seek on (workspace, key, value)).
    Labels are fixed at creation, so these rows and `Post.labels` (what the API answers) never disagree
    (migration 0016). Recipes mark the posts a set owns with them."""

    post = ForeignKeyField(Post, backref="label_rows", on_delete="CASCADE", index=True)
    post_id: str  # peewee's column for post, typed for mypy
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    workspace_id: str  # peewee's column for workspace, typed for mypy
    key = CharField(max_length=100)
    value = CharField(max_length=500)

    class Meta:
        indexes = ((("workspace", "key", "value", "post"), True),)
