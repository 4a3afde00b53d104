"""`socialpub accounts remove ID` disconnects the account and says what its network did with the token: revoked
(the sandbox Mastodon instance's `POST /oauth/revoke`, Google's `POST /revoke`), or that the network offers no revocation."""

from __future__ import annotations

from tests.cli.conftest import invoke


def _account(network: str) -> dict:  # type: ignore[type-arg]
    return next(a for a in invoke("accounts", "list", "--json").json()["items"] if a["platform"] == network)


def test_remove_revokes_a_mastodon_token_and_says_so(embedded) -> None:  # type: ignore[no-untyped-def]
    acc = _account("mastodon")
    r = invoke("accounts", "remove", acc["id"])
    assert r.code == 0, r.err
    assert (
        "Disconnected mastodon account" in r.out
        and "Token at the network: revoked — the token was revoked at" in r.out
    )
    r = invoke("accounts", "remove", _account("facebook")["id"], "--json")
    assert r.code == 0, r.err
    assert r.json()["tokenRevocation"]["status"] == "not_offered"


def test_remove_revokes_a_youtube_grant_at_google(embedded) -> None:  # type: ignore[no-untyped-def]
    r = invoke("accounts", "remove", _account("youtube")["id"])
    assert r.code == 0, r.err
    assert "Token at the network: revoked — the grant was revoked at Google" in r.out
