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


def test_sqlite_checkpoints_in_the_background(settings, db_kind, monkeypatch):
    """Commits wake a background thread that copies the WAL into the database file (PASSIVE checkpoint); the
    committing thread no longer does it every 1000 pages (SQLite's automatic checkpoint is only the backstop)."""
    import time

    from backend.store import db as db_module

    if db_kind != "sqlite":
        return
    monkeypatch.setattr(db_module, "CHECKPOINT_IDLE_S", 0.2)
    assert database.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == db_module.CHECKPOINT_BACKSTOP_PAGES
    time.sleep(0.3)  # the set-up's writes reach the database file first
    size = settings.sqlite_path.stat().st_size
    with database.atomic():
        database.execute_sql("CREATE TABLE filler (blob BLOB)")
        database.execute_sql("INSERT INTO filler VALUES (zeroblob(1000000))")
    checkpointer = database.obj._checkpointer
    assert checkpointer._thread is not None and checkpointer._thread.is_alive()
    deadline = time.monotonic() + 5
    while settings.sqlite_path.stat().st_size <= size and time.monotonic() < deadline:
        time.sleep(0.01)
    assert settings.sqlite_path.stat().st_size > size + 900_000  # the new pages reached the database file
    assert database.execute_sql("SELECT length(blob) FROM filler").fetchone()[0] == 1_000_000
    while checkpointer._thread is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert checkpointer._thread is None  # idle: ended (and closed its connection); the next commit starts one


def test_background_checkpoints_stop_once_on_an_error(settings, db_kind, monkeypatch, caplog):
    """A file the checkpoint thread cannot open: one warning, no thread started again on every commit."""
    import sqlite3
    import time

    from backend.store import db as db_module

    if db_kind != "sqlite":
        return
    checkpointer = database.obj._checkpointer
    monkeypatch.setattr(db_module, "CHECKPOINT_IDLE_S", 0.01)
    checkpointer.poke()  # the set-up's thread goes round once more and ends on the short idle time
    deadline = time.monotonic() + 5
    while checkpointer._thread is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    opened = []

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(args)
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(db_module.sqlite3, "connect", refuse)
    with caplog.at_level("WARNING", logger="socialpub.store"):
        for _ in range(20):
            with database.atomic():
                database.execute_sql("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
                database.execute_sql("INSERT INTO t VALUES (1)")
            time.sleep(0.005)
        time.sleep(0.1)
    assert len(opened) == 1
    assert sum("background checkpoints" in r.message for r in caplog.records) == 1
    assert database.execute_sql("SELECT count(*) FROM t").fetchone()[0] == 20  # writes unaffected
