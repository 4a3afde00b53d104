"""Mastodon end to end, against its emulator served on loopback (`socialpub sandbox serve mastodon`, a subprocess):
an account connected through OAuth on the instance `127.0.0.1:PORT` (the app registered there once, PKCE S256 as
advertised, the secret and the token encrypted at rest), a status with an image, a content warning and a visibility
published by the worker, then a worker killed between the status call and the record of its outcome: the retry
meets its own status and nothing is published twice."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.networks.base import AccountCredentials, Publication
from backend.services import adapters, network_instances, oauth_connect, workspace
from backend.services import media as media_service
from backend.services.posts import accept as posts
from backend.store.db import database
from backend.store.models import Account, PostTarget, PublishAttempt
from tests.cli.test_accounts_connect import Served
from tests.media import corpus

ROOT = Path(__file__).resolve().parents[3]

CRASHING_WORKER = textwrap.dedent("""
    import os, signal, sys
    from backend.config import Settings
    from backend.jobs.worker import Worker
    from backend.services import adapters

    real = adapters.adapter_for

    class Crashing:
        def __init__(self, adapter):
            self.adapter = adapter
        def publish(self, pub):
            self.adapter.publish(pub)             # the instance made the status...
            os.kill(os.getpid(), signal.SIGKILL)  # ...and the worker dies before recording it
        def __getattr__(self, name):
            return getattr(self.adapter, name)

    adapters.adapter_for = lambda account, settings: Crashing(real(account, settings))
    Worker(Settings(sandbox_delay_s=0, sandbox_processing_s=0), concurrency=1).run_until_idle(max_seconds=60)
""")


@pytest.fixture
def served(tmp_path):  # type: ignore[no-untyped-def]
    s = Served("mastodon", tmp_path)
    yield s
    s.stop()


def _connect(settings, owner, served: Served) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The browser's part scripted: the consent is given, the redirect's code brought back."""
    host = f"127.0.0.1:{served.port}"
    started = oauth_connect.start(
        owner.workspace_id, settings, "mastodon", "http://127.0.0.1:8765/callback", None, instance=host
    )
    url = started["authorizeUrl"]
    asked = parse_qs(urlsplit(url).query)
    assert url.startswith(f"http://{host}/oauth/authorize?")
    assert asked["code_challenge_method"] == ["S256"] and asked["code_challenge"]  # 4.3+: PKCE advertised
    assert asked["scope"] == ["write:statuses write:media read:statuses profile"]
    with httpx.Client(trust_env=False, timeout=10) as c:
        r = c.get(url + "&sandbox_user=Alice")
    assert r.status_code == 302, r.text
    back = parse_qs(urlsplit(r.headers["location"]).query)
    assert back["state"] == [started["state"]]
    finished = oauth_connect.finish(owner.workspace_id, settings, started["state"], back["code"][0])
    [candidate] = finished["candidates"]
    assert candidate["externalId"].endswith(f"@{host}")
    [acc] = oauth_connect.connect(
        owner.workspace_id, settings, finished["grantId"], [candidate["externalId"]]
    )
    return acc  # type: ignore[no-any-return]


def _statuses(served: Served, acc: Account) -> list[dict]:  # type: ignore[type-arg]
    account_id = acc.external_id.split("@")[0]
    with served.http() as c:
        r = c.get(
            f"/api/v1/accounts/{account_id}/statuses",
            params={"limit": 40},
            headers={"Authorization": f"Bearer {acc.access_token}"},
        )
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _raw(table: str, column: str) -> list[str]:
    return [row[0] for row in database.execute_sql(f"SELECT {column} FROM {table}").fetchall()]


