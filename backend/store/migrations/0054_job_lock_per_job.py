"""Issue 34: `job.locked_by` widened to 160 characters. A claim may take several jobs in one statement
(backend/jobs/worker.py, "Claims"); each job is locked by the claim's name followed by "/" and the job's id, so that
every job of a batch is fenced by a lock of its own (`worker:<host>:<pid>:<n>#<seq>/job_<26>`: up to ~85
characters, over the 80 of 0001). SQLite does not enforce the length."""

from peewee import Database, SqliteDatabase
from playhouse.migrate import SchemaMigrator


def up(migrator: SchemaMigrator, db: Database) -> None:
    if not isinstance(db, SqliteDatabase):
        db.execute_sql('ALTER TABLE "job" ALTER COLUMN "locked_by" TYPE VARCHAR(160)')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs


def down(migrator: SchemaMigrator, db: Database) -> None:
    if not isinstance(db, SqliteDatabase):
        shorter = 'ALTER TABLE "job" ALTER COLUMN "locked_by" TYPE VARCHAR(80) USING left("locked_by", 80)'
        db.execute_sql(shorter)  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
