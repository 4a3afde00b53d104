"""Kill the worker PROCESS (SIGKILL) between the network call and the commit of its outcome: the publication
exists at the network, our store never heard of it. The next worker reconciles with the network first: it
finds the publication (no duplicate), or publishes when the network confirms it absent, or, when the network
offers no way to check, fails the target saying it may have been published."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.networks.base import Unverifiable
from backend.networks.sandbox import list_published
from backend.services import accounts, adapters, workspace
from backend.store.models import Post, PostTarget, PublishAttempt
from tests.conftest import key_headers

CRASHING_WORKER = textwrap.dedent("""
    import os, signal, sys
    from backend.config import Settings
    from backend.jobs.worker import Worker
    from backend.services import adapters

    real = adapters.adapter_for
    before = sys.argv[1] == "before"

    class Crashing:
        def __init__(self, adapter):
            self.adapter = adapter
        def publish(self, pub):
            if not before:
                self.adapter.publish(pub)         # the network accepted the post...
            os.kill(os.getpid(), signal.SIGKILL)  # ...and the worker dies before recording it
        def __getattr__(self, name):
            return getattr(self.adapter, name)

    adapters.adapter_for = lambda account, settings: Crashing(real(account, settings))
    Worker(Settings(sandbox_delay_s=0, sandbox_processing_s=0), concurrency=1).run_until_idle(max_seconds=30)
""")


def _kill_mid_publication(client, owner, settings, when: str) -> str:  # type: ignore[no-untyped-def]
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    r = client.post(
        "/v1/posts",
        json={"targets": ["facebook", "linkedin"], "content": "crash test"},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 202, r.text
    env = {**os.environ, "SOCIALPUB_DATA_DIR": str(settings.data_dir), "SOCIALPUB_LOG_LEVEL": "ERROR"}
    if settings.database_url:
        env["SOCIALPUB_DATABASE_URL"] = settings.database_url
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_WORKER, when], env=env, timeout=120, capture_output=True, text=True
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    # one target's attempt was recorded (committed before its call), and never got an outcome
    (open_attempt,) = PublishAttempt.select().where(PublishAttempt.finished_at.is_null())
    target = PostTarget.get_by_id(open_attempt.target_id)
    assert target.status == "publishing" and target.call_started_at is not None
    return r.json()["id"]


def _restart(settings) -> None:  # type: ignore[no-untyped-def]
    with time_machine.travel(clock.now() + timedelta(seconds=settings.job_lease_s + 1), tick=False):
        Worker(settings, concurrency=1).run_until_idle(max_seconds=30, settle_s=2)


def test_sigkill_after_the_call_is_reconciled_never_duplicated(client, owner, settings, caplog):
    post_id = _kill_mid_publication(client, owner, settings, "after")
    assert len(list_published()) == 1  # one call reached the network before the kill
    caplog.set_level(logging.INFO, logger="socialpub.engine")
    _restart(settings)
    assert Post.get_by_id(post_id).status == "completed"
    assert len(list_published(platform="facebook")) == 1
    assert len(list_published(platform="linkedin")) == 1
    reconciled = [r.getMessage() for r in caplog.records if "reconciled" in r.getMessage()]
    assert len(reconciled) == 1 and post_id in reconciled[0]
    assert not PublishAttempt.select().where(PublishAttempt.finished_at.is_null()).exists()


def test_sigkill_before_the_call_reaches_the_network_publishes_once(client, owner, settings, caplog):
    post_id = _kill_mid_publication(client, owner, settings, "before")
    assert list_published() == []
    caplog.set_level(logging.INFO, logger="socialpub.engine")
    _restart(settings)
    assert Post.get_by_id(post_id).status == "completed"
    assert len(list_published(platform="facebook")) == 1
    assert len(list_published(platform="linkedin")) == 1
    assert any("re-attempt" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)


def test_sigkill_where_the_network_cannot_be_checked_fails_saying_so(client, owner, settings, monkeypatch):
    post_id = _kill_mid_publication(client, owner, settings, "after")
    real = adapters.adapter_for

    class NoLookup:
        def __init__(self, adapter):  # type: ignore[no-untyped-def]
            self.adapter = adapter

        def find_existing(self, pub):  # type: ignore[no-untyped-def]
            raise Unverifiable("no listing")

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(self.adapter, name)

    monkeypatch.setattr(adapters, "adapter_for", lambda account, settings: NoLookup(real(account, settings)))
    _restart(settings)
    interrupted = PostTarget.get(PostTarget.status == "failed")
    assert interrupted.fail_type == "retriable"
    assert (
        "may have been published" in interrupted.fail_reason
        and "check the account" in interrupted.fail_reason.lower()
    )
    assert Post.get_by_id(post_id).status == "partial"
    assert len(list_published()) == 2  # never published twice: one per network


@pytest.fixture(autouse=True)
def _no_sandbox_latency(settings):  # type: ignore[no-untyped-def]
    return settings
