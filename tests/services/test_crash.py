"""Kill the worker PROCESS (SIGKILL) between the network call and the commit: the publication exists at
the network, our store never heard of it. The next worker asks the network first: no duplicate."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.networks.sandbox import list_published
from backend.services import accounts, workspace
from backend.store.models import Post, PostTarget
from tests.conftest import key_headers

CRASHING_WORKER = textwrap.dedent("""
    import os, signal
    from backend.config import Settings
    from backend.jobs.worker import Worker
    from backend.services import publishing

    real = publishing.adapter_for

    def crashing(platform, settings, account):
        adapter = real(platform, settings, account)
        original = adapter.publish
        def publish(pub):
            original(pub)                        # the network accepted the post...
            os.kill(os.getpid(), signal.SIGKILL)  # ...and the worker dies before recording it
        adapter.publish = publish
        return adapter

    publishing.adapter_for = crashing
    Worker(Settings(sandbox_delay_s=0, sandbox_processing_s=0), concurrency=1).run_until_idle(max_seconds=30)
""")


def test_sigkill_mid_publication_never_duplicates(client, owner, settings):
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    accounts.connect_sandbox_defaults(owner.workspace_id)
    r = client.post("/v1/posts", json={"targets": ["facebook", "linkedin"], "content": "crash test"},
                    headers=key_headers(owner.api_key))
    assert r.status_code == 202, r.text
    post_id = r.json()["id"]

    env = {**os.environ, "SOCIALPUB_DATA_DIR": str(settings.data_dir), "SOCIALPUB_LOG_LEVEL": "ERROR"}
    if settings.database_url:
        env["SOCIALPUB_DATABASE_URL"] = settings.database_url
    proc = subprocess.run([sys.executable, "-c", CRASHING_WORKER], env=env, timeout=120,
                          capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr[-2000:]

    published = list_published()
    assert len(published) == 1  # one call reached the network before the kill
    # the post's batch marked both targets `publishing` (call_started_at set) before its first call
    marked = PostTarget.select().where((PostTarget.post == post_id) & (PostTarget.status == "publishing")
                                       & PostTarget.call_started_at.is_null(False))
    assert marked.count() == 2

    with time_machine.travel(clock.now() + timedelta(seconds=settings.job_lease_s + 1), tick=False):
        Worker(settings, concurrency=1).run_until_idle(max_seconds=30, settle_s=2)
    assert Post.get_by_id(post_id).status == "completed"
    assert len(list_published(platform="facebook")) == 1
    assert len(list_published(platform="linkedin")) == 1
