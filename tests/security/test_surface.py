"""Security review: the media host serves only media rows, fetched URLs stay public, login does not reveal
which emails exist. No traffic leaves the loopback range (the resolver is stubbed)."""

from __future__ import annotations

import base64

import pytest

from backend.outbound import guard
from tests.conftest import key_headers
from tests.media import corpus

TRAVERSALS = [
    "/media/session_secret.key",
    "/media/socialpub.db",
    "/media/..%2Fsession_secret.key",
    "/media/%2e%2e%2fsession_secret.key",
    "/media/..%5csession_secret.key",
    "/media/.tmp",
    "/media/%2e%2e",
    "/media/..",
    "/media/../session_secret.key",
    "/media/%252e%252e%252fsocialpub.db",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_media_host_never_reaches_other_files_of_the_data_dir(client, owner, path) -> None:  # type: ignore[no-untyped-def]
    r = client.get("/media/" + _upload_key(client, owner))
    assert r.status_code == 200
    r = client.get(path)
    assert r.status_code == 404, (path, r.status_code)
    assert r.headers["content-type"].startswith("application/json")


def _upload_key(client, owner) -> str:  # type: ignore[no-untyped-def]
    r = client.post(
        "/v1/media",
        json={"base64": base64.b64encode(corpus.jpeg(50, 50)).decode()},
        headers=key_headers(owner.api_key),
    )
    assert r.status_code == 201, r.text
    return r.json()["key"]


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.5",
        "169.254.169.254",
        "100.64.1.1",
        "fd00::1",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",
        "2002:a00:1::1",
    ],
)
def test_names_resolving_to_internal_addresses_are_never_fetched(client, owner, monkeypatch, address) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(guard, "RESOLVER", lambda host, port: [address])
    r = client.post(
        "/v1/media", json={"url": "https://cdn.example.com/pic.jpg"}, headers=key_headers(owner.api_key)
    )
    assert r.status_code == 400 and r.json()["details"][0]["rule"] == "address", r.text


def test_login_verifies_a_hash_for_unknown_emails_too(client, owner, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from backend.services import security

    calls: list[str] = []
    real = security.verify_password

    def counting(password: str, stored: str) -> bool:
        calls.append(stored)
        return real(password, stored)

    monkeypatch.setattr(security, "verify_password", counting)
    r1 = client.post("/v1/auth/login", json={"email": "nobody@test.local", "password": "wrong"})
    r2 = client.post("/v1/auth/login", json={"email": owner.email, "password": "wrong"})
    assert r1.status_code == r2.status_code == 401
    assert r1.json() == r2.json()
    assert len(calls) == 2 and all(c.startswith("scrypt$16384$") for c in calls)
