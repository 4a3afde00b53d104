# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""POST /v1/posts (and PATCH) checks a Mastodon target against its account's instance's limits, as cached when the
account connected (`network_instance`), not upstream Mastodon's 500 characters and 4 media: an instance that
allows more is not refused what it allows, and a refusal names the instance and its limit. Unknown limits: upstream
Mastodon's, said so. No call to the instance at creation."""

from __future__ import annotations

import pytest

from backend.jobs.worker import Worker
from backend.networks.mastodon.emulator import SANDBOX_HOST, configure_instance
from backend.networks.mastodon.instance import InstanceLimits
from backend.services import accounts, network_instances
from backend.services.adapters import sandbox as open_sandbox
from backend.store.models import NetworkInstance, Post, PostTarget
from tests.api.posts_support import IMG, fast, post, remote_media, sandbox  # noqa: F401  (fixtures)
from tests.conftest import key_headers

pytestmark = pytest.mark.usefixtures("fast", "remote_media")


@pytest.fixture
def big_instance(sandbox):  # type: ignore[no-untyped-def]
    """The sandbox account's instance allows 1,000 characters and 6 media, and its limits were cached at connect
    (what accounts connect stores from its /api/v2/instance)."""
    configure_instance(SANDBOX_HOST, max_characters=1000, max_media_attachments=6)
    limits = InstanceLimits(SANDBOX_HOST, "4.4.0", max_characters=1000, max_media_attachments=6)
    network_instances.save_limits("mastodon", SANDBOX_HOST, limits.to_dict())
    return sandbox["mastodon"]


def _no_instance_call(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Creation reads the cache: any call to the instance fails the test."""
    from backend.networks.mastodon.adapter import MastodonAdapter

    def called(*_a, **_k):  # type: ignore[no-untyped-def]
        raise AssertionError("the instance was called at creation")

    monkeypatch.setattr(MastodonAdapter, "limits", called)


def test_an_instance_allowing_more_is_not_refused_what_it_allows(
    client, owner, big_instance, settings, monkeypatch
):
    _no_instance_call(monkeypatch)
    r = post(client, owner, 202, targets=["mastodon"], content="x" * 900)
    post(client, owner, 202, targets=["mastodon"], content="six", mediaUrls=[IMG.format(i) for i in range(6)])
    monkeypatch.undo()
    # and the instance takes it: published by the worker
    Worker(settings, concurrency=1).run_until_idle(max_seconds=30, settle_s=0.5)
    target = PostTarget.get(PostTarget.post == r.json()["id"])
    assert target.status == "succeeded", target.fail_reason


def test_over_the_instances_own_limit_is_refused_naming_it(client, owner, big_instance, monkeypatch):
    _no_instance_call(monkeypatch)
    r = post(client, owner, 400, targets=["mastodon"], content="x" * 1001)
    (detail,) = r.json()["details"]
    assert detail["error"] == "content_too_long_for_target" and detail["platform"] == "mastodon"
    assert detail["instance"] == SANDBOX_HOST and detail["limit"] == 1000
    assert f"{SANDBOX_HOST} takes at most 1,000 characters; the text counts 1,001" in detail["message"]
    assert "upstream" not in detail["message"]
    r = post(
        client, owner, 400, targets=["mastodon"], content="7", mediaUrls=[IMG.format(i) for i in range(7)]
    )
    (detail,) = r.json()["details"]
    assert detail["error"] == "media_unsupported_for_target" and detail["limit"] == 6
    assert f"{SANDBOX_HOST} takes at most 6 media; this post has 7" in detail["message"]
    assert Post.select().count() == 0


def test_unknown_limits_are_upstreams_said_so(client, owner, sandbox):
    # an account whose server's limits were never read (connected by a socialpub that did not cache them)
    NetworkInstance.update(limits=None, limits_read_at=None).execute()
    post(client, owner, 202, targets=["mastodon"], content="x" * 500)
    r = post(client, owner, 400, targets=["mastodon"], content="x" * 501)
    (detail,) = r.json()["details"]
    assert detail["error"] == "content_too_long_for_target" and detail["limit"] == 500
    assert f"upstream Mastodon's limit: {SANDBOX_HOST}'s own are not known yet" in detail["message"]
    assert Post.select().count() == 1


def test_a_change_of_the_text_is_checked_against_the_instance(client, owner, big_instance):
    created = post(
        client, owner, 202, targets=["mastodon"], content="short", scheduledAt="2099-01-01T00:00:00Z"
    )
    h = key_headers(owner.api_key)
    r = client.patch(f"/v1/posts/{created.json()['id']}", json={"content": "x" * 900}, headers=h)
    assert r.status_code == 200, r.text
    r = client.patch(f"/v1/posts/{created.json()['id']}", json={"content": "x" * 1001}, headers=h)
    assert r.status_code == 400, r.text
    (detail,) = r.json()["details"]
    assert detail["error"] == "content_too_long_for_target" and detail["instance"] == SANDBOX_HOST


def test_what_no_instance_takes_stays_refused_by_the_network_rule(client, owner, big_instance):
    r = post(client, owner, 400, targets=["mastodon"], content="   ")
    assert [d["error"] for d in r.json()["details"]] == ["content_required_for_target"]


def test_the_sandbox_accounts_instance_is_read_when_it_is_connected(client, owner, settings) -> None:  # type: ignore[no-untyped-def]
    """`socialpub init --sandbox` connects a Mastodon account the way a live connect does: its emulated instance's
    limits are cached then, so its own limit (here 1,000 characters) counts from the first post — the API's
    textLimit (the TUI's counter) and the check at creation — with no call to the instance at creation."""
    open_sandbox(settings)
    configure_instance(SANDBOX_HOST, max_characters=1000)
    found = {
        a["platform"]: a for a in accounts.connect_sandbox_defaults(settings, owner.workspace_id, public=True)
    }
    assert network_instances.cached_limits("mastodon", SANDBOX_HOST)["max_characters"] == 1000
    listed = client.get("/v1/accounts", headers=key_headers(owner.api_key)).json()
    [mastodon] = [a for a in listed["items"] if a["platform"] == "mastodon"]
    assert mastodon["id"] == found["mastodon"]["id"] and mastodon["textLimit"] == 1000
    post(client, owner, 202, targets=["mastodon"], content="x" * 900)
    r = post(client, owner, 400, targets=["mastodon"], content="x" * 1001)
    assert r.json()["details"][0]["limit"] == 1000
