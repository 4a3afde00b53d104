"""Shared fixtures. The API suite runs on SQLite (default) and on PostgreSQL (`--db=postgres` or
SOCIALPUB_TEST_DB=postgres): a throwaway server is started from Debian's packages on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("SOCIALPUB_LOG_LEVEL", "WARNING")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        default=os.environ.get("SOCIALPUB_TEST_DB", "sqlite"),
        choices=["sqlite", "postgres"],
        help="store to run the suite on",
    )


def pytest_report_header(config: pytest.Config) -> str:
    return f"socialpub store under test: {config.getoption('--db')}"


def _pg_unavailable(exc: Exception) -> str:
    return f"\n\n*** PostgreSQL IS NOT AVAILABLE: {exc} ***\n*** the PostgreSQL suite did NOT run ***\n"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """On PostgreSQL, with no server given, fail at once when no server binaries are installed: before pytest-xdist
    starts its workers (each would otherwise find out on its own, as an error per test)."""
    config = session.config
    if (
        config.getoption("--db") != "postgres"
        or os.environ.get("SOCIALPUB_TEST_DATABASE_URL")
        or os.environ.get("PYTEST_XDIST_WORKER")
        or config.getoption("--collect-only")
    ):
        return
    from tests.support import pgserver

    try:
        pgserver.bindir()
    except pgserver.PostgresUnavailable as exc:
        pytest.exit(_pg_unavailable(exc), returncode=3)


@pytest.fixture(scope="session")
def db_kind(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--db")


@pytest.fixture(scope="session")
def pg_url(db_kind: str) -> Iterator[str | None]:
    """The PostgreSQL database of this session. Under pytest-xdist (`make test` runs `-n`) a session is one worker:
    each worker starts a throwaway server of its own, or, given SOCIALPUB_TEST_DATABASE_URL, makes a database of its
    own on that server (`<database>_gw0`, …), so no two workers ever share a store."""
    if db_kind != "postgres":
        yield None
        return
    from tests.support import pgserver

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    url = os.environ.get("SOCIALPUB_TEST_DATABASE_URL")
    if url:
        if worker is None:
            yield url
            return
        own = pgserver.database_for_worker(url, worker)
        try:
            yield own
        finally:
            pgserver.drop_database(own)
        return
    try:
        server = pgserver.start()
    except pgserver.PostgresUnavailable as exc:
        if (
            worker is not None
        ):  # pytest.exit in a worker is an INTERNALERROR that hides the reason: every test errors
            pytest.fail(_pg_unavailable(exc), pytrace=False)
        pytest.exit(_pg_unavailable(exc), returncode=3)
    try:
        yield server.url
    finally:
        server.stop()


def _truncate_all() -> None:
    from backend.store.db import database
    from tests.support.store import truncate_all_tables

    truncate_all_tables(database.obj, keep=("schema_migration", "emulator_migration"))


@pytest.fixture
def settings(tmp_path: Path, pg_url: str | None, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Settings for one test: a fresh data dir, a clean store, zero sandbox delays, short retries."""
    from backend.config import Settings, get_settings
    from backend.services import encryption, security
    from backend.store.db import init_database

    data_dir = tmp_path / "data"
    monkeypatch.setenv("SOCIALPUB_DATA_DIR", str(data_dir))
    if pg_url:
        monkeypatch.setenv("SOCIALPUB_DATABASE_URL", pg_url)
    else:
        monkeypatch.delenv("SOCIALPUB_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    s = Settings(
        data_dir=data_dir,
        database_url=pg_url,
        base_url="http://testserver",
        sandbox_delay_s=0,
        sandbox_processing_s=0,
        retry_base_s=0.01,
        worker_poll_s=0.05,
    )
    init_database(s)
    if pg_url:
        _truncate_all()
    security.ensure_secret(s)
    encryption.ensure_key(s)  # as init does: the secrets key is made there, never by a write
    yield s
    get_settings.cache_clear()


@pytest.fixture
def app(settings):  # type: ignore[no-untyped-def]
    from backend.api.app import create_app

    return create_app(settings)


@pytest.fixture
def audited_tiktok_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """An audited TikTok app through the environment only (for processes the test starts)."""
    monkeypatch.setenv("SOCIALPUB_TIKTOK_AUDITED", "true")
    monkeypatch.setenv("SOCIALPUB_SANDBOX_APPS", '{"tiktok": {"audited": true}}')


@pytest.fixture
def audited_tiktok(settings, audited_tiktok_env):  # type: ignore[no-untyped-def]
    """For tests not about TikTok's audit: an audited TikTok app — socialpub's SOCIALPUB_TIKTOK_AUDITED and the
    emulated app's `audited`. The default (a new, unaudited app) and its refusals are
    tests/networks/test_tiktok_fidelity.py's. Posts to TikTok still carry the creator's privacy choice."""
    settings.sandbox_apps = {**settings.sandbox_apps, "tiktok": {"audited": True}}
    return settings


@pytest.fixture
def client(app):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


class Owner(dict):
    """The result of creating a workspace: workspace_id, api_key, session_token, email, password."""

    def __getattr__(self, name: str) -> Any:
        return self[name]


def make_owner(
    settings,
    name: str = "Test workspace",
    email: str = "owner@test.local",  # type: ignore[no-untyped-def]
    password: str = "correct horse battery",
) -> Owner:
    from backend.services import bootstrap

    created = bootstrap.create_workspace(settings, name, email, password)
    return Owner(
        workspace_id=created.workspace_id,
        api_key=created.api_key,
        api_key_id=created.api_key_id,
        session_token=created.session_token,
        email=email,
        password=password,
        owner_id=created.owner_id,
    )


@pytest.fixture
def owner(settings) -> Owner:  # type: ignore[no-untyped-def]
    return make_owner(settings)


@pytest.fixture
def other_owner(settings) -> Owner:  # type: ignore[no-untyped-def]
    return make_owner(settings, "Other workspace", "other@test.local")


def key_headers(key: str) -> dict[str, str]:
    return {"x-api-key": key}


def session_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
