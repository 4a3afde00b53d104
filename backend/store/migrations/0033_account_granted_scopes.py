"""`account.granted_scopes`: the scopes (or permissions) the network granted when the account was connected,
space-separated, as the network reported them; NULL when unknown (accounts connected before this migration,
or a network that does not say). `accounts doctor` checks them against what publishing and reconciliation
need."""

from peewee import Database, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "granted_scopes" not in _columns(db, "account"):
        migrator.migrate(migrator.add_column("account", "granted_scopes", TextField(null=True)))


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "granted_scopes" in _columns(db, "account"):
        migrator.migrate(migrator.drop_column("account", "granted_scopes"))
