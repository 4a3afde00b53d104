"""Issue 17 item 1: `oauth_session`, one OAuth connection in progress (docs/accounts.md). The state is kept as its
SHA-256 (looked up, never shown again); the PKCE verifier and, once the code is exchanged, the grant's tokens are
encrypted (`enc:v1:`, backend/store/fields.py EncryptedTextField). A session lives 10 minutes and is used once."""

from peewee import CharField, Database, DateTimeField, ForeignKeyField, Model, TextField
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Workspace(Base):  # the referenced table, as far as the foreign key needs it
        id = CharField(primary_key=True, max_length=40)

    class OAuthSession(Base):
        id = CharField(primary_key=True, max_length=40)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=True)
        platform = CharField(max_length=20)
        state_hash = CharField(max_length=64, unique=True)
        redirect_uri = TextField()
        name = CharField(max_length=200, null=True)
        verifier = TextField(default="")
        status = CharField(max_length=12, default="started")
        tokens = TextField(null=True)
        expires_at = DateTimeField()
        created_at = DateTimeField()
        finished_at = DateTimeField(null=True)

        class Meta:
            table_name = "oauth_session"

    db.create_tables([OAuthSession], safe=True)


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP TABLE IF EXISTS "oauth_session"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
