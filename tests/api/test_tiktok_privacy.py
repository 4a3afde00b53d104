# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""POST /v1/posts and a TikTok direct post's privacy (issue 29): refused at creation, per target, where TikTok
would refuse it at publication — no privacy chosen (the creator chooses, nothing pre-selected), one the account's
creator_info does not offer, or an unaudited app and a public account or a privacy other than SELF_ONLY — with
the levels the creator may choose. Nothing is stored. A network that cannot be reached at creation refuses nothing.
"""

from __future__ import annotations

import httpx
import pytest

from backend.networks.tiktok.adapter import TikTokAdapter
from backend.store.models import Post
from tests.api.posts_support import VID, fast, future, post, remote_media, sandbox  # noqa: F401  (fixtures)
from tests.conftest import key_headers

pytestmark = pytest.mark.usefixtures("fast", "remote_media")
PUBLIC = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]


def test_a_direct_post_without_the_creators_choice_is_refused(client, owner, audited_tiktok, sandbox):
    none = {"tiktok": {"privacyLevel": None}}  # (posts_support.post chooses one unless told not to)
    r = post(
        client,
        owner,
        400,
        targets=["tiktok"],
        content="which audience?",
        mediaUrls=[VID.format(1)],
        options=none,
    )
    (detail,) = r.json()["details"]
    assert detail["platform"] == "tiktok" and detail["error"] == "privacy_level_required_for_target"
    assert detail["field"] == "privacyLevel" and detail["allowed"] == PUBLIC
    assert "PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY" in detail["message"]
    assert Post.select().count() == 0
    chosen = {"tiktok": {"privacyLevel": "MUTUAL_FOLLOW_FRIENDS"}}
    post(client, owner, 202, targets=["tiktok"], mediaUrls=[VID.format(1)], options=chosen)
    draft = {"tiktok": {"postMode": "MEDIA_UPLOAD"}}  # the creator chooses in the TikTok app
    post(client, owner, 202, targets=["tiktok"], mediaUrls=[VID.format(2)], options=draft)


def test_a_privacy_the_account_does_not_offer_is_refused(client, owner, audited_tiktok, sandbox):
    options = {
        "tiktok": {"privacyLevel": "FOLLOWER_OF_CREATOR"}
    }  # a private account's level; this one is public
    r = post(client, owner, 400, targets=["tiktok"], mediaUrls=[VID.format(1)], options=options)
    (detail,) = r.json()["details"]
    assert detail["error"] == "privacy_level_option_mismatch" and detail["allowed"] == PUBLIC
    assert Post.select().count() == 0


def test_an_unaudited_app_is_refused_a_public_account(client, owner, sandbox):
    """The default: a new app TikTok has not audited (SOCIALPUB_TIKTOK_AUDITED unset)."""
    for privacy in ("SELF_ONLY", "PUBLIC_TO_EVERYONE", None):
        options = {"tiktok": {"privacyLevel": privacy}}
        r = post(client, owner, 400, targets=["tiktok"], mediaUrls=[VID.format(1)], options=options)
        (detail,) = r.json()["details"]
        assert detail["error"] == "unaudited_client_can_only_post_to_private_accounts", privacy
        assert detail["allowed"] == [] and "make the TikTok account private" in detail["message"]
    assert Post.select().count() == 0
    draft = {"tiktok": {"postMode": "MEDIA_UPLOAD"}}  # drafts are not restricted
    post(client, owner, 202, targets=["tiktok"], mediaUrls=[VID.format(2)], options=draft)


def test_only_the_tiktok_target_is_refused(client, owner, audited_tiktok, sandbox):
    none = {"tiktok": {"privacyLevel": None}}
    r = post(client, owner, 400, targets=["tiktok", "linkedin"], mediaUrls=[VID.format(1)], options=none)
    assert [(d["platform"], d["error"]) for d in r.json()["details"]] == [
        ("tiktok", "privacy_level_required_for_target")
    ]


def test_tiktok_unreachable_at_creation_accepts_the_post(client, owner, audited_tiktok, sandbox, monkeypatch):
    """creator_info cannot be read now: the post is accepted (never lost), its publication reads it again."""

    def down(self, token):  # type: ignore[no-untyped-def]
        raise httpx.ConnectError("TikTok is down")

    monkeypatch.setattr(TikTokAdapter, "creator_info", down)
    none = {"tiktok": {"privacyLevel": None}}
    post(client, owner, 202, targets=["tiktok"], mediaUrls=[VID.format(1)], options=none)
    assert Post.select().count() == 1


def test_an_edit_of_the_options_is_checked_as_a_creation(client, owner, audited_tiktok, sandbox):
    chosen = {"tiktok": {"privacyLevel": "SELF_ONLY"}}
    r = post(
        client,
        owner,
        202,
        targets=["tiktok"],
        mediaUrls=[VID.format(1)],
        options=chosen,
        scheduledAt=future(hours=2),
    )
    pid = r.json()["id"]
    bad = {"options": {"tiktok": {"privacyLevel": "FOLLOWER_OF_CREATOR"}}}
    r = client.patch(f"/v1/posts/{pid}", json=bad, headers=key_headers(owner.api_key))
    assert r.status_code == 400, r.text
    (detail,) = r.json()["details"]
    assert detail["error"] == "privacy_level_option_mismatch" and detail["allowed"] == PUBLIC
    good = {"options": {"tiktok": {"privacyLevel": "MUTUAL_FOLLOW_FRIENDS"}}}
    assert client.patch(f"/v1/posts/{pid}", json=good, headers=key_headers(owner.api_key)).status_code == 200


def test_branded_content_as_self_only_is_refused_at_creation(client, owner, audited_tiktok, sandbox):
    """content-sharing-guidelines: branded content (a paid partnership) is public or friends only."""
    branded = {"tiktok": {"privacyLevel": "SELF_ONLY", "brandContentToggle": True}}
    r = post(client, owner, 400, targets=["tiktok"], mediaUrls=[VID.format(1)], options=branded)
    (detail,) = r.json()["details"]
    assert detail["error"] == "branded_content_cannot_be_private" and detail["field"] == "privacyLevel"
    assert detail["allowed"] == ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS"]
    assert "cannot be posted as SELF_ONLY" in detail["message"]
    assert Post.select().count() == 0
    public = {"tiktok": {"privacyLevel": "MUTUAL_FOLLOW_FRIENDS", "brandContentToggle": True}}
    r = post(client, owner, 202, targets=["tiktok"], mediaUrls=[VID.format(1)], options=public)
    assert r.json()["options"]["tiktok"]["brandContentToggle"] is True
