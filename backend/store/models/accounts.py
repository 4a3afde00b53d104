"""Connected social accounts: the `channelId` of post requests and the `accountId` of post targets."""

from __future__ import annotations

from peewee import CharField, ForeignKeyField, TextField

from backend.store.fields import EncryptedTextField, UTCDateTimeField
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace

ACCOUNT_KINDS = ("sandbox", "live")
ACCOUNT_STATUSES = ("active", "needs_reauth", "disconnected")
SANDBOX_BEHAVIOURS = ("ok", "fail-permanent", "fail-retriable", "rate-limited", "slow", "flaky")


class Account(BaseModel):
    """One account of one network connected to a workspace.

    `kind`: `sandbox` (an emulated network account) or `live`. `status`: `active`, `needs_reauth` (the
    network refused the token: reconnect), `disconnected` (removed by the owner; kept so that old targets
    still name it). `behaviour` is set for sandbox accounts only. The default account of a network is the
    oldest connected active one (smallest `connected_at`, then id).
    """

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="accounts", on_delete="CASCADE")
    workspace_id: str  # peewee's column for workspace, typed for mypy
    platform = CharField(max_length=20)
    name = CharField(max_length=200)
    username = CharField(max_length=200, default="")
    kind = CharField(max_length=10, default="sandbox")
    status = CharField(max_length=16, default="active")
    behaviour = CharField(max_length=20, null=True)
    external_id = CharField(max_length=200, default="")
    # the network's tokens: encrypted at rest (EncryptedTextField), never logged, never returned by the API
    access_token = EncryptedTextField(default="")
    refresh_token = EncryptedTextField(null=True)
    token_expires_at = UTCDateTimeField(null=True)
    # token life (backend/services/tokens.py): when the refresh token dies (if the network says); the expiry an
    # `account.token_expiring` event was recorded for (once per expiry); a refresh in flight holds the account
    # until then (one refresh at a time: a rotated refresh token used twice kills the grant), under its lease
    # token (`token_refresh_lease`; "grace": held for a refresh that may still be in flight, see tokens.py)
    refresh_expires_at = UTCDateTimeField(null=True)
    token_warned_for = UTCDateTimeField(null=True)
    token_refresh_until = UTCDateTimeField(null=True)
    token_refresh_lease = CharField(max_length=40, null=True)
    # the scopes the network granted at connect, space-separated as it reported them (None: unknown)
    granted_scopes = TextField(null=True)
    connected_at = UTCDateTimeField()
    disconnected_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()

    class Meta:
        indexes = ((("workspace", "platform", "connected_at"), False),)

    def __repr__(self) -> str:  # keep the token out of logs and tracebacks
        return f"<Account {self.id} {self.platform} {self.name!r} {self.status}>"
