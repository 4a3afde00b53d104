"""Statement shapes (backend/store/shapes.py): a peewee query rendered once per kind of database and executed with
new values through the store's one execution path, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from peewee import fn

from backend.queue import JobStatus, enqueue
from backend.store import db as store_db
from backend.store.db import STEPS, database, locked, tx
from backend.store.models import Job, Media, MediaHold, Post, PostLabel
from backend.store.shapes import InsertShape, ListShape, Shape, Slot, insert_shape, list_length


@pytest.fixture
def counted(settings, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(STEPS, "enabled", True)
    return STEPS


def _jobs(n: int) -> list[Job]:
    base = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    with tx():
        return [enqueue("test.shape", {"i": i}, run_at=base + timedelta(minutes=i)) for i in range(n)]


def test_a_shape_is_rendered_once_and_bound_with_each_execution_s_values(counted):
    jobs = _jobs(3)
    by_id = Shape(lambda: Job.select(Job.id, Job.run_at, Job.payload).where(Job.id == Slot("id")).limit(1))
    before = counted.snapshot()
    rows = [by_id.first(id=j.id) for j in jobs]
    after = counted.snapshot()
    assert [r.id for r in rows] == [j.id for j in jobs]
    assert [r.payload for r in rows] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert rows[1].run_at == datetime(2026, 1, 1, 12, 1, 0, 123456, tzinfo=UTC)  # peewee's row decoding
    assert after["rendered_statements"] - before["rendered_statements"] == 1
    assert after["once_rendered_statements"] - before["once_rendered_statements"] == 2
    assert after["statements"] - before["statements"] == 3
    assert by_id.first(id="job_none") is None


def test_a_slot_takes_its_field_s_conversion(counted):
    """A datetime compared to a UTCDateTimeField is bound as the field stores it (SQLite: fixed-width text), so a
    shape finds what the same peewee query finds, whatever the values."""
    _jobs(5)
    due = Shape(lambda: Job.select(Job.id).where(Job.run_at <= Slot("now")).order_by(Job.run_at))
    for minutes in (-1, 0, 2, 10):
        now = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC) + timedelta(minutes=minutes)
        plain = [j.id for j in Job.select(Job.id).where(Job.run_at <= now).order_by(Job.run_at)]
        assert [j.id for j in due.rows(now=now)] == plain


def test_an_update_shape_writes_what_the_same_peewee_update_writes(counted):
    a, b = _jobs(2)
    at = datetime(2026, 2, 3, 4, 5, 6, 7, tzinfo=UTC)
    done = Shape(
        lambda: Job.update(
            status=JobStatus.DONE, lease_until=None, updated_at=Slot("at", Job.updated_at), last_error=None
        ).where((Job.id == Slot("id")) & (Job.status == JobStatus.QUEUED))
    )
    with tx():
        assert done.run(id=a.id, at=at) == 1
        Job.update(status=JobStatus.DONE, lease_until=None, updated_at=at, last_error=None).where(
            Job.id == b.id
        ).execute()
    assert done.run(id=a.id, at=at) == 0  # no longer queued
    raw = {
        r.id: r.stored
        for r in Job.select(Job.id, Job.updated_at.cast("text").alias("stored")).where(
            Job.id.in_([a.id, b.id])
        )
    }
    assert raw[a.id] == raw[b.id]
    assert Job.get_by_id(a.id).updated_at == at


def test_a_locked_shape_is_built_for_each_kind_of_database(counted, db_kind):
    (job,) = _jobs(1)
    held = Shape(lambda: locked(Job.select(Job.status).where(Job.id == Slot("id"))))
    with tx():
        assert held.first(id=job.id).status == JobStatus.QUEUED
    (entry,) = held._entries.values()
    assert entry.rendered is not None
    assert ("FOR UPDATE" in entry.rendered.sql) == (db_kind == "postgres")
    assert [name for _, name, _ in entry.rendered.holes] == ["id"]


def test_a_returning_update_and_an_aggregate(counted):
    jobs = _jobs(3)
    bump = Shape(
        lambda: (
            Job.update(attempts=Job.attempts + Slot("n", Job.attempts))
            .where(Job.kind == Slot("kind"))
            .returning(Job.id, Job.attempts)
        )
    )
    with tx():
        rows = bump.rows(n=2, kind="test.shape")
    assert sorted((r.id, r.attempts) for r in rows) == sorted((j.id, 2) for j in jobs)
    count = Shape(lambda: Job.select(fn.COUNT(Job.id).alias("n")).where(Job.attempts >= Slot("at_least")))
    assert count.first(at_least=2).n == 3
    assert count.first(at_least=3).n == 0


def test_an_insert_cannot_be_a_shape(settings):
    with pytest.raises(TypeError, match="INSERT"):
        Shape(lambda: Job.insert(kind=Slot("kind"))).run(kind="x")


def test_a_query_of_no_shape_is_rendered_each_time_by_the_same_path(counted):
    (job,) = _jobs(1)
    before = counted.snapshot()
    for _ in range(3):
        assert Job.select(Job.id).where(Job.id == job.id).first().id == job.id
    after = counted.snapshot()
    assert after["rendered_statements"] - before["rendered_statements"] == 3
    assert after["once_rendered_statements"] == before["once_rendered_statements"]


def test_a_slot_outside_a_shape_s_execution_is_refused_by_the_driver(settings):
    """A shape's query run as a plain query would bind its Holes: the driver refuses them (no value is guessed)."""
    q = Job.select(Job.id).where(Job.id == Slot("id"))
    with pytest.raises(Exception, match="Hole|type|adapt"):
        q.first()


