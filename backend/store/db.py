"""Database setup. SQLite (WAL) in the data dir by default; PostgreSQL when SOCIALPUB_DATABASE_URL says so."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from peewee import (
    SQL,
    Database,
    DatabaseProxy,
    Delete,
    Insert,
    InterfaceError,
    Model,
    Node,
    OperationalError,
    PeeweeException,
    PostgresqlDatabase,
    Select,
    SqliteDatabase,
    Table,
    Update,
    fn,
)
from playhouse.migrations import Runner
from playhouse.shortcuts import ReconnectMixin

from backend.config import Settings
from backend.store import secretbox

log = logging.getLogger("socialpub.store")

database = DatabaseProxy()
MIGRATIONS_DIR = Path(__file__).with_name("migrations")


# SQLite's automatic checkpoint (copy the WAL back into the database file, with two fsyncs) runs in the thread
# that commits, every 1000 WAL pages by default: a few ms on the request path every ~35 posts (a post writes
# ~28 pages). The _Checkpointer below does that work in a background thread shortly after commits; the
# automatic one stays, at a higher threshold, as the backstop for when the background checkpoint cannot catch
# up (it never blocks writers, so under sustained writes the WAL can only restart after a complete one).
CHECKPOINT_BACKSTOP_PAGES = 10_000  # ~40 MB of WAL
CHECKPOINT_DELAY_S = 0.1  # commits within this delay share one background checkpoint (and its two fsyncs)
CHECKPOINT_IDLE_S = (
    2.0  # the background thread ends (and closes its connection) after this long without commits
)


def _checkpoint_database(path: str) -> SqliteDatabase:
    """The checkpoint thread's own connection to `path`: never waits for a lock (busy timeout 0); its syncs
    are the app's (synchronous=NORMAL)."""
    return SqliteDatabase(path, timeout=0, pragmas={"synchronous": "normal"}, check_same_thread=False)


class _Checkpointer:
    """PASSIVE checkpoints of one SQLite file in a daemon thread (own connection), woken by commits.

    PASSIVE never waits for and never blocks readers or writers (of this process or others); a checkpoint
    already running elsewhere makes it a no-op. The thread is started by the first commit and ends after
    CHECKPOINT_IDLE_S without any. If the file cannot be checkpointed from here (an error other than a busy
    or locked database), background checkpoints stop for good, with one warning: the backstop remains."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._wake = threading.Event()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def running(self) -> bool:
        """A checkpoint thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def poke(self) -> None:
        """A write was committed (cheap: an attribute read when the thread is already woken)."""
        if self._wake.is_set() or self._stopped:
            return
        self._wake.set()
        if self._thread is None:
            with self._guard:
                if self._thread is None and not self._stopped:
                    self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        db: SqliteDatabase | None = None
        try:
            db = _checkpoint_database(self.path)
            db.connect()
            while self._wake.wait(CHECKPOINT_IDLE_S):
                time.sleep(CHECKPOINT_DELAY_S)
                self._wake.clear()
                try:
                    db.pragma("wal_checkpoint", "PASSIVE")
                except OperationalError as exc:
                    if "locked" not in str(exc) and "busy" not in str(exc):
                        raise  # else: another connection holds the file for now; the next commit retries
        except PeeweeException as exc:
            self._stopped = True
            log.warning(
                "background checkpoints of %s stopped (SQLite's automatic checkpoint remains): %s",
                self.path,
                exc,
            )
        finally:
            with self._guard:
                self._thread = None
            if db is not None:
                db.close()
        if self._wake.is_set():  # woken while ending: start again (unless stopped)
            self._wake.clear()
            self.poke()


class _WriterGate:
    """The in-process writer lock of one SQLite file (see LocalSqliteDatabase), held per thread."""

    def __init__(self, wait_s: float) -> None:
        self._lock = threading.Lock()
        self._holder = threading.local()
        self._wait_s = wait_s

    def take(self) -> None:
        if getattr(self._holder, "held", False):
            return
        self._holder.held = self._lock.acquire(timeout=self._wait_s)

    def give(self) -> None:
        if getattr(self._holder, "held", False):
            self._holder.held = False
            self._lock.release()


