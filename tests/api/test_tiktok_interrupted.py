"""A dedicated TikTok record left INITIATING by a crash is settled FAILED by the worker, not left open."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.services import accounts
from backend.store.models import Account, TikTokPublish

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test


def test_interrupted_initiating_record_is_settled(settings, owner):
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    acc = Account.get((Account.workspace == owner.workspace_id) & (Account.platform == "tiktok"))
    now = clock.now()
    TikTokPublish.create(
        id="tkp_crashed",
        workspace=owner.workspace_id,
        account=acc.id,
        kind="photo",
        post_mode="MEDIA_UPLOAD",
        status="INITIATING",
        title="t",
        description="",
        media_urls=[],
        post_info={},
        created_at=now,
        updated_at=now,
    )
    Worker(settings, concurrency=1).run_until_idle(max_seconds=5)
    assert TikTokPublish.get_by_id("tkp_crashed").status == "INITIATING"  # still within the grace period
    with time_machine.travel(now + timedelta(minutes=11), tick=False):
        Worker(settings, concurrency=1).run_until_idle(max_seconds=5)
    rec = TikTokPublish.get_by_id("tkp_crashed")
    assert rec.status == "FAILED" and rec.fail_reason == "internal"
    assert "check the TikTok app" in rec.fail_message and rec.completed_at is not None
