"""What connecting to an instance decides (research B.1a M1-M7, M13; B.4 tests 1-3, 6, 10)."""

from __future__ import annotations

import pytest

from backend.networks.mastodon.connect import (
    PUBLISH_SCOPES,
    REDIRECT_URI,
    ConnectRefused,
    instance_host,
    needs_registration,
    pkce_supported,
    registered_app,
    registration_body,
    scopes_for,
)

ANSWER = {
    "id": "563419",
    "name": "socialpub",
    "scopes": ["write:statuses", "write:media", "read:statuses", "profile"],
    "redirect_uris": ["http://127.0.0.1/callback"],
    "client_id": "TWhM-tNSuncnqN7DBJmoyeLnk6K3iJJ71KKXxgL1hPM",
    "client_secret": "ZEaFUFmF0umgBX1qKJDjaU99Q31lDkOU8NutzTOoliw",
    "client_secret_expires_at": 0,
}


@pytest.mark.parametrize(
    "given, host",
    [
        ("mastodon.social", "mastodon.social"),
        ("  Mastodon.Social ", "mastodon.social"),
        ("https://social.example/", "social.example"),
        ("@alice@social.example", "social.example"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("social.example:8443", "social.example:8443"),
    ],
)
def test_the_instance_host_from_what_the_user_typed(given: str, host: str) -> None:
    assert instance_host(given) == host


@pytest.mark.parametrize(
    "given",
    ["", "localhost", "https://social.example/@alice", "user:pw@social.example", "ftp://x.example", "a..b"],
)
def test_what_is_not_a_host_is_refused_with_a_reason(given: str) -> None:
    with pytest.raises(ConnectRefused) as refused:
        instance_host(given)
    assert "host" in str(refused.value)


def test_profile_where_the_instance_lists_it_else_read_accounts() -> None:
    assert scopes_for({"scopes_supported": ["read", "write", "profile"]}) == (*PUBLISH_SCOPES, "profile")
    assert scopes_for(None) == (*PUBLISH_SCOPES, "read:accounts")  # before 4.3: no metadata


def test_pkce_only_where_advertised() -> None:
    assert pkce_supported(200, {"code_challenge_methods_supported": ["S256"]})
    assert not pkce_supported(200, {"code_challenge_methods_supported": []})
    assert not pkce_supported(404, None)  # "before 4.3.0 … 404 Not Found"
    with pytest.raises(ConnectRefused):
        pkce_supported(503, None)  # cannot tell: never guess


def test_the_registration_asks_a_loopback_ip_redirect_and_the_scopes() -> None:
    body = registration_body((*PUBLISH_SCOPES, "profile"))
    assert body["redirect_uris"] == [REDIRECT_URI] == ["http://127.0.0.1/callback"]
    assert body["scopes"] == "write:statuses write:media read:statuses profile"
    app = registered_app("social.example", PUBLISH_SCOPES, ANSWER)
    assert app.client_id == ANSWER["client_id"]
    assert ANSWER["client_secret"] not in repr(app)


def test_a_refused_registration_says_the_instances_reason() -> None:
    with pytest.raises(ConnectRefused) as refused:
        registered_app(
            "social.example",
            PUBLISH_SCOPES,
            {"error": "Validation failed: Redirect URI must be an absolute URI."},
        )
    assert "Redirect URI must be an absolute URI" in str(refused.value)


def test_an_app_is_registered_again_when_its_scopes_no_longer_cover_the_ask() -> None:
    app = registered_app("social.example", PUBLISH_SCOPES, ANSWER)
    assert needs_registration(None, PUBLISH_SCOPES)
    assert not needs_registration(app, (*PUBLISH_SCOPES, "profile"))
    assert needs_registration(app, (*PUBLISH_SCOPES, "read:accounts"))
    pre_43 = registered_app("old.example", PUBLISH_SCOPES, {k: v for k, v in ANSWER.items() if k != "scopes"})
    assert pre_43.scopes == PUBLISH_SCOPES
