"""The store: SQLite in WAL mode in the data dir, versioned migrations recorded."""

from __future__ import annotations

import psycopg
import pytest
from peewee import BlobField, IntegerField, Model, PeeweeException, fn

from backend.store.db import database, is_sqlite, make_database, migrate, migration_status, tx


class Filler(Model):
    blob = BlobField()

    class Meta:
        database = database
        table_name = "filler"


class Counted(Model):
    x = IntegerField()

    class Meta:
        database = database
        table_name = "t"


def test_sqlite_is_wal_in_the_data_dir(settings, db_kind):
    if db_kind != "sqlite":
        assert not is_sqlite()
        return
    assert database.obj.journal_mode == "wal"
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
    assert database.obj.pragma("wal_autocheckpoint") == db_module.CHECKPOINT_BACKSTOP_PAGES
    time.sleep(0.3)  # the set-up's writes reach the database file first
    size = settings.sqlite_path.stat().st_size
    with database.atomic():
        Filler.create_table()
        Filler.insert(blob=fn.zeroblob(1_000_000)).execute()
    checkpointer = database.obj.checkpointer
    assert checkpointer.running
    deadline = time.monotonic() + 5
    while settings.sqlite_path.stat().st_size <= size + 900_000 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert settings.sqlite_path.stat().st_size > size + 900_000  # the new pages reached the database file
    assert Filler.select(fn.length(Filler.blob)).scalar() == 1_000_000
    while checkpointer.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not checkpointer.running  # idle: ended (and closed its connection); the next commit starts one


