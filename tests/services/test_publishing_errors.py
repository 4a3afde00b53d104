"""Every error code of NETWORKS.md's tables, through the real engine and adapter (issue 17 item 6): the emulator's
error switch (backend/networks/sandbox/errors.py) is armed for the network's publishing call, a post is published
to a sandbox account, and the target must end as NETWORKS.md's action says — permanent: failed `permanent` with a
reason; retry: tried again and published (the switch was for one call); wait: `pending` with a future
nextAttemptAt; reauth: failed `permanent` and the account `needs_reauth`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine

from backend import clock
from backend.jobs.worker import Worker
from backend.networks import registry
from backend.networks.sandbox import errors
from backend.services import accounts
from backend.store.models import Account, PostTarget
from tests.media import corpus
from tests.services.test_publishing import create, fast, read, upload  # noqa: F401  (fast: a fixture)

pytestmark = pytest.mark.usefixtures("audited_tiktok")  # TikTok's audit is not what these test

# each network's error switches: its emulator's FAULTS (its package's emulator_errors.py)
CATALOGUE = {n.name: n.emulator_class().FAULTS for n in registry.networks() if n.emulator}
CASES = [(platform, code) for platform, table in CATALOGUE.items() for code in table]


def body_for(client: Any, owner: Any, platform: str) -> dict[str, Any]:
    """A post whose first write at the network is its publishing call ("publish" in its emulator's ERROR_ENDPOINTS)."""
    if platform == "youtube":
        return {"mediaUrls": [upload(client, owner, corpus.video("mp4"))], "content": "A video"}
    if platform in ("tiktok", "instagram"):
        return {"mediaUrls": [upload(client, owner, corpus.jpeg(400, 400))], "content": "A picture"}
    return {"content": "Some text"}


def work(settings: Any) -> None:
    Worker(settings, concurrency=1).run_until_idle(max_seconds=10, settle_s=0)


@pytest.mark.parametrize(("platform", "code"), CASES, ids=[f"{p}:{c}" for p, c in CASES])
def test_each_error_code_ends_the_target_as_networks_md_says(settings, client, owner, fast, platform, code):  # type: ignore[no-untyped-def]  # noqa: F811
    fault = CATALOGUE[platform][code]
    acc = accounts.connect_sandbox(settings, owner.workspace_id, platform, f"{platform} account")
    errors.configure_errors(platform, reset=True)
    errors.configure_errors(platform, code, times=1)
    post = create(
        client,
        owner,
        targets=[{"platform": platform, "channelId": acc.id}],
        **body_for(client, owner, platform),
    )
    with time_machine.travel(clock.now(), tick=False) as t:
        work(fast)
        target = read(client, owner, post["id"])["targets"][0]
        assert errors.configure_errors(platform, reset=True)["armed"] == []  # the one armed call was made
        if fault.action in ("permanent", "reauth"):
            assert target["status"] == "failed" and target["failType"] == "permanent", target
            assert target["failReason"] and len(target["failReason"]) > 20, target
            status = Account.get_by_id(acc.id).status
            assert status == ("needs_reauth" if fault.action == "reauth" else "active"), (status, target)
        elif fault.action == "wait":
            assert target["status"] == "pending" and target["failReason"], target
            waits = PostTarget.get(PostTarget.post == post["id"]).next_attempt_at - clock.now()
            assert waits >= timedelta(seconds=1), (
                waits,
                target,
            )  # retries with no wait of their own: 0 s here
            assert Account.get_by_id(acc.id).status == "active"
        else:  # retry: the next attempt (at once, or after the network's short wait) publishes
            for _ in range(6):
                if target["status"] in ("succeeded", "failed"):
                    break
                t.shift(timedelta(minutes=2))
                work(fast)
                target = read(client, owner, post["id"])["targets"][0]
            assert target["status"] == "succeeded", target
            assert PostTarget.get(PostTarget.post == post["id"]).attempts == 2
            assert Account.get_by_id(acc.id).status == "active"
