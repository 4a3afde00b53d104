"""Security review: secrets never in repr, logs, error messages or files readable by others."""

from __future__ import annotations

import os

from backend.config import Settings


def test_settings_repr_hides_every_secret() -> None:
    s = Settings(
        database_url="postgresql://app:hunter2-db-pw@db.internal/socialpub",
        secret_key="k" * 40 + "SIGNING",
        s3_access_key_id="AKIA-S3-ID",
        s3_secret_access_key="S3-SECRET-VALUE",
    )
    text = repr(s) + str(s)
    for secret in ("hunter2-db-pw", "SIGNING", "AKIA-S3-ID", "S3-SECRET-VALUE"):
        assert secret not in text
    assert s.database_url == "postgresql://app:hunter2-db-pw@db.internal/socialpub"  # still usable


def test_session_secret_file_is_private(settings) -> None:  # type: ignore[no-untyped-def]
    from backend.services import security

    assert os.stat(security.secret_path(settings)).st_mode & 0o077 == 0


def test_new_sqlite_data_dir_and_database_are_private(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The SQLite file holds the networks' access tokens and the password hashes: other local users must not
    read it (the session secret next to it is 0600 already)."""
    from backend.store.db import make_database

    settings = Settings(data_dir=tmp_path / "fresh" / "data", database_url=None)
    db = make_database(settings)
    db.connect()
    db.execute_sql("CREATE TABLE t (x)")
    db.close()
    assert os.stat(settings.data_dir).st_mode & 0o077 == 0
    assert os.stat(settings.sqlite_path).st_mode & 0o077 == 0
