"""Issue 13, the TUI's search: `post.content_folded`, the text case-folded (backend.store.models.posts.folded), so
`GET /v1/posts?q=` compares stored text in SQL instead of calling Python's casefold for every row (SQLite) or
folding with ILIKE's lower-casing (PostgreSQL). Existing posts are folded here, a chunk at a time."""

from peewee import Database, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


CHUNK = 1000


def up(migrator: SchemaMigrator, db: Database) -> None:
    if "content_folded" not in _columns(db, "post"):
        migrator.migrate(migrator.add_column("post", "content_folded", TextField(null=True)))
    p = db.param
    while True:
        rows = db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
            f'SELECT "id", "content" FROM "post" WHERE "content_folded" IS NULL LIMIT {CHUNK}'
        ).fetchall()
        if not rows:
            break
        with db.atomic():
            for post_id, content in rows:
                db.execute_sql(  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
                    f'UPDATE "post" SET "content_folded" = {p} WHERE "id" = {p}',
                    ((content or "").casefold(), post_id),
                )


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "content_folded" in _columns(db, "post"):
        migrator.migrate(migrator.drop_column("post", "content_folded"))
