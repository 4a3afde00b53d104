"""Issue 17: secrets at rest. `account.refresh_token` (nullable) is added; on PostgreSQL the webhook secrets
become TEXT (an encrypted value is ~150 characters; SQLite does not enforce lengths); every token and webhook
secret still stored in clear is encrypted in place: `enc:v1:` + a Fernet token under the store's keyring
(backend/store/secretbox.py, configured by init_database). `down` decrypts them back and drops the column.

The value format is frozen here (the prefix and Fernet); only the keys come from the keyring."""

from collections.abc import Callable

from peewee import Database, SqliteDatabase, Table, TextField
from playhouse.migrate import SchemaMigrator

from backend.store import secretbox

_PREFIX = "enc:v1:"
_COLUMNS = {"account": ("access_token", "refresh_token"), "webhook_endpoint": ("secret", "previous_secret")}


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def _rewrite(db: Database, table: str, column: str, change: Callable[[str], str | None]) -> None:
    """Apply `change` (old stored text -> new, or None to leave it) to each non-empty value of the column."""
    t = Table(table).bind(db)
    col = getattr(t.c, column)
    rows = list(t.select(t.c.id, col).where(col.is_null(False) & (col != "")).tuples())
    for row_id, value in rows:
        new = change(value)
        if new is not None and new != value:
            t.update({col: new}).where((t.c.id == row_id) & (col == value)).execute()


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "refresh_token" not in _columns(db, "account"):
        migrator.migrate(migrator.add_column("account", "refresh_token", TextField(null=True)))
    if not isinstance(db, SqliteDatabase):
        db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
            'ALTER TABLE "webhook_endpoint" ALTER COLUMN "secret" TYPE TEXT, '
            'ALTER COLUMN "previous_secret" TYPE TEXT'
        )
    ring = secretbox.keyring()

    def encrypt(value: str) -> str | None:
        if value.startswith(_PREFIX):
            return None
        return _PREFIX + ring.multi().encrypt(value.encode()).decode()

    for table, columns in _COLUMNS.items():
        for column in columns:
            _rewrite(db, table, column, encrypt)


def down(migrator: SchemaMigrator, db: Database) -> None:
    ring = secretbox.keyring()

    def decrypt(value: str) -> str | None:
        if not value.startswith(_PREFIX):
            return None
        return ring.multi().decrypt(value[len(_PREFIX) :].encode()).decode()

    for table, columns in _COLUMNS.items():
        for column in columns:
            if column in _columns(db, table):
                _rewrite(db, table, column, decrypt)
    if not isinstance(db, SqliteDatabase):
        db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
            'ALTER TABLE "webhook_endpoint" ALTER COLUMN "secret" TYPE VARCHAR(100), '
            'ALTER COLUMN "previous_secret" TYPE VARCHAR(100)'
        )
    if "refresh_token" in _columns(db, "account"):
        migrator.migrate(migrator.drop_column("account", "refresh_token"))
