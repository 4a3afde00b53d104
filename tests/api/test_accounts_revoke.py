"""DELETE /v1/accounts/:id (the CLI's `accounts remove`) disconnects the account here, then revokes its token at the
network where the network offers it (Mastodon `POST /oauth/revoke` with socialpub's app on the instance; Bluesky
`deleteSession`), best effort: the disconnection never fails because the network is down, and the outcome is in
the answer (`tokenRevocation`). The emulators refuse a revoked token afterwards."""

from __future__ import annotations

from typing import Any

import httpx

from backend.networks.mastodon.adapter import base_url
from backend.services import adapters
from backend.store.models import Account
from tests.api.posts_support import sandbox  # noqa: F401  (fixture)
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