class Hole:
    """Where a value given at execution goes in a rendered statement's parameters (backend/store/shapes.py's Slot
    renders as one), and the field's conversion it gets there (`db_value`; None: bound as given)."""

    __slots__ = ("name", "converter")

    def __init__(self, name: str, converter: Any) -> None:
        self.name = name
        self.converter = converter

    def __repr__(self) -> str:
        return f"Hole({self.name!r}): a statement shape's value, bound only by Shape's execution"


class Rendered:
    """A statement shape's SQL text and parameters as peewee rendered them once; `bind` puts new values in its
    holes."""

    __slots__ = ("sql", "params", "holes")

    def __init__(self, sql: str, params: list[Any]) -> None:
        self.sql = sql
        self.params = list(params)
        self.holes = [(i, p.name, p.converter) for i, p in enumerate(self.params) if isinstance(p, Hole)]

    def bind(self, values: dict[str, Any]) -> tuple[str, list[Any]]:
        params = list(self.params)
        for i, name, converter in self.holes:
            value = values[name]
            params[i] = value if converter is None else converter(value)
            if isinstance(params[i], Node):  # e.g. a JSON column on SQLite: its value is written as json(?)
                raise TypeError(
                    f"statement shape value {name!r}: its field turns a value into SQL ({params[i]!r}), not a "
                    "parameter: such a column cannot be a Slot"
                )
        return self.sql, params


# The statement shape the current thread is executing (shapes.Shape sets it around its query's execute(): `query`,
# the clone being run; `entry.rendered`, its SQL once rendered; `values`, what goes in its holes).
ARMED = threading.local()


class _OnceRendered:
    """The store's one execution path for query objects (every peewee query's execute() arrives here): a statement
    of a shape (backend/store/shapes.py) is rendered by peewee the first time on this kind of database, and then
    executed as that SQL text with its new values bound as parameters; any other query is rendered by peewee each
    time. Both end in the same `execute_sql`."""

    def execute(self, query: Any, **context_options: Any) -> Any:
        armed = getattr(ARMED, "statement", None)
        if armed is None or armed.query is not query:
            STEPS.rendered()
            return super().execute(query, **context_options)  # type: ignore[misc]  # a mixin: super() is the peewee Database it is mixed into
        ARMED.statement = None  # one statement per arming
        entry = armed.entry
        if entry.rendered is None:
            sql, params = self.get_sql_context(**context_options).sql(query).query()  # type: ignore[attr-defined]  # a mixin: super() is the peewee Database it is mixed into
            entry.rendered = Rendered(sql, params)
            STEPS.rendered()
        else:
            STEPS.once_rendered()
        sql, params = entry.rendered.bind(armed.values)
        return self.execute_sql(sql, params)  # type: ignore[attr-defined]  # a mixin: super() is the peewee Database it is mixed into


class StepCounts:
    """What this process asked of the store and the networks, when SOCIALPUB_COUNT_STEPS is on (init_database):
    statements (every statement runs through the database's `execute_sql`: query objects, migrations' SQL text),
    of which the query objects rendered by peewee (`rendered_statements`) and those executed from a statement
    shape's SQL rendered once (`once_rendered_statements`, backend/store/shapes.py), transactions (each `begin`: a
    nested `atomic` is a savepoint, not counted), network requests (the adapters' and the OAuth side's HTTP
    clients, backend/services/adapters.py) and the connections those requests opened (`network_connections`: a
    TCP connect seen by httpcore's `trace` request extension; a request on a kept-alive connection opens none).
    Off by default: then a count is one attribute read."""

    def __init__(self) -> None:
        self.enabled = False
        self._lock = threading.Lock()
        self.statements = 0
        self.transactions = 0
        self.network_requests = 0
        self.network_connections = 0
        self.rendered_statements = 0
        self.once_rendered_statements = 0

    def rendered(self) -> None:
        """A query object rendered by peewee (a shape's first execution on a kind of database, or a query of no
        shape)."""
        if self.enabled:
            with self._lock:
                self.rendered_statements += 1

    def once_rendered(self) -> None:
        """A shape's statement executed from its SQL rendered once."""
        if self.enabled:
            with self._lock:
                self.once_rendered_statements += 1

    def statement(self) -> None:
        if self.enabled:
            with self._lock:
                self.statements += 1

    def transaction(self) -> None:
        if self.enabled:
            with self._lock:
                self.transactions += 1

    def network_request(self, request: Any = None) -> None:
        """Also an httpx `request` event hook: the request is counted, and its new connections through its
        `trace` extension (a trace the caller gave still sees every event)."""
        if self.enabled:
            with self._lock:
                self.network_requests += 1
            if request is not None:
                given = request.extensions.get("trace")
                request.extensions["trace"] = self._trace if given is None else _chained(self._trace, given)

    def _trace(self, event: str, _info: dict[str, Any]) -> None:
        """httpcore's trace callback: one `connection.connect_tcp.complete` a connection opened."""
        if event == "connection.connect_tcp.complete":
            with self._lock:
                self.network_connections += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "statements": self.statements,
                "transactions": self.transactions,
                "network_requests": self.network_requests,
                "network_connections": self.network_connections,
                "rendered_statements": self.rendered_statements,
                "once_rendered_statements": self.once_rendered_statements,
            }


