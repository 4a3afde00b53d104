"""POST /v1/accounts/oauth/start with `instance`: required for Mastodon, refused for another network, the instance's
address judged by the data dir's address rule before any call (no traffic: the refused addresses are literals, and
a name is resolved by the stubbed resolver)."""

from __future__ import annotations

import pytest

from backend.outbound import guard
from tests.conftest import session_headers

START = "/v1/accounts/oauth/start"
REDIRECT = "http://127.0.0.1:8765/callback"


def start(client, owner, **body):  # type: ignore[no-untyped-def]
    return client.post(
        START, json={"redirectUri": REDIRECT, **body}, headers=session_headers(owner.session_token)
    )


def test_mastodon_needs_an_instance_and_another_network_takes_none(client, owner) -> None:  # type: ignore[no-untyped-def]
    r = start(client, owner, platform="mastodon")
    assert r.status_code == 400 and r.json()["error"] == "instance_required"
    r = start(client, owner, platform="facebook", instance="social.example")
    assert r.status_code == 400 and r.json()["error"] == "instance_not_supported"
    r = start(client, owner, platform="mastodon", instance="https://social.example/about")
    assert r.status_code == 400 and r.json()["error"] == "invalid_instance"


def test_a_token_from_elsewhere_cannot_say_its_instance_so_it_is_refused_not_a_502(client, owner) -> None:  # type: ignore[no-untyped-def]
    """Found by the fuzz: a Mastodon token given to POST /v1/accounts/connect/token was a 502 network_error."""
    r = client.post(
        "/v1/accounts/connect/token",
        json={"platform": "mastodon", "accessToken": "a-token"},
        headers=session_headers(owner.session_token),
    )
    assert r.status_code == 400 and r.json()["error"] == "instance_required", r.text
    assert "--instance HOST" in r.json()["message"]


@pytest.mark.parametrize("given", ["10.0.0.7", "127.0.0.1:8080", "social.internal.example"])
def test_an_instance_off_the_public_internet_is_refused_by_the_address_rule(
    client, owner, settings, monkeypatch, given
) -> None:  # type: ignore[no-untyped-def]
    settings.allow_private_urls = False
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: ["192.168.1.20"])  # a name resolving privately
    r = start(client, owner, platform="mastodon", instance=given)
    assert r.status_code == 400 and r.json()["error"] == "instance_refused", r.text
    assert "address rule" in r.json()["message"]
