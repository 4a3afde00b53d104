"""Issue 32: `network_instance`, the servers of a network made of many (Mastodon instances): the OAuth app
registered on each (client_secret encrypted at rest, `enc:v1:`) and the limits it reported, one row per
(network, host). Frozen copy of backend/store/models/oauth.py NetworkInstance."""

from typing import Any

from peewee import CharField, DateTimeField, JSONField, Model, TextField


def up(migrator: Any, db: Any) -> None:
    class NetworkInstance(Model):
        network = CharField(max_length=20)
        host = CharField(max_length=255)
        client_id = TextField(null=True)
        client_secret = TextField(null=True)
        scopes = TextField(default="")
        redirect_uris = TextField(default="")
        limits = JSONField(null=True)
        limits_read_at = DateTimeField(null=True)
        created_at = DateTimeField()
        updated_at = DateTimeField()

        class Meta:
            database = db
            table_name = "network_instance"
            indexes = ((("network", "host"), True),)

    db.create_tables([NetworkInstance], safe=True)


def down(migrator: Any, db: Any) -> None:
    db.execute_sql("DROP TABLE IF EXISTS network_instance")