def _chained(*callbacks: Any) -> Any:
    """One httpcore trace callback calling each of `callbacks` in turn."""

    def trace(event: str, info: dict[str, Any]) -> None:
        for callback in callbacks:
            callback(event, info)

    return trace


STEPS = StepCounts()


class _CountedSteps:
    """The store's execution path counts its statements and transactions in STEPS (first in the MRO)."""

    def execute_sql(self, sql: str, params: Any = None) -> Any:
        STEPS.statement()
        return super().execute_sql(sql, params)  # type: ignore[misc]  # a mixin: super() is the peewee Database it is mixed into

    def begin(self, *args: Any, **kwargs: Any) -> Any:
        STEPS.transaction()
        return super().begin(*args, **kwargs)  # type: ignore[misc]  # a mixin: super() is the peewee Database it is mixed into


class LocalSqliteDatabase(_CountedSteps, _OnceRendered, SqliteDatabase):
    """SQLite with an in-process writer lock.

    SQLite admits one writer at a time. When threads of one process contend (the worker's job threads, the
    API's threadpool), the losers are parked by SQLite's busy handler, which sleeps in steps of up to 100 ms
    and retries on a timer: a few threads then spend most of their time asleep while the lock is free. A
    threading lock taken for each write transaction (BEGIN IMMEDIATE .. COMMIT/ROLLBACK) and for each
    autocommit write statement queues them instead, and wakes the next one the moment the lock is released.
    Other processes still meet SQLite's own lock and busy timeout. Past `busy_timeout` the lock is given up
    on (not taken) and SQLite decides, as before.

    Checkpoints run in a background thread after commits (_Checkpointer), not in the committing thread.
    Statements given as SQL text (migrations) run their writes inside transactions, which take the lock in
    `begin`.
    """

    def __init__(self, database: str, *, timeout: float = 15, **kwargs: Any) -> None:
        super().__init__(database, timeout=timeout, **kwargs)
        self.writer_gate = _WriterGate(float(timeout))
        self.checkpointer = _Checkpointer(str(self.database))

    def begin(self, lock_type: str | None = None) -> None:
        self.writer_gate.take()
        try:
            super().begin(lock_type)
        except BaseException:
            self.writer_gate.give()
            raise

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.writer_gate.give()
        self.checkpointer.poke()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.writer_gate.give()

    def execute(self, query, **context_options):  # type: ignore[no-untyped-def]  # peewee's Database.execute is untyped
        """Every query object runs here: an INSERT/UPDATE/DELETE outside a transaction takes the writer lock
        for its own statement."""
        if self.in_transaction() or not isinstance(query, Insert | Update | Delete):
            return super().execute(query, **context_options)
        self.writer_gate.take()
        try:
            return super().execute(query, **context_options)
        finally:
            self.writer_gate.give()
            self.checkpointer.poke()

    def close(self) -> bool:
        try:
            return super().close()
        finally:
            self.writer_gate.give()


