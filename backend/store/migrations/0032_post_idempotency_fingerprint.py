"""Issue 30 item 9: an `idempotencyKey` sent again with a different body silently returned the first post; now it is
409 `idempotency_key_reused` (Stripe's rule). `post.idempotency_fingerprint` keeps the sha256 of the creation
request that used the key (backend/services/posts.py `request_fingerprint`). Posts created before this migration
have none: a replay of their key answers the post, as before."""

from peewee import CharField, Database
from playhouse.migrate import SchemaMigrator


def _columns(db: Database) -> set[str]:
    return {c.name for c in db.get_columns("post")}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "idempotency_fingerprint" not in _columns(db):
        migrator.migrate(
            migrator.add_column("post", "idempotency_fingerprint", CharField(max_length=64, null=True))
        )


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "idempotency_fingerprint" in _columns(db):
        migrator.migrate(migrator.drop_column("post", "idempotency_fingerprint"))
