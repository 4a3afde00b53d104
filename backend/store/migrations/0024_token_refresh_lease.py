"""Token life, one refresh at a time (backend/services/tokens.py): `account.token_refresh_lease`, the token of the
refresh holding the account until `token_refresh_until`. The refresh stores its answer only if it still holds the
lease (or its answer rotated the refresh token and nobody has stored another), and releases only its own lease.
(0023 is TikTok's upload URL.)"""

from peewee import CharField, Database
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "token_refresh_lease" not in _columns(db, "account"):
        migrator.migrate(
            migrator.add_column("account", "token_refresh_lease", CharField(max_length=40, null=True))
        )


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "token_refresh_lease" in _columns(db, "account"):
        migrator.migrate(migrator.drop_column("account", "token_refresh_lease"))
