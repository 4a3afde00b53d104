# ruff: noqa: F811  (pytest fixtures imported from tests.api.posts_support)
"""GET /v1/accounts/{id}/choices (issue 29): what the account's network says its creator may choose now — TikTok's
creator_info through the registry's generic `choices` hook; none for a network without one. Scope
`accounts:read`, one workspace only, a 30 s cache, 502 `network_error` when the network cannot be reached."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from backend.networks.base import NetworkError
from backend.networks.tiktok.adapter import CONSENT, TikTokAdapter
from backend.services import accounts, choices
from backend.services import keys as keys_service
from tests.api.posts_support import sandbox  # noqa: F401  (fixture)
from tests.conftest import key_headers, session_headers

PUBLIC = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]
PRIVATE = ["FOLLOWER_OF_CREATOR", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    choices.clear_cache()


def get(client, owner, account_id: str, expect: int = 200) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    r = client.get(f"/v1/accounts/{account_id}/choices", headers=key_headers(owner.api_key))
    assert r.status_code == expect, r.text
    return r.json()  # type: ignore[no-any-return]


def fields(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["field"]: f for f in body["fields"]}


def test_an_audited_apps_public_account_offers_its_three_levels(
    client, owner, audited_tiktok, sandbox
) -> None:  # type: ignore[no-untyped-def]
    body = get(client, owner, sandbox["tiktok"]["id"])
    assert body["supported"] is True and body["platform"] == "tiktok"
    privacy = fields(body)["privacyLevel"]
    assert privacy["allowed"] == PUBLIC and privacy["offered"] == PUBLIC and privacy["required"] is True
    assert not any(f["locked"] for f in body["fields"])  # a public account: nothing turned off
    assert body["creator"]["name"] and body["creator"]["handle"]
    assert body["limits"] == {"maxVideoDurationS": 600.0}
    assert body["consent"] == CONSENT == "By posting, you agree to TikTok's Music Usage Confirmation."
    assert body["networkAnswer"]["privacy_level_options"] == PUBLIC and body["fetchedAt"]


def test_an_unaudited_app_may_post_nothing_to_a_public_account(client, owner, sandbox) -> None:  # type: ignore[no-untyped-def]
    body = get(client, owner, sandbox["tiktok"]["id"])
    privacy = fields(body)["privacyLevel"]
    assert privacy["allowed"] == [] and privacy["offered"] == PUBLIC
    assert "make the TikTok account private" in privacy["note"] and body["notes"] == [privacy["note"]]


def test_an_unaudited_apps_private_account_allows_self_only_with_its_interactions_locked(  # type: ignore[no-untyped-def]
    client, owner, settings
) -> None:
    acc = accounts.connect_sandbox(settings, owner.workspace_id, "tiktok", "Private TikTok", private=True)
    body = get(client, owner, acc.id)
    by = fields(body)
    assert by["privacyLevel"]["allowed"] == ["SELF_ONLY"] and by["privacyLevel"]["offered"] == PRIVATE
    assert "only as SELF_ONLY" in by["privacyLevel"]["note"]
    # creator_info: duet and stitch are off on a private account; comments are the creator's setting
    assert (
        by["disableDuet"]["locked"] and by["disableStitch"]["locked"] and not by["disableComment"]["locked"]
    )
    assert "Duet is off for this account" in by["disableDuet"]["note"]


def test_a_network_without_choices_answers_none_without_calling_it(
    client, owner, sandbox, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    body = get(client, owner, sandbox["linkedin"]["id"])
    assert body["supported"] is False and body["fields"] == [] and body["creator"] is None
    assert body["consent"] is None and body["networkAnswer"] == {}


def test_answers_are_kept_30_seconds(client, owner, audited_tiktok, sandbox, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    real = TikTokAdapter.creator_info

    def counted(self, token):  # type: ignore[no-untyped-def]
        calls.append(token)
        return real(self, token)

    monkeypatch.setattr(TikTokAdapter, "creator_info", counted)
    first = get(client, owner, sandbox["tiktok"]["id"])
    assert get(client, owner, sandbox["tiktok"]["id"]) == first
    assert len(calls) == 1
    monkeypatch.setattr(choices, "CACHE_S", 0.0)
    choices.clear_cache()
    get(client, owner, sandbox["tiktok"]["id"])
    assert len(calls) == 2


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("TikTok is down"),
        NetworkError("retriable", "TikTok had an internal error", code="internal_error"),
    ],
)
def test_the_network_unreachable_is_502_network_error(client, owner, sandbox, monkeypatch, failure) -> None:  # type: ignore[no-untyped-def]
    def down(self, token):  # type: ignore[no-untyped-def]
        raise failure

    monkeypatch.setattr(TikTokAdapter, "creator_info", down)
    body = get(client, owner, sandbox["tiktok"]["id"], 502)
    assert body["error"] == "network_error" and "try again" in body["message"]
    assert body["details"][0]["platform"] == "tiktok"


def test_a_refusal_is_400_network_refused(client, owner, sandbox, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def refused(self, token):  # type: ignore[no-untyped-def]
        raise NetworkError("permanent", "the account did not grant posting", code="scope_not_authorized")

    monkeypatch.setattr(TikTokAdapter, "creator_info", refused)
    body = get(client, owner, sandbox["tiktok"]["id"], 400)
    assert body["error"] == "network_refused" and body["details"][0]["error"] == "scope_not_authorized"


def test_scope_and_workspace(client, owner, other_owner, settings, sandbox) -> None:  # type: ignore[no-untyped-def]
    theirs = accounts.connect_sandbox(settings, other_owner.workspace_id, "tiktok", "Theirs")
    assert get(client, owner, theirs.id, 404)["error"] == "account_not_found"
    assert get(client, owner, "acc_nope", 404)["error"] == "account_not_found"
    _, without = keys_service.create(owner.workspace_id, "without", None, ["publish:posts"])
    _, with_ = keys_service.create(owner.workspace_id, "with", None, ["accounts:read"])
    path = f"/v1/accounts/{sandbox['tiktok']['id']}/choices"
    r = client.get(path, headers=key_headers(without))
    assert r.status_code == 403 and r.json()["error"] == "insufficient_scope"
    assert client.get(path, headers=key_headers(with_)).status_code == 200
    assert client.get(path, headers=session_headers(owner.session_token)).status_code == 200
    assert client.get(path).status_code == 401
    accounts.disconnect(owner.workspace_id, sandbox["tiktok"]["id"])
    assert get(client, owner, sandbox["tiktok"]["id"], 404)["error"] == "account_not_found"
