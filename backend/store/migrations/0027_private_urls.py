"""Issue 33 item 1: `instance_setting`, the facts of a data dir (its database) that every process opening it
applies alike — the embedded TUI's worker, a CLI command, `serve`, `worker` — rather than environment variables that
may differ from one process to the next. First: `private_urls` (whether the media fetcher and webhook deliveries may
reach loopback and private addresses; `socialpub admin private-urls`). And `webhook_delivery.refused_by`: the setting
that refused a delivery (`private-urls`), so the log says which setting to change rather than blaming the endpoint."""

from peewee import CharField, Database, DateTimeField, Model, TextField
from playhouse.migrate import SchemaMigrator


def _columns(db: Database, table: str) -> set[str]:
    return {c.name for c in db.get_columns(table)}


def up(migrator: SchemaMigrator, db: Database) -> None:
    class InstanceSetting(Model):
        key = CharField(primary_key=True, max_length=60)
        value = TextField()
        updated_at = DateTimeField()

        class Meta:
            database = db
            table_name = "instance_setting"

    db.create_tables([InstanceSetting], safe=True)
    if "refused_by" not in _columns(db, "webhook_delivery"):
        migrator.migrate(
            migrator.add_column("webhook_delivery", "refused_by", CharField(max_length=40, null=True))
        )


def down(migrator: SchemaMigrator, db: Database) -> None:
    if "refused_by" in _columns(db, "webhook_delivery"):
        migrator.migrate(migrator.drop_column("webhook_delivery", "refused_by"))
    db.execute_sql('DROP TABLE IF EXISTS "instance_setting"')  # type: ignore[no-untyped-call]  # peewee: Database.execute_sql is untyped in its stubs
