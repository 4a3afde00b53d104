"""Initialise a data dir: store, workspace, owner login, one all-scopes API key, session secret, secrets key."""

from __future__ import annotations

import secrets
import shutil
from dataclasses import dataclass
from typing import Any

from backend import clock
from backend.config import Settings
from backend.errors import ApiError
from backend.ids import new_id
from backend.services import encryption, keys, security
from backend.store.db import database, drop_all_tables, init_database, is_sqlite, migrate, tx
from backend.store.models import Owner, Workspace


class AlreadyInitialised(Exception):
    pass


@dataclass
class Created:
    workspace_id: str
    owner_id: str
    email: str
    password: str | None
    api_key: str
    api_key_id: str
    session_token: str

    def public(self) -> dict[str, Any]:
        out = {
            "workspaceId": self.workspace_id,
            "ownerId": self.owner_id,
            "email": self.email,
            "apiKey": self.api_key,
            "apiKeyId": self.api_key_id,
            "sessionToken": self.session_token,
        }
        if self.password is not None:
            out["password"] = self.password
        return out


def is_initialised(settings: Settings) -> bool:
    if security.secret_path(settings).exists():
        return True
    init_database(settings)
    return Workspace.select().exists()


def wipe(settings: Settings) -> None:
    """--force: forget everything in this data dir / database."""
    if database.obj is not None and not database.is_closed():
        database.close()
    if settings.database_url:
        db = init_database(settings, run_migrations=False)
        # the sandbox networks' tables stay, as sandbox.db stays beside a SQLite data dir: they are the emulated
        # networks' state, not this workspace's
        # deferred: backend.services.adapters costs ~151 ms of start-up, paid only by the commands that use it
        from backend.services import adapters  # (the network adapters: not needed to mint a session)

        drop_all_tables(db, keep=adapters.sandbox_tables())
        migrate(db)
    else:
        database.initialize(None)
        for suffix in ("", "-wal", "-shm"):
            p = settings.sqlite_path.with_name(settings.sqlite_path.name + suffix)
            if p.exists():
                p.unlink()
    sp = security.secret_path(settings)
    if sp.exists():
        sp.unlink()
    media_dir = settings.data_dir / "media"
    if media_dir.exists():
        shutil.rmtree(media_dir)


def create_workspace(settings: Settings, name: str, email: str, password: str | None) -> Created:
    """A workspace with its owner and one key holding every scope (used by init and by tests)."""
    email = email.strip().lower()
    generated = password is None
    password = password or secrets.token_urlsafe(12)
    _check_login(email, password)  # before anything is written: a refused init leaves no half-made data dir
    init_database(settings)
    secret = security.ensure_secret(settings)
    encryption.ensure_key(settings)
    now = clock.now()
    with tx():
        if Owner.select().where(Owner.email == email).exists():
            raise ApiError(409, "email_taken", f"an owner with the email {email} exists already")
        ws = Workspace.create(
            id=new_id("ws"), name=name, description="", currency="USD", logo_url="", brand={}, created_at=now
        )
        owner = Owner.create(
            id=new_id("own"),
            workspace=ws.id,
            email=email,
            password_hash=security.hash_password(password),
            created_at=now,
        )
    key, full = keys.create(ws.id, "default (init)", None)
    token, _ = security.issue_session(secret, owner.id, ws.id, settings.session_ttl_s)
    return Created(ws.id, owner.id, email, password if generated else None, full, key.id, token)


def _check_login(email: str, password: str) -> None:
    if len(password) < 8:
        raise ValueError(
            "the password must have at least 8 characters: choose a longer --password, "
            "or omit it to have one generated"
        )
    local, at, domain = email.partition("@")
    if not (local and at and domain) or any(c.isspace() for c in email):
        raise ValueError(
            f"{email!r} is not an email address: give the owner's login with --email, e.g. me@acme.test"
        )


def initialise(
    settings: Settings, *, workspace_name: str, email: str, password: str | None, force: bool = False
) -> Created:
    _check_login(email.strip().lower(), password or "x" * 8)
    if is_initialised(settings):
        if not force:
            raise AlreadyInitialised(
                f"this data dir is initialised already ({settings.data_dir}"
                f"{'; database ' + _redact(settings.database_url) if settings.database_url else ''}): "
                "use --force to wipe it and start again"
            )
        wipe(settings)
    init_database(settings)
    return create_workspace(settings, workspace_name, email, password)


def owner_session(settings: Settings, email: str | None = None, operator: bool = True) -> str:
    init_database(settings)
    secret = security.load_secret(settings)
    q = Owner.select().order_by(Owner.created_at)
    if email:
        q = q.where(Owner.email == email.strip().lower())
    owner = q.first()
    if owner is None:
        raise LookupError("no owner found: run `socialpub init` first" if not email else f"no owner {email}")
    token, _ = security.issue_session(
        secret, owner.id, owner.workspace_id, settings.session_ttl_s, operator=operator
    )
    return token


def _redact(url: str | None) -> str:
    if not url:
        return ""
    from urllib.parse import urlparse

    u = urlparse(url)
    if u.password:
        return url.replace(f":{u.password}@", ":***@")
    return url


__all__ = [
    "AlreadyInitialised",
    "Created",
    "create_workspace",
    "initialise",
    "is_initialised",
    "owner_session",
    "is_sqlite",
]