def test_connect_publish_and_a_killed_worker_publishes_once(settings, owner, served, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings.allow_private_urls = True  # the instance is this machine's served emulator
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    host = f"127.0.0.1:{served.port}"

    public = _connect(settings, owner, served)
    acc = Account.get_by_id(public["id"])
    assert acc.kind == "live" and acc.token_expires_at is None and acc.refresh_token is None  # never expires
    assert set(acc.granted_scopes.split()) == {"write:statuses", "write:media", "read:statuses", "profile"}
    app = network_instances.app_of("mastodon", host)
    assert app is not None and app.redirect_uris == ("http://127.0.0.1/callback",)
    assert all(v.startswith("enc:") for v in _raw("network_instance", "client_secret"))  # encrypted at rest
    assert all(v.startswith("enc:") for v in _raw("account", "access_token") if v)
    # a second connection to the instance reuses its app
    _connect(settings, owner, served)
    assert network_instances.app_of("mastodon", host).client_id == app.client_id  # type: ignore[union-attr]

    # a status with an image (alt text), a content warning and a visibility, published by the worker
    image = media_service.ingest_bytes(settings, owner.workspace_id, corpus.jpeg())
    post, _ = posts.create(
        settings,
        owner.workspace_id,
        {
            "targets": ["mastodon"],
            "content": "Hello fediverse",
            "media_urls": [media_service.url_for(settings, image.key)],
            "options": {
                "mastodon": {"visibility": "unlisted", "spoilerText": "a picture", "alt": ["one pixel"]}
            },
        },
    )
    Worker(settings, concurrency=1).run_until_idle(max_seconds=60, settle_s=1)
    target = PostTarget.get(PostTarget.post == post.id)
    assert target.status == "succeeded", target.fail_reason
    [status] = _statuses(served, acc)
    assert status["id"] == target.external_post_id and status["url"] == target.post_url
    assert (
        status["visibility"] == "unlisted" and status["spoiler_text"] == "a picture" and status["sensitive"]
    )
    assert status["media_attachments"][0]["description"] == "one pixel"
    assert status["application"]["name"] == "socialpub"

    # killed between the status call and the record of its outcome: one status, the target succeeded
    post2, _ = posts.create(settings, owner.workspace_id, {"targets": ["mastodon"], "content": "killed once"})
    env = {**os.environ, "SOCIALPUB_DATA_DIR": str(settings.data_dir), "SOCIALPUB_LOG_LEVEL": "ERROR"}
    env["PYTHONPATH"] = str(ROOT)
    env["SOCIALPUB_ALLOW_PRIVATE_URLS"] = "1"
    if settings.database_url:
        env["SOCIALPUB_DATABASE_URL"] = settings.database_url
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_WORKER], env=env, timeout=120, capture_output=True, text=True
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    (open_attempt,) = PublishAttempt.select().where(PublishAttempt.finished_at.is_null())
    target2 = PostTarget.get_by_id(open_attempt.target_id)
    assert target2.post_id == post2.id and target2.status == "publishing"  # the outcome was lost
    assert [s["content"] for s in _statuses(served, acc)].count("<p>killed once</p>") == 1
    with time_machine.travel(clock.now() + timedelta(seconds=settings.job_lease_s + 1), tick=False):
        Worker(settings, concurrency=1).run_until_idle(max_seconds=60, settle_s=2)
    target2 = PostTarget.get_by_id(target2.id)
    assert target2.status == "succeeded", target2.fail_reason
    mine = [s for s in _statuses(served, acc) if s["content"] == "<p>killed once</p>"]
    assert [s["id"] for s in mine] == [target2.external_post_id]  # met its own status: not published twice

    # the same target's call made again (its Idempotency-Key): the instance answers the same status
    from backend.networks.rules import build_payload

    payload = build_payload("mastodon", "killed once", [], None)
    creds = AccountCredentials(acc.external_id, acc.access_token)
    again = adapters.adapter_for(acc, settings).publish(
        Publication(payload, creds, target2.idempotency_token)
    )
    assert again.state == "published" and again.external_post_id == target2.external_post_id
    assert len([s for s in _statuses(served, acc) if s["content"] == "<p>killed once</p>"]) == 1
