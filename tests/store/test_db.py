"""The store: SQLite in WAL mode in the data dir, versioned migrations recorded."""

from __future__ import annotations

from backend.store.db import database, is_sqlite, migrate, migration_status


def test_sqlite_is_wal_in_the_data_dir(settings, db_kind):
    if db_kind != "sqlite":
        assert not is_sqlite()
        return
    assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert settings.sqlite_path.exists() and settings.sqlite_path.parent == settings.data_dir


def test_migrations_are_versioned_and_idempotent(settings):
    status = migration_status()
    assert status and all(applied for _, applied in status)
    assert status[0][0] == "0001_foundation"
    assert [name for name, _ in status] == sorted(name for name, _ in status)
    assert migrate() == []  # nothing left to apply
