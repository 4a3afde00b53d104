"""Owner sessions (spec 5.1): login, signed expiring tokens, refused secrets."""

from __future__ import annotations

from datetime import timedelta

import jwt
import pytest
import time_machine

from backend import clock
from backend.config import Settings
from backend.services import security
from tests.conftest import session_headers


def test_login_returns_a_working_session(client, owner):
    r = client.post("/v1/auth/login", json={"email": owner.email, "password": owner.password})
    assert r.status_code == 200
    token = r.json()["sessionToken"]
    assert r.json()["workspaceId"] == owner.workspace_id
    assert client.get("/v1/api-keys", headers=session_headers(token)).status_code == 200


@pytest.mark.parametrize(
    "email,password", [("owner@test.local", "wrong password"), ("nobody@test.local", "x" * 10)]
)
def test_login_refused(client, owner, email, password):
    r = client.post("/v1/auth/login", json={"email": email, "password": password})
    assert r.status_code == 401 and r.json()["error"] == "invalid_credentials"


def test_session_expires(client, owner, settings):
    with time_machine.travel(clock.now() + timedelta(seconds=settings.session_ttl_s + 5), tick=False):
        r = client.get("/v1/api-keys", headers=session_headers(owner.session_token))
        assert r.status_code == 401 and r.json()["error"] == "session_expired"


def test_tampered_or_foreign_tokens_refused(client, owner):
    forged = jwt.encode(
        {
            "sub": owner.owner_id,
            "ws": owner.workspace_id,
            "typ": "session",
            "exp": int(clock.now().timestamp()) + 600,
        },
        "another-secret-" * 4,
        algorithm="HS256",
    )
    for token in (forged, owner.session_token[:-3] + "abc", "not.a.jwt"):
        r = client.get("/v1/api-keys", headers=session_headers(token))
        assert r.status_code == 401 and r.json()["error"] == "invalid_session"
    r = client.get("/v1/api-keys", headers={"Authorization": "Basic abc"})
    assert r.status_code == 401


def test_secret_is_generated_with_tight_permissions(settings):
    path = security.secret_path(settings)
    assert path.exists()
    assert path.stat().st_mode & 0o077 == 0
    assert len(path.read_text().strip()) >= 32


@pytest.mark.parametrize("secret", ["", "secret", "changeme", "short"])
def test_default_or_empty_secret_refused(tmp_path, secret):
    with pytest.raises(RuntimeError):
        security.load_secret(Settings(data_dir=tmp_path, secret_key=secret))


def test_missing_secret_file_refused(tmp_path):
    with pytest.raises(RuntimeError, match="socialpub init"):
        security.load_secret(Settings(data_dir=tmp_path / "empty"))


def test_passwords_use_a_slow_salted_hash():
    h1, h2 = security.hash_password("pw123456"), security.hash_password("pw123456")
    assert h1 != h2 and h1.startswith("scrypt$")
    assert security.verify_password("pw123456", h1) and not security.verify_password("pw1234567", h1)


def test_the_dummy_hash_costs_a_real_verification_and_matches_nothing():
    real, dummy = security.hash_password("pw123456"), security.dummy_password_hash()
    assert (
        dummy.split("$")[:4] == real.split("$")[:4]
    )  # scheme and scrypt parameters: the same work to verify
    assert len(dummy.split("$")) == 6 and dummy != security.dummy_password_hash()
    assert not security.verify_password("pw123456", dummy) and not security.verify_password("", dummy)
