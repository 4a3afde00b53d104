"""DELETE /v1/accounts/:id (the CLI's `accounts remove`) disconnects the account here, then revokes its token at the
network where the network offers it (Mastodon `POST /oauth/revoke` with socialpub's app on the instance; Bluesky
`deleteSession`; Google `POST /revoke`; TikTok `POST /v2/oauth/revoke/` with socialpub's app), best effort: the disconnection never fails because the network is down, and the outcome is in
the answer (`tokenRevocation`). The emulators refuse a revoked token afterwards."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.mastodon.adapter import base_url
from backend.services import adapters, oauth_connect
from backend.store.models import Account
from tests.api.posts_support import sandbox  # noqa: F401  (fixture)
from tests.api.test_accounts_oauth import finish, live, post  # noqa: F401  (live: fixture)
from tests.conftest import session_headers


def _remove(client: Any, owner: Any, account_id: str) -> dict[str, Any]:
    r = client.delete(f"/v1/accounts/{account_id}", headers=session_headers(owner.session_token))
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    assert body["status"] == "disconnected"
    return body


def test_a_mastodon_token_is_revoked_at_its_instance(client, owner, settings, sandbox) -> None:  # noqa: F811
    acc = Account.get_by_id(sandbox["mastodon"]["id"])
    token, host = acc.access_token, acc.external_id.partition("@")[2]
    with adapters.network_client(settings, "mastodon", "sandbox") as http:
        me = f"{base_url(host)}/api/v1/accounts/verify_credentials"
        assert http.get(me, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        body = _remove(client, owner, acc.id)
        assert body["tokenRevocation"] == {
            "status": "revoked",
            "message": f"the token was revoked at {host}",
        }
        gone = http.get(me, headers={"Authorization": f"Bearer {token}"})
    assert gone.status_code == 401 and gone.json() == {"error": "The access token was revoked"}
    assert Account.get_by_id(acc.id).access_token == ""
    # again: nothing held any more, nothing to revoke
    assert _remove(client, owner, acc.id)["tokenRevocation"] is None


def test_the_network_down_never_fails_the_disconnection(client, owner, sandbox, monkeypatch) -> None:  # noqa: F811
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    monkeypatch.setattr(
        adapters, "network_client", lambda *_a, **_k: httpx.Client(transport=httpx.MockTransport(down))
    )
    body = _remove(client, owner, sandbox["mastodon"]["id"])
    assert body["tokenRevocation"]["status"] == "failed"
    assert "disconnected here all the same" in body["tokenRevocation"]["message"]
    acc = Account.get_by_id(sandbox["mastodon"]["id"])
    assert acc.status == "disconnected" and acc.access_token == "" and acc.refresh_token is None


def test_a_network_without_revocation_says_so(client, owner, sandbox) -> None:  # noqa: F811
    body = _remove(client, owner, sandbox["facebook"]["id"])
    assert body["tokenRevocation"]["status"] == "not_offered"
    assert "remove socialpub's access in Facebook's settings" in body["tokenRevocation"]["message"]
    # a sandbox Bluesky account's own token is no session: nothing to close
    body = _remove(client, owner, sandbox["bluesky"]["id"])
    assert body["tokenRevocation"]["status"] == "nothing_to_revoke"


def test_a_youtube_grant_is_revoked_at_google(client, owner, settings, sandbox) -> None:  # noqa: F811
    acc = Account.get_by_id(sandbox["youtube"]["id"])
    token = acc.access_token
    with adapters.network_client(settings, "youtube", "sandbox") as http:
        channels = "https://www.googleapis.com/youtube/v3/channels?part=id&mine=true"
        assert http.get(channels, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        body = _remove(client, owner, acc.id)
        assert body["tokenRevocation"] == {
            "status": "revoked",
            "message": "the grant was revoked at Google (its refresh and access tokens)",
        }
        gone = http.get(channels, headers={"Authorization": f"Bearer {token}"})
    assert gone.status_code == 401 and gone.json()["error"]["errors"][0]["reason"] == "authError"


def test_a_live_tiktok_grant_is_revoked_with_socialpubs_app(client, owner, live) -> None:  # noqa: F811
    done = finish(client, owner, live, "tiktok")
    r = post(
        client,
        owner,
        f"/v1/accounts/oauth/{done['grantId']}/connect",
        {"externalIds": [done["candidates"][0]["externalId"]]},
    )
    assert r.status_code == 201, r.text
    acc = Account.get_by_id(r.json()["items"][0]["id"])
    token, refresh = acc.access_token, acc.refresh_token
    body = _remove(client, owner, acc.id)
    assert body["tokenRevocation"] == {
        "status": "revoked",
        "message": "the token was revoked at TikTok: socialpub left the user's connected apps",
    }
    with adapters.network_client(live, "tiktok", "live") as http:
        me = http.get(
            "https://open.tiktokapis.com/v2/user/info/?fields=open_id",
            headers={"Authorization": f"Bearer {token}"},
        )
        again = http.post(
            "https://open.tiktokapis.com/v2/oauth/token/",
            data={
                "client_key": "app-tiktok",
                "client_secret": "s3cret-app",
                "grant_type": "refresh_token",
                "refresh_token": refresh,
            },
        )
    assert me.status_code == 401 and me.json()["error"]["code"] == "access_token_invalid"
    assert again.json()["error"] == "invalid_grant"


def test_a_sandbox_tiktok_account_without_socialpubs_app_says_why(client, owner, sandbox) -> None:  # noqa: F811
    """`init --sandbox`'s TikTok account holds no grant of a socialpub app: nothing to revoke, and no TikTok
    settings page to send the user to (a live account without the app configured: failed, naming the settings —
    test_a_live_tiktok_account_without_socialpubs_app_names_the_settings)."""
    body = _remove(client, owner, sandbox["tiktok"]["id"])
    assert body["tokenRevocation"]["status"] == "nothing_to_revoke"
    assert "a sandbox account" in body["tokenRevocation"]["message"]


def test_a_live_tiktok_account_without_socialpubs_app_names_the_settings(settings, sandbox) -> None:  # noqa: F811
    """A live account whose network needs socialpub's app to revoke (TikTok), the app not configured here: failed,
    naming the settings, and nothing sent (the app's absence is found before any call)."""
    held = Account.get_by_id(sandbox["tiktok"]["id"])
    held.kind = "live"  # as a live account would be held; not saved
    said = oauth_connect.revoke_grant(settings, held)
    assert said["status"] == "failed"
    assert (
        "SOCIALPUB_TIKTOK_CLIENT_ID" in said["message"]
        and "disconnected here all the same" in said["message"]
    )
