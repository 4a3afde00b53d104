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


class PostgresUnavailable(RuntimeError):
    pass


def _bindir() -> Path:
    env = os.environ.get("SOCIALPUB_PG_BINDIR")
    if env:
        return Path(env)
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True)
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
        subprocess.run([*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "immediate",
                        "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.datadir.parent, ignore_errors=True)


def start() -> PgServer:
    """initdb + pg_ctl start on 127.0.0.1:<free port>; returns the URL of a fresh database."""
    bindir = _bindir()
    base = Path(tempfile.mkdtemp(prefix="socialpub-pg-"))
    datadir = base / "data"
    as_user: list[str] = []
    if os.geteuid() == 0:
        runuser = shutil.which("runuser")
        if runuser is None:
            raise PostgresUnavailable("running as root and `runuser` is missing")
        as_user = [runuser, "-u", "postgres", "--"]
        shutil.chown(base, "postgres", "postgres")
        os.chmod(base, 0o700)
    port = _free_port()
    r = subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(datadir), "-A", "trust", "-U", "postgres",
                        "-E", "UTF8", "--no-sync"], capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        raise PostgresUnavailable(f"initdb failed: {r.stderr.strip()[-500:]}")
    opts = (f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off -c synchronous_commit=off "
            f"-c full_page_writes=off -c max_connections=200")
    r = subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(datadir), "-o", opts, "-l",
                        str(base / "log"), "-w", "-t", "60", "start"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        log = (base / "log").read_text()[-800:] if (base / "log").exists() else ""
        raise PostgresUnavailable(f"pg_ctl start failed: {r.stderr.strip()[-300:]} {log}")
    import psycopg

    deadline = time.time() + 30
    while True:
        try:
            with psycopg.connect(f"host=127.0.0.1 port={port} user=postgres dbname=postgres", autocommit=True) as c:
                c.execute("CREATE DATABASE socialpub_test")
            break
        except psycopg.OperationalError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    return PgServer(f"postgresql://postgres@127.0.0.1:{port}/socialpub_test", datadir, bindir, as_user)


if __name__ == "__main__":  # manual use: python -m tests.support.pgserver
    srv = start()
    print(srv.url)
    try:
        input("PostgreSQL running; press Enter to stop\n")
    finally:
        srv.stop()