def test_background_checkpoints_stop_once_on_an_error(settings, db_kind, monkeypatch, caplog):
    """A file the checkpoint thread cannot open: one warning, no thread started again on every commit."""
    import time

    from peewee import OperationalError

    from backend.store import db as db_module

    if db_kind != "sqlite":
        return
    checkpointer = database.obj.checkpointer
    monkeypatch.setattr(db_module, "CHECKPOINT_IDLE_S", 0.01)
    checkpointer.poke()  # the set-up's thread goes round once more and ends on the short idle time
    deadline = time.monotonic() + 5
    while checkpointer.running and time.monotonic() < deadline:
        time.sleep(0.01)
    opened = []

    def refuse(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(args)
        raise OperationalError("unable to open database file")

    monkeypatch.setattr(db_module, "_checkpoint_database", refuse)
    with caplog.at_level("WARNING", logger="socialpub.store"):
        for _ in range(20):
            with database.atomic():
                Counted.create_table()
                Counted.insert(x=1).execute()
            time.sleep(0.005)
        time.sleep(0.1)
    assert len(opened) == 1
    assert sum("background checkpoints" in r.message for r in caplog.records) == 1
    assert Counted.select().count() == 20  # writes unaffected


def test_drop_all_tables_then_migrate_rebuilds_the_schema(settings):
    """`init --force` on PostgreSQL: every table goes (whoever made it) but those kept (the sandbox's), the
    migrations make them again."""
    from backend.store.db import drop_all_tables
    from backend.store.models import Workspace

    db = database.obj
    before = set(db.get_tables())
    assert "workspace" in before and "schema_migration" in before
    kept = tuple(t for t in before if t.startswith("emulator_"))
    drop_all_tables(db, keep=kept)
    assert set(db.get_tables()) == set(kept)
    migrate(db)
    assert set(db.get_tables()) == before
    assert Workspace.select().count() == 0


def test_truncate_all_tables_keeps_the_migration_history(settings, owner, db_kind):
    from backend.store.models import ApiKey, Workspace
    from tests.support.store import truncate_all_tables

    if db_kind != "postgres":
        return
    assert Workspace.select().count() == 1 and ApiKey.select().count() == 1
    truncate_all_tables(database.obj)
    assert Workspace.select().count() == 0 and ApiKey.select().count() == 0
    assert all(applied for _, applied in migration_status())


def test_sqlite_autocommit_writes_take_the_writer_lock(settings, db_kind, monkeypatch):
    """A write statement outside a transaction queues on the in-process writer lock (like BEGIN does);
    reads never take it."""
    from backend.store.models import RateCounter

    if db_kind != "sqlite":
        return
    gate = database.obj.writer_gate
    taken = []
    original = gate.take
    monkeypatch.setattr(gate, "take", lambda: (taken.append(1), original())[1])
    RateCounter.insert(bucket="b", window=1, count=1).execute()
    assert len(taken) == 1
    assert RateCounter.select().count() == 1 and len(taken) == 1
    RateCounter.update(count=RateCounter.count + 1).execute()
    RateCounter.delete().execute()
    assert len(taken) == 3
    with database.atomic():
        RateCounter.insert(bucket="b", window=2, count=1).execute()
    assert len(taken) == 4  # once, at BEGIN


def test_socialpub_processes_started_together_on_a_new_store_all_start(tmp_path, pg_url):
    """`socialpub serve` and `socialpub worker` (or the TUI) started together on a new or just-upgraded data dir:
    each finds the migrations pending; they apply them one at a time, so none dies on the migration table's
    UNIQUE constraint. Real processes (`socialpub tick`, which opens the store and exits), on one fresh SQLite
    file or one fresh PostgreSQL database."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "SOCIALPUB_DATA_DIR": str(tmp_path / "data")}
    env.pop("SOCIALPUB_DATABASE_URL", None)
    fresh = None
    if pg_url:
        from tests.support import pgserver

        fresh = env["SOCIALPUB_DATABASE_URL"] = pgserver.database_for_worker(pg_url, "migration_race")
    try:
        command = [
            str(Path(sys.executable).with_name("socialpub")),
            "tick",
            "--max-seconds",
            "0",
            "--settle",
            "0",
        ]
        procs = [
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for _ in range(6)
        ]
        errors = [p.communicate(timeout=120)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 6, "\n".join(e[-2000:] for e in errors)
    finally:
        if fresh:
            pgserver.drop_database(fresh)


def test_postgresql_ends_a_session_left_idle_in_a_transaction(settings, db_kind):  # type: ignore[no-untyped-def]
    """A process frozen inside a transaction must not hold its row locks past the job takeover: the server ends
    its session after twice the job lease (at least 5 s)."""
    if db_kind != "postgres":
        return  # PostgreSQL's own setting
    shown = database.execute_sql("SHOW idle_in_transaction_session_timeout").fetchone()[0]
    assert shown == f"{int(max(5.0, 2 * settings.job_lease_s))}s"


def test_postgresql_reconnects_a_connection_the_server_closed(settings, db_kind):  # type: ignore[no-untyped-def]
    """A worker resumed after a freeze finds its session ended by the server: its next transaction runs on a new
    connection, and a statement inside the broken transaction fails (never silently retried)."""
    if db_kind != "postgres":
        return  # PostgreSQL's own behaviour

    def kill(pid: int) -> None:  # as the server does to a session idle in a transaction past its timeout
        other = make_database(settings)
        other.connect()
        try:
            other.execute_sql("SELECT pg_terminate_backend(%s)", (pid,))
        finally:
            other.close()

    pid = database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    kill(pid)
    # outside a transaction: retried on a new connection
    assert database.execute_sql("SELECT pg_backend_pid()").fetchone()[0] != pid
    # inside one: the statement fails with the transaction; the next transaction reconnects at its BEGIN
    pid = database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]
    with pytest.raises((PeeweeException, psycopg.Error)), tx():
        database.execute_sql("SELECT 1")
        kill(pid)
        database.execute_sql("SELECT 1")
    with tx():
        assert database.execute_sql("SELECT pg_backend_pid()").fetchone()[0] != pid


def test_count_steps_counts_statements_transactions_and_network_requests(settings, monkeypatch):  # type: ignore[no-untyped-def]
    """SOCIALPUB_COUNT_STEPS (what bench/burst.py turns on in its worker): every statement of the store's one
    execution path (query objects and SQL text alike), every transaction (a nested atomic is a savepoint, not
    one more) and every request of the adapters' HTTP clients; off, nothing is counted."""
    from backend.services import adapters
    from backend.store.db import STEPS, init_database
    from backend.store.models import Job

    def calls() -> None:
        with tx():
            Job.select().count()
            with tx():  # nested: a savepoint, not a transaction
                database.execute_sql("SELECT 1")
        Job.select().count()  # outside a transaction
        with adapters.network_client(settings, "facebook", "sandbox") as client:  # the emulator, in process
            client.get("https://graph.facebook.com/v26.0/me")  # refused (no token): a request all the same

    monkeypatch.setattr(STEPS, "enabled", False)
    before = STEPS.snapshot()
    calls()
    assert STEPS.snapshot() == before  # off: nothing counted

    monkeypatch.setattr(settings, "count_steps", True)
    init_database(settings)  # turns it on for this process
    assert STEPS.enabled
    before = STEPS.snapshot()
    calls()
    after = STEPS.snapshot()
    assert after["transactions"] - before["transactions"] == 1
    assert after["network_requests"] - before["network_requests"] == 1
    # 2 counts + SELECT 1; a savepoint's SAVEPOINT / RELEASE are statements too
    assert 3 <= after["statements"] - before["statements"] <= 6, (before, after)
