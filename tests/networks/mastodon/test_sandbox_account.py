"""`init --sandbox` gives a Mastodon account on the emulated instance `mastodon.sandbox.invalid`; a post to it is
published by the worker like any other sandbox account's (the emulator in process)."""

from __future__ import annotations

from backend.jobs.worker import Worker
from backend.networks.mastodon.emulator import SANDBOX_HOST
from backend.networks.sandbox import list_published
from backend.services import accounts
from backend.services.posts import accept as posts
from backend.store.models import Account, PostTarget


def test_the_sandbox_account_publishes_on_the_emulated_instance(settings, owner) -> None:  # type: ignore[no-untyped-def]
    created = accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    [mine] = [a for a in created if a["platform"] == "mastodon"]
    acc = Account.get_by_id(mine["id"])
    assert acc.kind == "sandbox" and acc.external_id.endswith(f"@{SANDBOX_HOST}")
    post, _ = posts.create(
        settings,
        owner.workspace_id,
        {
            "targets": ["mastodon"],
            "content": "hello from the sandbox https://example.com/" + "x" * 600,  # a link counts 23
            "options": {"mastodon": {"visibility": "private", "spoilerText": "long link"}},
        },
    )
    Worker(settings, concurrency=1).run_until_idle(max_seconds=30, settle_s=0.5)
    target = PostTarget.get(PostTarget.post == post.id)
    assert target.status == "succeeded", target.fail_reason
    assert target.post_url.startswith(f"https://{SANDBOX_HOST}/@")
    [row] = list_published(platform="mastodon")
    assert row["external_id"] == target.external_post_id and row["visibility"] == "private"
    assert row["title"] == "long link"


def test_over_the_upstream_limit_is_refused_at_creation(settings, owner) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from backend.errors import ApiError

    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    with pytest.raises(ApiError) as refused:
        posts.create(
            settings,
            owner.workspace_id,
            {
                "targets": ["mastodon"],
                "content": "x" * 480,
                "options": {"mastodon": {"spoilerText": "y" * 21}},
            },
        )
    [detail] = refused.value.details
    assert detail["error"] == "content_too_long_for_target"
    message = detail["message"]
    assert "at most 500" in message and "counts 501" in message and "content warning" in message
    # the sandbox instance's limits were read when the account was connected (its defaults: upstream's 500)
    assert message.startswith(f"{SANDBOX_HOST} takes at most 500 characters") and "upstream" not in message, (
        message
    )
    assert detail["instance"] == SANDBOX_HOST and detail["limit"] == 500
