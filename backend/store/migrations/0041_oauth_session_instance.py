"""Issue 32: `oauth_session.instance`, the server an OAuth connection goes to for a network made of many (a
Mastodon instance's host); NULL for the others."""

from typing import Any

from peewee import CharField


def _columns(db: Any, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: Any, db: Any) -> None:
    if "instance" not in _columns(db, "oauth_session"):
        migrator.migrate(
            migrator.add_column("oauth_session", "instance", CharField(max_length=300, null=True))
        )


def down(migrator: Any, db: Any) -> None:
    if "instance" in _columns(db, "oauth_session"):
        migrator.migrate(migrator.drop_column("oauth_session", "instance"))
