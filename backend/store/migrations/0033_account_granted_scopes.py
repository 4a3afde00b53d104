"""`account.granted_scopes`: the scopes (or permissions) the network granted when the account was connected,
space-separated, as the network reported them; NULL when unknown (accounts connected before this migration,
or a network that does not say). `accounts doctor` checks them against what publishing and reconciliation
need."""

from peewee import TextField


def _columns(db, table):
    return {c.name for c in db.get_columns(table)}


def up(migrator, db):
    if "granted_scopes" not in _columns(db, "account"):
        migrator.migrate(migrator.add_column("account", "granted_scopes", TextField(null=True)))


def down(migrator, db):
    if "granted_scopes" in _columns(db, "account"):
        migrator.migrate(migrator.drop_column("account", "granted_scopes"))