class ReconnectingPostgresqlDatabase(_CountedSteps, _OnceRendered, ReconnectMixin, PostgresqlDatabase):  # type: ignore[misc]  # playhouse ships no type information: ReconnectMixin is Any
    """PostgreSQL whose thread-local connection is opened anew when the server has closed it: the session idle in
    a transaction past its timeout (a frozen worker, see make_database), a server restart or a failover. Only a
    statement outside a transaction, or the BEGIN of a new one, is retried on a new connection (peewee's
    ReconnectMixin); a statement inside a transaction fails with the transaction, whose writes are then rolled back
    by the server, so nothing is half-applied and the job's own retry or takeover carries on. Without this a
    resumed worker's threads kept their dead connections and failed every job until the process restarted."""

    reconnect_errors = (
        (
            OperationalError,
            "terminating connection",
        ),  # the server ended the session (e.g. idle-in-transaction)
        (OperationalError, "server closed the connection"),
        (OperationalError, "the connection is closed"),  # psycopg 3, once it knows
        (OperationalError, "connection already closed"),
        (InterfaceError, "the connection is closed"),
        (InterfaceError, "connection already closed"),
    )


def make_database(settings: Settings) -> Database:
    if settings.database_url:
        if not settings.is_postgres:
            raise ValueError(
                "SOCIALPUB_DATABASE_URL must start with postgresql:// (or leave it unset for SQLite)"
            )
        u = urlparse(settings.database_url)
        return ReconnectingPostgresqlDatabase(
            unquote(u.path.lstrip("/")) or "postgres",
            user=unquote(u.username) if u.username else None,
            password=unquote(u.password) if u.password else None,
            host=u.hostname or "127.0.0.1",
            port=u.port or 5432,
            prefer_psycopg3=True,
            autorollback=True,
            # A process frozen inside a transaction (SIGSTOP, a paused VM, swap) keeps its row locks, and the job
            # takeover would queue behind them until it resumes: the server ends such a session once it has been
            # idle in a transaction for twice the job lease (at least 5 s; no transaction of ours waits on a
            # network). The frozen worker finds its connection closed and makes no call: the fence reads it first.
            options=f"-c idle_in_transaction_session_timeout={int(max(5.0, 2 * settings.job_lease_s) * 1000)}",
        )
    # The file holds the networks' access tokens and the password hashes: owner-only when we create it
    # (SQLite gives its -wal/-shm files the database file's mode).
    settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(settings.sqlite_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return LocalSqliteDatabase(
        str(settings.sqlite_path),
        pragmas={
            "journal_mode": "wal",
            "synchronous": "normal",
            "foreign_keys": 1,
            "busy_timeout": 15000,
            "cache_size": -32000,
            "wal_autocheckpoint": CHECKPOINT_BACKSTOP_PAGES,  # the backstop; see _Checkpointer
        },
        timeout=15,
        lock_type="IMMEDIATE",  # every write transaction takes the write lock up front: no upgrade deadlocks
        check_same_thread=False,
    )


def store_busy(exc: BaseException) -> bool:
    """Whether `exc` says the store was busy rather than wrong: SQLite's "database is locked" once another process
    held the write lock past the busy timeout (a process frozen inside a write transaction: SIGSTOP, a debugger,
    swap). Nothing about the work itself: trying again once the holder lets go succeeds."""
    return isinstance(exc, OperationalError) and "database is locked" in str(exc)


def is_sqlite() -> bool:
    return isinstance(database.obj, SqliteDatabase)


def local_store() -> bool:
    """Whether the store is a file of this host (SQLite): every process using it runs here (WAL needs one host's
    shared memory) and reads this host's clock, and every transaction holds the database's one writer lock from
    BEGIN (IMMEDIATE), so no other connection commits a write until it ends. PostgreSQL: False (processes on other
    hosts, writers side by side)."""
    return is_sqlite()


def pg_connection_room() -> tuple[int, int]:
    """PostgreSQL: (max_connections, connections open now) of the server."""
    limit = Select(columns=[fn.current_setting("max_connections")]).bind(database).scalar()
    used = Table("pg_stat_activity").select(fn.COUNT(SQL("*"))).bind(database).scalar()
    return int(limit), int(used)


MIGRATION_LOCK_KEY = (
    0x50C1A0  # PostgreSQL: the advisory lock the product's migrations run under (not the sandbox's)
)


@contextlib.contextmanager
def _one_migrator(db: Database) -> Iterator[None]:
    """Migrations run one process at a time: `socialpub serve` and `socialpub worker` (or the TUI) started together
    on a new or just-upgraded data dir each found the same migrations pending and all but one died on the migration
    table's UNIQUE constraint. SQLite: an exclusive lock on the database file's
    directory (no lock file is left behind; one from an older version is removed); PostgreSQL: an advisory
    lock. The next process then finds nothing left to apply. (The sandbox's store, which may import nothing of the
    product, serializes its own migrations the same way.)"""
    if isinstance(db, PostgresqlDatabase):
        db.execute_sql("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        try:
            yield
        finally:
            db.execute_sql("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
        return
    import fcntl

    # The lock is taken on the database's directory (opened read-only; flock works on a directory), so no lock file
    # is left behind, and no descriptor of the database file itself is opened and closed here: closing one would
    # drop the POSIX locks SQLite holds on it in this process.
    fd = os.open(os.path.dirname(os.path.abspath(db.database)) or ".", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{db.database}.migrating")  # the lock file of versions before this one
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def migrate(db: Database | None = None) -> list[str]:
    """Apply pending versioned migrations (backend/store/migrations/NNNN_name.py), one process at a time. Returns
    the applied names."""
    target = db or database.obj
    with _one_migrator(target):
        applied: list[str] = Runner(target, directory=str(MIGRATIONS_DIR), table_name="schema_migration").up()
    for name in applied:
        log.info("migration applied: %s", name)
    return applied


def migration_status(db: Database | None = None) -> list[tuple[str, bool]]:
    runner = Runner(db or database.obj, directory=str(MIGRATIONS_DIR), table_name="schema_migration")
    return [(m.name, m.applied is not None) for m in runner.status()]


def init_database(settings: Settings, *, run_migrations: bool = True) -> Database:
    """Bind the global proxy to the configured database, point the store at the secrets key (read when first
    needed) and bring the schema up to date."""
    global _bound, _settings
    secretbox.configure(settings)
    STEPS.enabled = settings.count_steps
    _settings = settings
    current: Database | None = database.obj
    if current is not None and _bound == (current, _key(settings)):
        return current
    if current is not None and not current.is_closed():
        current.close()
    db = make_database(settings)
    _bound = (db, _key(settings))
    database.initialize(db)
    if run_migrations:
        migrate(db)
    return db


# The database init_database made and the store it reaches (URL or SQLite path).
_bound: tuple[Database, str] | None = None
# The settings init_database was last given, for the migrations that act on what the data dir holds beside the
# database (0030 renames stored media files): a migration is given only the database.
_settings: Settings | None = None


def migration_settings() -> Settings:
    """The settings of the store being migrated (init_database's)."""
    if _settings is None:
        raise RuntimeError("the store was not opened with init_database: no settings for the migrations")
    return _settings


def _key(settings: Settings) -> str:
    return settings.database_url or str(settings.sqlite_path)


def table_models(db: Database, *, exclude: tuple[str, ...] = ()) -> list[type[Model]]:
    """A bare model (no columns) bound to `db` for each of its tables but `exclude`: enough to drop or
    truncate every table, whoever defined it (a migration, another package)."""
    out: list[type[Model]] = []
    for name in db.get_tables():
        if name in exclude:
            continue
        meta = type("Meta", (), {"database": db, "table_name": name, "primary_key": False})
        out.append(type(f"Table_{name}", (Model,), {"Meta": meta}))
    return out


def drop_all_tables(db: Database, *, keep: tuple[str, ...] = ()) -> None:
    """Drop every table of `db` but `keep` (PostgreSQL: CASCADE), migration history included."""
    with db.atomic():
        db.drop_tables(table_models(db, exclude=keep), safe=True, cascade=not isinstance(db, SqliteDatabase))


SelectT = TypeVar("SelectT", bound=Select)


def tx() -> Any:  # peewee's _atomic (a context manager and decorator), untyped in peewee
    """A write transaction (BEGIN IMMEDIATE on SQLite)."""
    return database.atomic()


def locked(query: SelectT) -> SelectT:
    """Row lock for the enclosing transaction: FOR UPDATE on PostgreSQL; on SQLite the
    transaction already holds the write lock (BEGIN IMMEDIATE), which serialises writers."""
    return query if is_sqlite() else query.for_update()
