"""Security review: one workspace never sees another's data (object-level authorization on every id)."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest

from backend import clock
from backend.jobs.worker import Worker
from backend.networks.sandbox.store import SandboxAccount
from backend.services import accounts
from backend.store.models import Account
from tests.conftest import key_headers, session_headers
from tests.media import corpus


@pytest.fixture
def two(settings, owner, other_owner):  # type: ignore[no-untyped-def]
    settings.rate_limit_per_minute = 1_000_000
    accounts.connect_sandbox_defaults(settings, owner.workspace_id)
    accounts.connect_sandbox_defaults(settings, other_owner.workspace_id)
    return owner, other_owner


def _upload(client, who, data: bytes) -> dict:  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/media", json={"base64": base64.b64encode(data).decode()}, headers=key_headers(who.api_key)
    )
    assert r.status_code == 201, r.text
    return r.json()


def _account(who, platform: str) -> Account:  # type: ignore[no-untyped-def]
    return Account.get((Account.workspace == who.workspace_id) & (Account.platform == platform))


def test_posts_of_another_workspace_are_unreachable(client, two) -> None:  # type: ignore[no-untyped-def]
    a, b = two
    at = clock.iso(clock.now() + timedelta(days=1))
    r = client.post(
        "/v1/posts",
        json={"targets": ["facebook"], "content": "A's", "scheduledAt": at},
        headers=key_headers(a.api_key),
    )
    assert r.status_code == 202, r.text
    pid = r.json()["id"]
    B = key_headers(b.api_key)
    assert client.get(f"/v1/posts/{pid}", headers=B).status_code == 404
    assert client.patch(f"/v1/posts/{pid}", json={"content": "B's"}, headers=B).status_code == 404
    assert client.delete(f"/v1/posts/{pid}", headers=B).status_code == 404
    assert client.get("/v1/posts", headers=B).json()["items"] == []
    acc = _account(a, "facebook").id
    assert client.get(f"/v1/posts?accountId={acc}", headers=B).json()["items"] == []
    post = client.get(f"/v1/posts/{pid}", headers=key_headers(a.api_key)).json()
    assert post["content"] == "A's" and post["status"] == "scheduled"


def test_channel_and_media_of_another_workspace_are_refused(client, two) -> None:  # type: ignore[no-untyped-def]
    a, b = two
    B = key_headers(b.api_key)
    media = _upload(client, a, corpus.jpeg(120, 90))
    channel = _account(a, "facebook").id
    r = client.post(
        "/v1/posts",
        json={"targets": [{"platform": "facebook", "channelId": channel}], "content": "x"},
        headers=B,
    )
    assert r.status_code == 400 and r.json()["details"][0]["error"] == "channel_not_connected"
    r = client.post(
        "/v1/posts", json={"targets": ["facebook"], "content": "x", "mediaUrls": [media["url"]]}, headers=B
    )
    assert r.status_code == 400 and r.json()["details"][0]["error"] == "media_unreadable"
    assert client.get(f"/v1/media/{media['key']}", headers=B).status_code == 404
    assert client.delete(f"/v1/media/{media['key']}", headers=B).status_code == 404
    assert client.get(f"/media/{media['key']}").status_code == 200  # still there: URLs are public by design


def test_keys_and_accounts_of_another_workspace_are_unreachable(client, two) -> None:  # type: ignore[no-untyped-def]
    a, b = two
    SB = session_headers(b.session_token)
    key_id = client.get("/v1/api-keys", headers=session_headers(a.session_token)).json()["items"][0]["id"]
    assert client.delete(f"/v1/api-keys/{key_id}", headers=SB).status_code == 404
    assert client.delete(f"/v1/api-keys/{key_id}?purge=true", headers=SB).status_code == 404
    assert client.delete(f"/v1/accounts/{_account(a, 'tiktok').id}", headers=SB).status_code == 404
    assert (
        client.get("/v1/workspace", headers=key_headers(a.api_key)).status_code == 200
    )  # A's key still serves


def test_tiktok_publish_id_of_another_workspace_is_unreachable(client, two) -> None:  # type: ignore[no-untyped-def]
    a, b = two
    img = _upload(client, a, corpus.jpeg(200, 150))
    r = client.post(
        "/v1/publish/tiktok/photo", json={"imageUrls": [img["url"]]}, headers=key_headers(a.api_key)
    )
    assert r.status_code == 200, r.text
    publish_id = r.json()["publishId"]
    B = key_headers(b.api_key)
    assert client.get(f"/v1/publish/tiktok/status/{publish_id}", headers=B).status_code == 404
    theirs = _account(a, "tiktok").id
    r = client.get(f"/v1/publish/tiktok/status/{publish_id}?channelId={theirs}", headers=B)
    assert r.status_code == 404
    r = client.post("/v1/publish/tiktok/photo", json={"imageUrls": [img["url"]]}, headers=B)
    assert r.status_code == 400 and r.json()["error"] == "media_unreadable"


def test_sandbox_listing_does_not_leak_on_a_username_collision(client, settings, two) -> None:  # type: ignore[no-untyped-def]
    """Sandbox usernames are the slug of the name plus 4 random hex digits: with the default names, two
    workspaces' accounts collide by chance (or on purpose, by connecting and disconnecting until they do).
    The listing must still only show what this workspace's own accounts published."""
    a, b = two
    r = client.post(
        "/v1/posts",
        json={"targets": ["facebook"], "content": "A's private text"},
        headers=key_headers(a.api_key),
    )
    assert r.status_code == 202, r.text
    Worker(settings, concurrency=1).run_until_idle(max_seconds=10, settle_s=0)
    mine = client.get("/v1/sandbox/published?platform=facebook", headers=key_headers(a.api_key)).json()[
        "items"
    ]
    assert [i["text"] for i in mine] == ["A's private text"]
    # B's facebook account gets the same username as A's (a collision of the random suffix)
    a_acc, b_acc = _account(a, "facebook"), _account(b, "facebook")
    Account.update(username=a_acc.username).where(Account.id == b_acc.id).execute()
    SandboxAccount.update(username=a_acc.username).where(
        SandboxAccount.external_id == b_acc.external_id
    ).execute()
    theirs = client.get("/v1/sandbox/published", headers=key_headers(b.api_key)).json()["items"]
    assert theirs == []
    mine = client.get("/v1/sandbox/published?platform=facebook", headers=key_headers(a.api_key)).json()[
        "items"
    ]
    assert [i["text"] for i in mine] == ["A's private text"]