def test_threads_executing_one_shape_get_their_own_rows(settings):
    jobs = _jobs(8)
    by_id = Shape(lambda: Job.select(Job.id, Job.payload).where(Job.id == Slot("id")))
    errors: list[str] = []

    def run(job: Job) -> None:
        try:
            for _ in range(25):
                (row,) = by_id.rows(id=job.id)
                if row.id != job.id:
                    errors.append(f"{job.id} got {row.id}")
        finally:
            database.close()

    threads = [threading.Thread(target=run, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store_db.ARMED.__dict__.get("statement") is None


def test_a_json_column_s_slot_is_bound_as_a_parameter(counted, db_kind):
    """SQLite writes a JSON value as `json(?)`: the shape keeps that SQL and binds the value's JSON text, so it stores
    what peewee's own UPDATE stores; PostgreSQL binds the field's parameter."""
    a, b = _jobs(2)
    payload = Shape(lambda: Job.update(payload=Slot("payload", Job.payload)).where(Job.id == Slot("id")))
    value = {"a": [1, "é", None], "b": {"c": True}}
    with tx():
        assert payload.run(payload=value, id=a.id) == 1
        Job.update(payload=value).where(Job.id == b.id).execute()
    (entry,) = payload._entries.values()
    assert entry.rendered is not None
    assert ("json(?)" in entry.rendered.sql) == (db_kind == "sqlite")
    assert Job.get_by_id(a.id).payload == value
    stored = {r.id: r.stored for r in Job.select(Job.id, Job.payload.cast("text").alias("stored"))}
    assert stored[a.id] == stored[b.id]


def test_a_column_whose_value_becomes_sql_cannot_be_a_slot(settings):
    """A value bound into a shape must be a parameter: a conversion that makes SQL of it is refused."""
    (job,) = _jobs(1)
    raw = Shape(lambda: Job.update(last_error=Slot("error")).where(Job.id == Slot("id")))
    with pytest.raises(TypeError, match="cannot be a Slot"):
        raw.run(error=fn.lower("x"), id=job.id)


def test_an_insert_shape_writes_what_peewee_s_insert_writes_with_each_row_s_defaults(counted, db_kind):
    now = datetime(2026, 3, 4, 5, 6, 7, 89, tzinfo=UTC)
    insert = InsertShape(Job, rows=2)
    rows = [
        {"id": f"job_shape{i}", "kind": "test.insert", "run_at": now, "created_at": now, "updated_at": now}
        for i in range(4)
    ]
    rows[1]["payload"] = {"n": [1, 2], "t": "é"}
    before = counted.snapshot()
    with tx():
        insert.insert(rows[:2])
        insert.insert(rows[2:])
        Job.insert(id="job_plain", kind="test.insert", run_at=now, created_at=now, updated_at=now).execute()
    after = counted.snapshot()
    assert after["once_rendered_statements"] - before["once_rendered_statements"] == 1
    got = {j.id: j for j in Job.select().where(Job.kind == "test.insert")}
    plain = got.pop("job_plain")
    assert sorted(got) == [f"job_shape{i}" for i in range(4)]
    for i, j in enumerate(sorted(got.values(), key=lambda j: j.id)):
        assert j.payload == (
            {"n": [1, 2], "t": "é"} if i == 1 else {}
        )  # a callable default, each row its own
        assert (j.status, j.attempts, j.max_attempts, j.run_at) == (
            plain.status,
            plain.attempts,
            plain.max_attempts,
            plain.run_at,
        )
        assert (j.lease_until, j.locked_by, j.dedupe_key, j.lane) == (None, None, None, None)
    (entry,) = insert._entries.values()
    assert entry.rendered is not None and "INSERT" in entry.rendered.sql


def test_an_insert_shape_if_absent_skips_a_row_whose_key_exists(settings):
    now = datetime(2026, 3, 4, tzinfo=UTC)
    insert = InsertShape(Job, rows=1, if_absent=True)

    def row(i: int) -> dict[str, object]:
        return dict(id=f"job_k{i}", kind="k", run_at=now, created_at=now, updated_at=now, dedupe_key="only")

    with tx():
        assert insert.insert([row(1)]) == 1
        assert insert.insert([row(2)]) == 0  # skipped: the key is taken
    assert [j.id for j in Job.select().where(Job.dedupe_key == "only")] == ["job_k1"]
    with pytest.raises(TypeError, match="no field"):
        insert.insert([{**row(3), "nope": 1}])
    with pytest.raises(ValueError, match="1 rows"):
        insert.insert([row(4), row(5)])


def _stored(model: type, key: str) -> dict[str, object]:
    """Every column of a row as the database holds it (cast to text)."""
    fields = model._meta.sorted_fields
    row = (
        model.select(*[f.cast("text").alias(f.name) for f in fields])
        .where(model._meta.primary_key == key)
        .dicts()
        .get()
    )
    return dict(row)


@pytest.mark.parametrize("labels", [None, {"set": "launch", "n": "é"}])
def test_an_insert_shape_stores_a_post_as_peewee_s_insert_does(counted, owner, labels):
    """Every column of a post (JSON lists and objects, a NULL JSON column, a boolean, times) is stored as peewee's
    own INSERT stores it, on SQLite and PostgreSQL; the columns a row leaves out get their defaults."""
    now = datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)

    def post(post_id: str) -> dict[str, object]:
        return dict(
            id=post_id, workspace=owner.workspace_id, status="processing", content="Hé", content_folded="he",
            media_urls=["https://example.test/a.jpg"], options={"facebook": {"link": None}},
            scheduled_at=now, idempotency_key=None, free_publication=True, labels=labels, created_at=now,
            updated_at=now,
        )  # fmt: skip

    with tx():
        assert insert_shape(Post).insert([post("post_shape")]) == 1
        Post.insert(post("post_plain")).execute()
    shape, plain = _stored(Post, "post_shape"), _stored(Post, "post_plain")
    assert shape.pop("id") == "post_shape" and plain.pop("id") == "post_plain"
    assert shape == plain
    assert Post.get_by_id("post_shape").labels == labels


def test_an_insert_shape_leaves_an_auto_incremented_key_to_the_database(counted, owner):
    """A model numbered by the database (PostLabel's id): the shape leaves the column out, as peewee does, so
    PostgreSQL's sequence numbers the rows (a NULL id would break its NOT NULL)."""
    now = datetime(2026, 5, 6, tzinfo=UTC)
    with tx():
        Post.insert(
            id="post_l", workspace=owner.workspace_id, status="processing", content="x", created_at=now,
            updated_at=now,
        ).execute()  # fmt: skip
        rows = [
            {"post": "post_l", "workspace": owner.workspace_id, "key": f"k{i}", "value": "v"}
            for i in range(4)
        ]
        assert insert_shape(PostLabel, 2).insert(rows[:2]) == 2
        assert insert_shape(PostLabel, 2).insert(rows[2:]) == 2
    entry = next(iter(insert_shape(PostLabel, 2)._entries.values()))
    assert entry.rendered is not None and '"id"' not in entry.rendered.sql
    got = list(PostLabel.select().where(PostLabel.post == "post_l").order_by(PostLabel.key))
    assert [label.key for label in got] == ["k0", "k1", "k2", "k3"]
    assert len({label.id for label in got}) == 4 and all(isinstance(label.id, int) for label in got)
    assert insert_shape(PostLabel, 2) is insert_shape(PostLabel, 2)  # one shape per model and number of rows
    assert insert_shape(PostLabel, 2) is not insert_shape(PostLabel, 3)


def test_a_list_shape_is_a_shape_per_power_of_two_finding_what_peewee_s_in_finds(counted):
    """An IN list's length is part of the SQL: a ListShape renders one statement per length rounded up to a power of
    two, padding the list with its last value; it finds what peewee's own IN finds, for every length."""
    jobs = _jobs(6)
    ids = [j.id for j in jobs]
    of_ids = ListShape(
        "ids", lambda items: Job.select(Job.id).where(Job.id.in_(items) & (Job.status == Slot("status")))
    )
    assert [list_length(n) for n in (0, 1, 2, 3, 4, 5, 8, 9)] == [0, 1, 2, 4, 4, 8, 8, 16]
    before = counted.snapshot()
    for n in range(7):
        wanted = ids[:n] + ["job_none"] * (n == 6)
        got = sorted(j.id for j in of_ids.rows(ids=wanted, status=JobStatus.QUEUED))
        assert got == sorted(j.id for j in Job.select(Job.id).where(Job.id.in_(wanted)))
    middle = counted.snapshot()
    rendered = middle["rendered_statements"] - before["rendered_statements"]
    assert rendered == 7 + 5  # peewee's IN each time + a shape of 0, 1, 2, 4 and 8 items
    for n in range(7):
        assert len(of_ids.rows(ids=ids[:n], status=JobStatus.QUEUED)) == n
        assert of_ids.rows(ids=ids[:n], status=JobStatus.DONE) == []
    after = counted.snapshot()
    assert after["rendered_statements"] == middle["rendered_statements"]  # no length renders again
    assert after["once_rendered_statements"] - middle["once_rendered_statements"] == 14


def test_a_list_shape_update_changes_each_listed_row_once(counted, db_kind):
    jobs = _jobs(3)
    at = datetime(2026, 3, 4, 5, 6, 7, 8, tzinfo=UTC)
    touch = ListShape(
        "ids",
        lambda items: (
            Job.update(updated_at=Slot("at", Job.updated_at)).where(Job.id.in_(items)).returning(Job.id)
        ),
    )
    with tx():
        got = {row.id for row in touch.rows(ids=[jobs[0].id, jobs[2].id, jobs[0].id], at=at)}
    assert got == {jobs[0].id, jobs[2].id}  # padded to 4 items: the last one repeated, each row changed once
    assert [Job.get_by_id(j.id).updated_at == at for j in jobs] == [True, False, True]


def test_an_upsert_shape_replaces_the_named_columns_of_a_row_whose_key_exists(counted, db_kind, owner):
    """The post's media holds: one upsert on (media, ref) whose `until` replaces the hold's, as peewee's
    on_conflict(update={until: EXCLUDED.until}) does, on SQLite and PostgreSQL."""
    now = datetime(2026, 5, 6, tzinfo=UTC)
    with tx():
        for i in range(2):
            Media.insert(
                id=f"med_{i}", workspace=owner.workspace_id, key=f"med_{i}_k.png", type="image",
                mime_type="image/png", bytes=1, sha256="0" * 64, origin="upload", created_at=now,
            ).execute()  # fmt: skip
    upsert = insert_shape(MediaHold, 2, conflict=(MediaHold.media, MediaHold.ref), replace=(MediaHold.until,))
    assert upsert is insert_shape(
        MediaHold, 2, conflict=(MediaHold.media, MediaHold.ref), replace=(MediaHold.until,)
    )
    later = now + timedelta(days=3)
    with tx():
        upsert.insert(
            [{"media": f"med_{i}", "ref": "post:a", "until": None, "created_at": now} for i in range(2)]
        )
        upsert.insert(
            [
                {"media": "med_0", "ref": "post:a", "until": later, "created_at": later},
                {"media": "med_1", "ref": "post:b", "until": None, "created_at": later},
            ]
        )
    holds = sorted((h.media_id, h.ref, h.until, h.created_at) for h in MediaHold.select())
    assert holds == [
        ("med_0", "post:a", later, now),  # replaced: its until, not its created_at
        ("med_1", "post:a", None, now),
        ("med_1", "post:b", None, later),
    ]
    with pytest.raises(TypeError):
        InsertShape(MediaHold, conflict=(MediaHold.media,))
