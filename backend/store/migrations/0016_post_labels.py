"""Issue 14: posts carry labels fixed at creation (`post.labels`, what the API answers) and `post_label` rows,
one per label, so `GET /v1/posts?label=KEY=VALUE` is an index seek on (workspace, key, value). Recipes mark the
posts a set owns with them; prune reads only its own set's posts."""

from peewee import CharField, Database, ForeignKeyField, JSONField, Model
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "labels" not in _columns(db, "post"):
        migrator.migrate(migrator.add_column("post", "labels", JSONField(null=True)))

    class Base(Model):
        class Meta:
            database = db
            legacy_table_names = False

    class Post(Base):  # the referenced tables, as far as the foreign keys need them
        id = CharField(primary_key=True, max_length=40)

    class Workspace(Base):
        id = CharField(primary_key=True, max_length=40)

    class PostLabel(Base):
        post = ForeignKeyField(Post, on_delete="CASCADE", index=True)
        workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
        key = CharField(max_length=100)
        value = CharField(max_length=500)

        class Meta:
            table_name = "post_label"
            indexes = ((("workspace", "key", "value", "post"), True),)

    db.create_tables([PostLabel], safe=True)


def down(migrator: SchemaMigrator, db: Database) -> None:
    db.execute_sql('DROP TABLE IF EXISTS "post_label"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
    migrator.migrate(migrator.drop_column("post", "labels"))
