"""Issue 17 item 2: network tokens and webhook signing secrets are encrypted at rest. The database (the SQLite
file and its WAL; on PostgreSQL every row of every table) holds none of them in clear, the logs neither, the API
returns no token; sandbox publishing and webhook signing work before and after `rotate-key`."""

from __future__ import annotations

import logging

import pytest
from peewee import Table
from standardwebhooks import Webhook

from backend.jobs.worker import Worker
from backend.services import accounts, encryption
from backend.store.db import database, is_sqlite
from backend.store.models import Account, NetworkInstance, WebhookEndpoint
from tests.conftest import key_headers, session_headers
from tests.support.receiver import Receiver


@pytest.fixture
def fast(settings, owner):  # type: ignore[no-untyped-def]
    from backend.services import workspace

    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    settings.rate_limit_per_minute = 1_000_000
    settings.retry_base_s = 0.0
    settings.allow_private_urls = True
    settings.webhook_retry_schedule = "0,0,0"
    settings.webhook_timeout_s = 2.0
    return settings


def _publish_and_deliver(client, owner, settings, rx, ep_secret: str) -> None:  # type: ignore[no-untyped-def]
    before = len(rx.requests)
    r = client.post(
        "/v1/posts",
        json={"targets": ["facebook", "linkedin"], "content": "at rest"},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text
    Worker(settings, concurrency=4).run_until_idle(max_seconds=20, settle_s=0.5)
    got = rx.wait_for(before + 2)[before:]
    assert len(got) == 2
    for req in got:
        event = Webhook(ep_secret).verify(req.body, req.headers)  # signed with the secret the API gave
        assert event["type"] == "publish.completed" and event["data"]["status"] == "succeeded"
    post = client.get(f"/v1/posts/{r.json()['id']}", headers=key_headers(owner.api_key)).json()
    assert post["status"] in ("published", "succeeded", "completed"), post


def _stored_bytes(settings) -> bytes:  # type: ignore[no-untyped-def]
    """Everything the database holds: the SQLite file and its WAL as bytes, or each PostgreSQL row as text."""
    if is_sqlite():
        database.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")
        out = b""
        for suffix in ("", "-wal"):
            p = settings.sqlite_path.with_name(settings.sqlite_path.name + suffix)
            if p.exists():
                out += p.read_bytes()
        return out
    rows = []
    for table in database.get_tables():
        rows += [r[0] for r in database.execute_sql(f'SELECT t::text FROM "{table}" t').fetchall()]
    return "\n".join(rows).encode()


def test_database_holds_no_token_in_clear_and_everything_still_works(settings, client, owner, fast, caplog):
    caplog.set_level(logging.DEBUG)
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    fb = Account.get((Account.workspace == owner.workspace_id) & (Account.platform == "facebook"))
    fb.refresh_token = "refresh-token-of-facebook-0123456789"
    fb.save()
    with Receiver() as rx:
        ep = client.post("/v1/webhooks", json={"url": rx.url}, headers=key_headers(owner.api_key)).json()
        rotated = client.post(f"/v1/webhooks/{ep['id']}/rotate", headers=key_headers(owner.api_key)).json()
        _publish_and_deliver(client, owner, fast, rx, rotated["secret"])

        secrets = [a.access_token for a in Account.select()] + [
            fb.refresh_token,
            ep["secret"],
            rotated["secret"],
        ]
        n = Account.select().count()  # one sandbox account per built-in network
        assert len(secrets) == n + 3 and all(len(s) >= 16 for s in secrets)
        stored = _stored_bytes(fast)
        for s in secrets:
            assert s.encode() not in stored, f"a secret ({s[:8]}…) is stored in clear"
        raw = Table("webhook_endpoint").bind(database)
        assert [
            r
            for r in raw.select(raw.c.secret, raw.c.previous_secret).tuples()
            if not all(v.startswith("enc:v1:") for v in r)
        ] == []

        # the API answers carry no token (accounts' public form)
        listed = client.get("/v1/accounts", headers=session_headers(owner.session_token)).text
        assert (
            "accessToken" not in listed and "access_token" not in listed and "refresh" not in listed.lower()
        )
        for s in secrets[: n + 1]:  # the accounts' tokens
            assert s not in listed

        # a new key: every value re-encrypted, publishing and signing go on
        out = encryption.rotate_key(fast)
        # socialpub's app on the sandbox Mastodon instance: its secret
        servers = NetworkInstance.select().count()
        assert servers == 1
        assert out["reencrypted"] == n + 3 + servers and out["tables"] == {
            "account": n + 1,
            "webhook_endpoint": 2,
            "oauth_session": 0,
            "network_instance": servers,
            "tiktok_publish": 0,
        }
        assert out["oldKeysDropped"] == 1
        assert stored != _stored_bytes(fast)
        _publish_and_deliver(client, owner, fast, rx, ep["secret"])  # the previous secret still signs (grace)
        assert WebhookEndpoint.get_by_id(ep["id"]).secret == rotated["secret"]
        assert Account.get_by_id(fb.id).refresh_token == "refresh-token-of-facebook-0123456789"
        stored = _stored_bytes(fast)
        for s in secrets:
            assert s.encode() not in stored, f"a secret ({s[:8]}…) is stored in clear"

    logged = "\n".join(r.getMessage() for r in caplog.records)
    for s in secrets:
        assert s not in logged, f"a secret ({s[:8]}…) was logged"
