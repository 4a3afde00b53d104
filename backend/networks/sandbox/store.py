"""The sandbox's own database: what the emulated networks hold (their accounts and every object they received).

Not the product's tables. On SQLite a file of its own, `sandbox.db` in the data dir (mode 0600, WAL); on
PostgreSQL the product's database, in tables of the sandbox's own (`emulator_account`, `emulator_item`,
history in `emulator_migration`) created by the sandbox's own migrations (backend/networks/sandbox/migrations):
no second server, database or schema privilege to set up, one backup, and the test suite's truncation covers
them. The models are bound to `sandbox_db`, a proxy initialised by `open_database`; peewee queries only.

Asynchronous progress is computed from started_at + processing_s and the clock, so a restart or a
time-machine jump sees the same state.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from peewee import (
    BooleanField,
    CharField,
    Database,
    DatabaseProxy,
    DateTimeField,
    FloatField,
    IntegerField,
    JSONField,
    Model,
    PostgresqlDatabase,
    SqliteDatabase,
    TextField,
)
from playhouse.migrations import Runner

log = logging.getLogger("socialpub.sandbox")

sandbox_db = DatabaseProxy()
MIGRATIONS_DIR = Path(__file__).with_name("migrations")
MIGRATION_TABLE = "emulator_migration"
TABLES = (
    "emulator_account",
    "emulator_item",
    "emulator_grant",
    "emulator_token",
    "emulator_setting",
    MIGRATION_TABLE,
)  # on PostgreSQL, beside the product's tables
SQLITE_FILE = "sandbox.db"


class UTCDateTime(DateTimeField):
    """Naive UTC in the database, aware UTC in Python (converted explicitly both ways)."""

    def db_value(self, value: datetime | str | None) -> datetime | str | None:
        if isinstance(value, datetime):
            if value.tzinfo is not None:
                value = value.astimezone(UTC).replace(tzinfo=None)
            db = self.model._meta.database
            if isinstance(db, DatabaseProxy):
                db = db.obj
            if isinstance(
                db, SqliteDatabase
            ):  # fixed-width text: text order is time order, no driver adapter
                return value.strftime("%Y-%m-%d %H:%M:%S.%f")
            return value
        stored: datetime | str | None = super().db_value(value)  # type: ignore[no-untyped-call]  # peewee: Field.db_value is untyped in its stubs
        return stored

    def python_value(self, value: datetime | str | None) -> datetime | str | None:
        value = super().python_value(value)  # type: ignore[no-untyped-call]  # peewee: Field.python_value is untyped in its stubs
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value


class SandboxModel(Model):
    class Meta:
        database = sandbox_db
        legacy_table_names = False


class SandboxAccount(SandboxModel):
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
    created_at = UTCDateTime()

    class Meta:
        table_name = "emulator_account"
        indexes = ((("platform", "external_id"), True),)


class SandboxItem(SandboxModel):
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
    state = CharField(max_length=30, default="")  # explicit states (uploaded, published, cancelled, deleted)
    started_at = UTCDateTime()
    processing_s = FloatField(default=0.0)
    created_at = UTCDateTime()

    class Meta:
        table_name = "emulator_item"
        indexes = ((("platform", "account_id", "kind", "created_at"), False),)


SandboxItem.add_index(SandboxItem.post_id, where=SandboxItem.post_id.is_null(False))


class SandboxGrant(SandboxModel):
    """An OAuth consent: the user (`subject`, the network's id for them) and the sandbox accounts it reaches
    (a TikTok creator, a LinkedIn member, a YouTube channel; Facebook pages; Instagram accounts of linked pages)."""

    id = CharField(primary_key=True, max_length=40)
    platform = CharField(max_length=20)
    subject = CharField(max_length=80)
    account_ids = JSONField(default=list)
    client_id = CharField(max_length=200, default="")
    scopes = JSONField(default=list)
    state = CharField(max_length=20, default="active")  # active | revoked
    refresh_expires_at = UTCDateTime(null=True)  # LinkedIn: 365 d from the first consent, never extended
    created_at = UTCDateTime()

    class Meta:
        table_name = "emulator_grant"


class SandboxToken(SandboxModel):
    """A credential the emulator issued, by its SHA-256 (never the token): an authorization code, an access or
    refresh token of a grant, a page token, or a sandbox account's own token once a test made it mortal."""

    id = CharField(primary_key=True, max_length=64)
    platform = CharField(max_length=20)
    grant_id = CharField(max_length=40, null=True)
    kind = CharField(max_length=20)  # code | access | user | refresh | page | account
    account_id = CharField(max_length=40, null=True)
    expires_at = UTCDateTime(null=True)
    state = CharField(max_length=20, default="active")  # active | used | rotated | revoked
    data = JSONField(default=dict)
    created_at = UTCDateTime()

    class Meta:
        table_name = "emulator_token"
        indexes = ((("grant_id",), False),)


class SandboxSetting(SandboxModel):
    """Switches and registries of the emulators (OAuth lifetimes, failure switches, consenting users)."""

    key = CharField(primary_key=True, max_length=200)
    value = JSONField(default=dict)

    class Meta:
        table_name = "emulator_setting"


MODELS = (SandboxAccount, SandboxItem, SandboxGrant, SandboxToken, SandboxSetting)


@dataclass(frozen=True)
class DatabaseLocation:
    """Where the sandbox keeps its state: a SQLite file, or a PostgreSQL database (connection values)."""

    sqlite_path: str | None = None
    pg_database: str | None = None
    pg_user: str | None = None
    pg_password: str | None = None
    pg_host: str = "127.0.0.1"
    pg_port: int = 5432

    @classmethod
    def sqlite_in(cls, data_dir: str | Path) -> DatabaseLocation:
        return cls(sqlite_path=str(Path(data_dir) / SQLITE_FILE))

    def __str__(self) -> str:  # never the password
        return self.sqlite_path or f"postgresql://{self.pg_host}:{self.pg_port}/{self.pg_database}"

    def __repr__(self) -> str:
        return f"DatabaseLocation({self})"


def make_database(loc: DatabaseLocation) -> Database:
    if loc.pg_database:
        return PostgresqlDatabase(
            loc.pg_database,
            user=loc.pg_user,
            password=loc.pg_password,
            host=loc.pg_host,
            port=loc.pg_port,
            prefer_psycopg3=True,
            autorollback=True,
        )
    assert loc.sqlite_path
    path = Path(loc.sqlite_path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):  # owner-only, like the product's file (tokens' hashes, posts)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return SqliteDatabase(
        str(path),
        pragmas={"journal_mode": "wal", "synchronous": "normal", "busy_timeout": 15000},
        timeout=15,
        lock_type="IMMEDIATE",
        check_same_thread=False,
    )


