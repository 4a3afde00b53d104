"""Issue 17 item 3, token life: `account.refresh_expires_at` (when the refresh token dies, if the network says),
`account.token_warned_for` (the expiry an `account.token_expiring` event was recorded for: once per expiry) and
`account.token_refresh_until` (a refresh in flight holds it: one refresh per account at a time, as a rotated
refresh token used twice kills the grant)."""

from peewee import Database, DateTimeField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


_NEW = ("refresh_expires_at", "token_warned_for", "token_refresh_until")


def up(migrator: SchemaMigrator, db: Database) -> None:
    have = _columns(db, "account")
    ops = [
        migrator.add_column("account", name, DateTimeField(null=True)) for name in _NEW if name not in have
    ]
    if ops:
        migrator.migrate(*ops)


def down(migrator: SchemaMigrator, db: Database) -> None:
    have = _columns(db, "account")
    ops = [migrator.drop_column("account", name) for name in _NEW if name in have]
    if ops:
        migrator.migrate(*ops)
