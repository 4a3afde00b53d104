"""Issue recon10: one publication of an account is held by at most one target.

`post_target_account_external`: UNIQUE (account_id, external_post_id) where external_post_id is not null. A
reconciliation matches the account's listing by text, which cannot tell apart two targets of one caption published
in the same minutes; the engine excludes the publications other targets hold, and this index decides the races that
exclusion cannot see (two reconciliations at once taking one publication): the second write is refused, and its
target stays ambiguous and is checked again. No legitimate case gives two targets of one account one id: a post
names an account once (`duplicate_target`), and every network's id of a publication is its own (TikTok's inbox
delivery: its publish_id).

`post_target_account_completed` (account_id, completed_at) where external_post_id is not null, and
`post_target_account_publishing` (account_id) where status is 'publishing': what a reconciliation reads of the
account's other targets (the ids they took since its attempt began, and the calls still under way) in one bounded
index read.

A store written before this index may hold one publication on two targets of an account (the bug this closes):
every such target but the first to complete is left without the id (its post_url kept) and carries a warning
`reconciliation_shared_publication` saying that it may never have been published, so the index can be made."""

from __future__ import annotations

from typing import Any

from peewee import CharField, Database, JSONField, Model
from playhouse.migrate import SchemaMigrator

UNIQUE = "post_target_account_external"
_INDEXES = {
    UNIQUE: ("UNIQUE INDEX", '("account_id", "external_post_id") WHERE "external_post_id" IS NOT NULL'),
    "post_target_account_completed": (
        "INDEX",
        '("account_id", "completed_at") WHERE "external_post_id" IS NOT NULL',
    ),
    "post_target_account_publishing": ("INDEX", '("account_id") WHERE "status" = \'publishing\''),
}
WARNING = {
    "code": "reconciliation_shared_publication",
    "message": "this target was recorded as published with a publication another target of the account holds "
    "(an interrupted attempt reconciled by its text, before socialpub 0053): it may never have been "
    "published. Check the account and post it again if it is missing",
}


# every target holding a publication that a target of its account completed earlier holds too
_SHARED = (
    "SELECT t.id FROM post_target AS t WHERE t.external_post_id IS NOT NULL AND EXISTS ("
    "SELECT 1 FROM post_target AS o WHERE o.account_id = t.account_id "
    "AND o.external_post_id = t.external_post_id AND o.id <> t.id AND ("
    "COALESCE(o.completed_at, o.updated_at) < COALESCE(t.completed_at, t.updated_at) "
    "OR (COALESCE(o.completed_at, o.updated_at) = COALESCE(t.completed_at, t.updated_at) AND o.id < t.id)))"
)


def _sql(db: Database, sql: str) -> Any:
    return db.execute_sql(sql)  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs


def _unshare(db: Database) -> None:
    """Every target but the first of an account to hold one publication left without it, warned (see above)."""

    class Target(Model):  # post_target, as far as this needs it
        id = CharField(primary_key=True, max_length=40)
        external_post_id = CharField(max_length=300, null=True)
        warnings = JSONField(null=True)

        class Meta:
            database = db
            table_name = "post_target"

    for (target_id,) in _sql(db, _SHARED).fetchall():
        row = Target.get_by_id(target_id)
        kept = [w for w in row.warnings or [] if w.get("code") != WARNING["code"]]
        Target.update(external_post_id=None, warnings=[*kept, WARNING]).where(
            Target.id == target_id
        ).execute()


def up(migrator: SchemaMigrator, db: Database) -> None:
    existing = {i.name for i in db.get_indexes("post_target")}
    if UNIQUE not in existing:
        _unshare(db)
    for name, (kind, definition) in _INDEXES.items():
        if name not in existing:
            _sql(db, f'CREATE {kind} "{name}" ON "post_target" {definition}')


def down(migrator: SchemaMigrator, db: Database) -> None:
    for name in _INDEXES:
        _sql(db, f'DROP INDEX IF EXISTS "{name}"')
