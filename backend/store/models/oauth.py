"""OAuth connections in progress (docs/accounts.md): `POST /v1/accounts/oauth/start` makes one, `finish` exchanges
its code, `…/{grantId}/connect` turns the accounts picked into live accounts."""

from __future__ import annotations

from peewee import CharField, ForeignKeyField, JSONField, TextField

from backend.store.fields import EncryptedTextField, UTCDateTimeField
from backend.store.models.base import BaseModel
from backend.store.models.workspace import Workspace

OAUTH_SESSION_STATUSES = ("started", "finishing", "finished", "connected", "failed")


class OAuthSession(BaseModel):
    """One OAuth connection: its id is the `grantId` of the API. `state_hash`: SHA-256 of the `state` given to the
    network (the state itself is not kept). `verifier`: the PKCE code verifier; `tokens`: JSON of the accounts the
    grant reaches with their tokens — both encrypted at rest, never returned, never logged. Lives until
    `expires_at`, used once (status started -> finishing -> finished -> connected, or failed)."""

    id = CharField(primary_key=True, max_length=40)
    workspace = ForeignKeyField(Workspace, backref="oauth_sessions", on_delete="CASCADE")
    workspace_id: str  # peewee's column for workspace, typed for mypy
    platform = CharField(max_length=20)
    state_hash = CharField(max_length=64, unique=True)
    redirect_uri = TextField()
    name = CharField(max_length=200, null=True)
    instance = CharField(max_length=300, null=True)  # the server of a network made of many (Mastodon)
    verifier = EncryptedTextField(default="")
    status = CharField(max_length=12, default="started")
    tokens = EncryptedTextField(null=True)
    expires_at = UTCDateTimeField()
    created_at = UTCDateTimeField()
    finished_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "oauth_session"

    def __repr__(self) -> str:  # no verifier, no token
        return f"<OAuthSession {self.id} {self.platform} {self.status}>"


class NetworkInstance(BaseModel):
    """One server of a network made of many (each Mastodon instance): the OAuth app socialpub registered on it
    (its client_id, its client_secret encrypted at rest, the scopes and redirect URIs registered) and the limits it
    reported with when they were read. Shared by the workspaces: an app registration on a server holds no user's
    data; the accounts connected through it are each workspace's own. One row per (network, host)."""

    network = CharField(max_length=20)
    host = CharField(max_length=255)
    client_id = TextField(null=True)
    client_secret = EncryptedTextField(null=True)
    scopes = TextField(default="")  # space-separated, as registered
    redirect_uris = TextField(default="")  # space-separated, as registered
    limits = JSONField(null=True)  # the network's own cached form of the server's limits
    limits_read_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "network_instance"
        indexes = ((("network", "host"), True),)

    def __repr__(self) -> str:  # no secret
        return f"<NetworkInstance {self.network} {self.host}>"
