"""A throwaway PostgreSQL server on loopback, from Debian's packages (initdb refuses root: run as `postgres`)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


class PostgresUnavailable(RuntimeError):
    pass


def bindir() -> Path:
    env = os.environ.get("SOCIALPUB_PG_BINDIR")
    if env:
        if not Path(env, "initdb").exists():
            raise PostgresUnavailable(f"SOCIALPUB_PG_BINDIR={env} has no initdb")
        return Path(env)
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True
    )
    for c in candidates:
        if Path(c, "initdb").exists() and Path(c, "pg_ctl").exists():
            return Path(c)
    which = shutil.which("pg_ctl")
    if which:
        return Path(which).parent
    raise PostgresUnavailable("no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgServer:
    url: str
    datadir: Path
    bindir: Path
    as_user: list[str]

    def stop(self) -> None:
        if (self.datadir / "postmaster.pid").exists():  # a server was started there
            subprocess.run(
                [
                    *self.as_user,
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.datadir),
                    "-m",
                    "immediate",
                    "stop",
                ],
                capture_output=True,
                timeout=60,
            )
        shutil.rmtree(self.datadir.parent, ignore_errors=True)


def start(attempts: int = 3) -> PgServer:
    """initdb + pg_ctl start on 127.0.0.1:<free port>; returns the URL of a fresh database.

    Each pytest-xdist worker starts its own server (the fixture `pg_url` is per session, i.e. per worker). The port
    is picked free, then given to the server: another process may take it in between, so a server that could not
    bind it is started again on another port. Nothing is left behind when it fails."""
    bins = bindir()
    base = Path(tempfile.mkdtemp(prefix="socialpub-pg-"))
    server = PgServer("", base / "data", bins, [])
    try:
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                raise PostgresUnavailable("running as root and `runuser` is missing")
            server.as_user = [runuser, "-u", "postgres", "--"]
            shutil.chown(base, "postgres", "postgres")
            os.chmod(base, 0o700)
        r = subprocess.run(
            [
                *server.as_user,
                str(bins / "initdb"),
                "-D",
                str(server.datadir),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
        if r.returncode != 0:
            raise PostgresUnavailable(f"initdb failed: {r.stderr.strip()[-500:]}")
        for attempt in range(1, attempts + 1):
            port = _free_port()
            opts = (
                f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off -c synchronous_commit=off "
                f"-c full_page_writes=off -c max_connections=200"
            )
            log_file = base / f"log.{attempt}"
            r = subprocess.run(
                [
                    *server.as_user,
                    str(bins / "pg_ctl"),
                    "-D",
                    str(server.datadir),
                    "-o",
                    opts,
                    "-l",
                    str(log_file),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if r.returncode == 0:
                break
            log = log_file.read_text()[-800:] if log_file.exists() else ""
            if "could not bind" in log and attempt < attempts:
                continue  # the port was taken after we picked it
            raise PostgresUnavailable(f"pg_ctl start failed: {r.stderr.strip()[-300:]} {log}")
        import psycopg

        deadline = time.time() + 30
        while True:
            try:
                with psycopg.connect(
                    f"host=127.0.0.1 port={port} user=postgres dbname=postgres", autocommit=True
                ) as c:
                    c.execute("CREATE DATABASE socialpub_test")
                break
            except psycopg.OperationalError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
    except BaseException:
        server.stop()  # stops a server that did start; removes the directory
        raise
    server.url = f"postgresql://postgres@127.0.0.1:{port}/socialpub_test"
    return server


def database_for_worker(url: str, worker: str) -> str:
    """A database of its own for one pytest-xdist worker on the server at `url` (SOCIALPUB_TEST_DATABASE_URL):
    `<database>_<worker>`, dropped and created anew; returns its URL."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{worker}"
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return urlunsplit(parts._replace(path=f"/{name}"))


def drop_database(url: str) -> None:
    """Drop the database of `url` (made by `database_for_worker`), connected to the server's `postgres` database."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as c:
        c.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(parts.path.lstrip("/")))
        )


if __name__ == "__main__":  # manual use: python -m tests.support.pgserver
    srv = start()
    print(srv.url)
    try:
        input("PostgreSQL running; press Enter to stop\n")
    finally:
        srv.stop()