MIGRATION_LOCK_KEY = 0x50C1A1  # PostgreSQL: the advisory lock the sandbox's migrations run under


@contextlib.contextmanager
def _one_migrator(db: Database) -> Iterator[None]:
    """Migrations run one process at a time: emulators started together (`socialpub sandbox serve` for each
    network, as docs/sandbox.md does) each found the new file unmigrated and all but one died on the migration
    table's UNIQUE constraint. SQLite: an exclusive lock on the database file's
    directory (no lock file is left behind; one from an older version is removed); PostgreSQL: an advisory
    lock. The second process then finds nothing left to apply."""
    if isinstance(db, PostgresqlDatabase):
        db.execute_sql("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        try:
            yield
        finally:
            db.execute_sql("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        return
    import fcntl

    # The lock is taken on the database's directory (opened read-only; flock works on a directory), so no lock file
    # is left behind, and no descriptor of the database file itself is opened and closed here: closing one would
    # drop the POSIX locks SQLite holds on it in this process.
    fd = os.open(os.path.dirname(os.path.abspath(db.database)) or ".", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{db.database}.migrating")  # the lock file of versions before this one
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def migrate(db: Database) -> list[str]:
    """Apply the sandbox's own pending migrations to `db` (one process at a time)."""
    with _one_migrator(db):
        applied: list[str] = Runner(db, directory=str(MIGRATIONS_DIR), table_name=MIGRATION_TABLE).up()
    for name in applied:
        log.info("sandbox migration applied: %s", name)
    return applied


_OPEN: dict[DatabaseLocation, Database] = {}
_GUARD = threading.Lock()


def open_database(loc: DatabaseLocation) -> Database:
    """The sandbox database at `loc`, migrated, and bound as the current one (the models' proxy)."""
    with _GUARD:
        db = _OPEN.get(loc)
        if db is None:
            db = make_database(loc)
            migrate(db)
            if len(_OPEN) >= 16:  # tests open one per data dir
                for old in _OPEN.values():
                    old.close()
                _OPEN.clear()
            _OPEN[loc] = db
        if sandbox_db.obj is not db:
            sandbox_db.initialize(db)
        return db


def is_sqlite() -> bool:
    return isinstance(sandbox_db.obj, SqliteDatabase)
