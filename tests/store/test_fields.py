"""UTCDateTimeField: explicit conversions (no driver default adapter), aware UTC back, text order = time order."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from peewee import CharField, Model, Table

from backend.store.db import database, is_sqlite
from backend.store.fields import UTCDateTimeField


class Stamp(Model):
    name = CharField(primary_key=True)
    at = UTCDateTimeField(null=True)

    class Meta:
        database = database
        table_name = "stamp_test"


@pytest.fixture
def stamps(settings):  # type: ignore[no-untyped-def]
    Stamp.create_table()
    yield Stamp
    Stamp.drop_table()


def _raw(name: str):  # type: ignore[no-untyped-def]
    """The stored value as the driver gives it (no field conversion)."""
    t = Table("stamp_test").bind(database)
    return t.select(t.c.at).where(t.c.name == name).tuples().get()[0]


def test_round_trip_whole_second_aware_and_naive(stamps):
    whole = datetime(2030, 1, 31, 9, 0, 0, tzinfo=UTC)
    paris = datetime(2030, 1, 31, 10, 0, 0, 250, tzinfo=timezone(timedelta(hours=1)))
    naive = datetime(2030, 1, 31, 9, 0, 0, 999999)  # naive: taken as UTC
    stamps.create(name="whole", at=whole)
    stamps.create(name="paris", at=paris)
    stamps.create(name="naive", at=naive)
    stamps.create(name="none", at=None)
    got = {s.name: s.at for s in stamps.select()}
    assert got["whole"] == whole and got["whole"].tzinfo is UTC and got["whole"].microsecond == 0
    assert got["paris"] == paris and got["paris"].tzinfo is UTC and got["paris"].hour == 9
    assert got["naive"] == naive.replace(tzinfo=UTC) and got["naive"].tzinfo is UTC
    assert got["none"] is None
    raw = _raw("whole")
    if is_sqlite():
        assert raw == "2030-01-31 09:00:00.000000"  # fixed width, written by the field itself
        assert _raw("paris") == "2030-01-31 09:00:00.000250"
    else:
        assert raw == datetime(2030, 1, 31, 9, 0)  # a naive UTC timestamp


def test_db_value_is_text_on_sqlite_and_a_naive_datetime_on_postgres(stamps):
    """The driver never adapts a datetime itself (sqlite3's default adapters are deprecated)."""
    value = Stamp.at.db_value(datetime(2030, 1, 1, tzinfo=UTC))
    if is_sqlite():
        assert value == "2030-01-01 00:00:00.000000"
    else:
        assert value == datetime(2030, 1, 1) and value.tzinfo is None


def test_ordering_and_comparisons_across_old_and_new_text(stamps, db_kind):
    """Rows written before (sqlite3's adapter: no fraction when the microsecond is 0, or a '+00:00' suffix)
    read back right, and after migration 0013 compare exactly with rows written now."""
    if db_kind != "sqlite":
        pytest.skip("text storage is SQLite's")
    t = Table("stamp_test").bind(database)
    t.insert(
        [
            ("old-whole", "2030-01-31 09:00:00"),
            ("old-frac", "2030-01-31 09:00:00.500000"),
            ("old-aware", "2030-01-31 08:59:59.250000+00:00"),
            ("old-aware-whole", "2030-01-31 09:00:01+00:00"),
        ],
        columns=[t.c.name, t.c.at],
    ).execute()
    stamps.create(name="new-before", at=datetime(2030, 1, 31, 8, 59, 59, 999999, tzinfo=UTC))
    stamps.create(name="new-whole", at=datetime(2030, 1, 31, 9, 0, 0, tzinfo=UTC))
    assert Stamp.get_by_id("old-whole").at == datetime(2030, 1, 31, 9, 0, tzinfo=UTC)
    assert Stamp.get_by_id("old-aware").at == datetime(2030, 1, 31, 8, 59, 59, 250000, tzinfo=UTC)
    assert Stamp.get_by_id("old-aware-whole").at == datetime(2030, 1, 31, 9, 0, 1, tzinfo=UTC)

    migration = importlib.import_module("backend.store.migrations.0013_datetime_text")
    migration.up(None, database.obj)
    migration.up(None, database.obj)  # idempotent
    assert _raw("old-whole") == "2030-01-31 09:00:00.000000"
    assert _raw("old-aware") == "2030-01-31 08:59:59.250000"
    assert _raw("old-aware-whole") == "2030-01-31 09:00:01.000000"

    order = [s.name for s in Stamp.select().where(Stamp.at.is_null(False)).order_by(Stamp.at, Stamp.name)]
    assert order == ["old-aware", "new-before", "new-whole", "old-whole", "old-frac", "old-aware-whole"]
    nine = datetime(2030, 1, 31, 9, 0, tzinfo=UTC)
    assert {s.name for s in Stamp.select().where(Stamp.at == nine)} == {"new-whole", "old-whole"}
    assert {s.name for s in Stamp.select().where(Stamp.at <= nine)} == {
        "old-aware",
        "new-before",
        "new-whole",
        "old-whole",
    }
    assert {s.name for s in Stamp.select().where(Stamp.at >= nine)} == {
        "new-whole",
        "old-whole",
        "old-frac",
        "old-aware-whole",
    }


def test_ordering_of_new_rows_is_time_order(stamps):
    base = datetime(2030, 6, 1, 12, 0, tzinfo=UTC)
    deltas = [
        timedelta(microseconds=1),
        timedelta(0),
        timedelta(seconds=1),
        timedelta(microseconds=999999),
        timedelta(microseconds=100000),
        timedelta(days=-1),
    ]
    for i, d in enumerate(deltas):
        stamps.create(name=f"s{i}", at=base + d)
    got = [s.at for s in Stamp.select().order_by(Stamp.at)]
    assert got == sorted(base + d for d in deltas)


def test_no_datetime_reaches_the_sqlite_driver(settings, db_kind, monkeypatch):
    """Writes and comparisons of date-time columns never lean on sqlite3's (deprecated) default adapter."""
    import sqlite3

    from backend import clock
    from backend.services import bootstrap, keys
    from backend.store.models import ApiKey

    if db_kind != "sqlite":
        pytest.skip("the sqlite3 driver's adapters")

    def refuse(value):  # type: ignore[no-untyped-def]
        raise AssertionError(f"a datetime reached the sqlite3 driver: {value!r}")

    sqlite3.register_adapter(datetime, refuse)
    try:
        created = bootstrap.create_workspace(settings, "ws", "adapters@test.local", "password123")
        key = keys.authenticate(created.api_key)
        assert key.last_used_at is not None
        assert ApiKey.select().where(ApiKey.created_at <= clock.now()).count() == 1
    finally:
        sqlite3.register_adapter(datetime, lambda d: d.isoformat(" "))  # sqlite3's own default
