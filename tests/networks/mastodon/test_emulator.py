"""The Mastodon emulator is as strict as an instance with a newly registered app (fidelity table: docs.md): app
registration, Doorkeeper's authorize and token answers, PKCE S256 only where advertised, scopes, the instance's
limits and its refusals' words."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from backend.networks.mastodon.emulator import SANDBOX_HOST, configure_instance
from backend.networks.oauth import challenge_of
from backend.services.adapters import sandbox

BASE = f"https://{SANDBOX_HOST}"
REDIRECT = "http://127.0.0.1/callback"


@pytest.fixture
def c(settings):  # type: ignore[no-untyped-def]
    return httpx.Client(transport=sandbox(settings).transport("mastodon"), base_url=BASE)


def register(c: httpx.Client, scopes: str = "write:statuses write:media read:statuses profile") -> dict:  # type: ignore[type-arg]
    r = c.post(
        "/api/v1/apps", json={"client_name": "socialpub", "redirect_uris": [REDIRECT], "scopes": scopes}
    )
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def authorize(c: httpx.Client, app: dict, **params: str) -> httpx.Response:  # type: ignore[type-arg]
    q = {
        "response_type": "code",
        "client_id": app["client_id"],
        "redirect_uri": "http://127.0.0.1:5555/callback",
        "scope": "write:statuses",
        "state": "st",
        **params,
    }
    return c.get("/oauth/authorize", params=q)


def back(r: httpx.Response) -> dict[str, str]:
    assert r.status_code == 302, r.text
    return {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"]).query).items()}


def token(c: httpx.Client, app: dict, code: str, **extra: str) -> httpx.Response:  # type: ignore[type-arg]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": app["client_id"],
        "client_secret": app["client_secret"],
        "redirect_uri": "http://127.0.0.1:5555/callback",
        **extra,
    }
    return c.post("/oauth/token", data=form)


def test_an_app_registers_with_no_review_and_bad_redirects_are_refused(c) -> None:  # type: ignore[no-untyped-def]
    app = register(c)
    assert app["client_secret_expires_at"] == 0 and app["redirect_uris"] == [REDIRECT]
    r = c.post("/api/v1/apps", json={"client_name": "x", "redirect_uris": ["javascript:alert(1)"]})
    assert r.status_code == 422 and r.json() == {
        "error": "Validation failed: Redirect URI must be an absolute URI."
    }
    assert (
        c.post(
            "/api/v1/apps", json={"client_name": "x", "redirect_uris": [REDIRECT], "scopes": "nope"}
        ).status_code
        == 422
    )


def test_a_loopback_ip_redirect_matches_on_any_port_localhost_does_not(c) -> None:  # type: ignore[no-untyped-def]
    app = register(c)
    assert "code" in back(authorize(c, app))
    r = authorize(c, app, redirect_uri="http://localhost:5555/callback")
    assert r.status_code == 400 and "match client redirect URI" in r.text and "location" not in r.headers


def test_a_scope_the_app_was_not_registered_with_is_invalid_scope(c) -> None:  # type: ignore[no-untyped-def]
    app = register(c, "write:statuses")
    got = back(authorize(c, app, scope="write:statuses write:media"))
    assert got["error"] == "invalid_scope" and got["state"] == "st"


def test_pkce_s256_only_and_checked(c) -> None:  # type: ignore[no-untyped-def]
    app = register(c)
    got = back(authorize(c, app, code_challenge="abc", code_challenge_method="plain"))
    assert got["error"] == "invalid_request"
    code = back(authorize(c, app, code_challenge=challenge_of("v" * 50), code_challenge_method="S256"))[
        "code"
    ]
    wrong = token(c, app, code, code_verifier="w" * 50)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    code = back(authorize(c, app, code_challenge=challenge_of("v" * 50), code_challenge_method="S256"))[
        "code"
    ]
    ok = token(c, app, code, code_verifier="v" * 50)
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["token_type"] == "Bearer" and "expires_in" not in body and "refresh_token" not in body


def test_before_4_3_there_is_no_metadata_and_pkce_is_ignored(c) -> None:  # type: ignore[no-untyped-def]
    assert c.get("/.well-known/oauth-authorization-server").json()["code_challenge_methods_supported"] == [
        "S256"
    ]
    configure_instance(SANDBOX_HOST, version="4.2.0")
    assert c.get("/.well-known/oauth-authorization-server").status_code == 404
    app = register(c, "write:statuses read:accounts")
    assert "scopes" not in app  # before 4.3 the registration does not echo them
    assert register_refused_profile(c)
    code = back(authorize(c, app))["code"]
    assert token(c, app, code).status_code == 200


def register_refused_profile(c: httpx.Client) -> bool:
    r = c.post("/api/v1/apps", json={"client_name": "x", "redirect_uris": [REDIRECT], "scopes": "profile"})
    return r.status_code == 422


def test_a_wrong_secret_is_invalid_client(c) -> None:  # type: ignore[no-untyped-def]
    app = register(c)
    code = back(authorize(c, app))["code"]
    r = token(c, app, code, client_secret="nope")
    assert r.status_code == 401 and r.json()["error"] == "invalid_client"


def test_scopes_are_enforced_on_the_api(c, settings) -> None:  # type: ignore[no-untyped-def]
    app = register(c, "write:statuses read:accounts")
    code = back(authorize(c, app, scope="write:statuses"))["code"]
    tok = token(c, app, code).json()["access_token"]
    auth = {"Authorization": f"Bearer {tok}"}
    r = c.get("/api/v1/accounts/verify_credentials", headers=auth)
    assert r.status_code == 403 and r.json() == {"error": "This action is outside the authorized scopes"}
    r = c.post("/api/v2/media", headers=auth, files={"file": ("a.jpg", b"\xff\xd8\xff", "image/jpeg")})
    assert r.status_code == 403
    r = c.post("/api/v1/statuses", headers=auth, json={"status": "hi"})
    assert r.status_code == 200 and r.json()["application"]["name"] == "socialpub"
    assert r.headers["X-RateLimit-Reset"].endswith("Z") and r.headers["X-RateLimit-Limit"] == "300"
    r = c.get("/api/v1/accounts/verify_credentials", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json() == {"error": "The access token is invalid"}


def test_statuses_refused_in_the_instances_words(c, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("mastodon")
    auth = {"Authorization": f"Bearer {ident.access_token}"}
    r = c.post("/api/v1/statuses", headers=auth, json={"status": "  "})
    assert r.status_code == 422 and r.json() == {"error": "Validation failed: Text can't be blank"}
    r = c.post("/api/v1/statuses", headers=auth, json={"status": "x" * 501})
    assert r.json() == {"error": "Validation failed: Text character limit of 500 exceeded"}
    link = "https://example.com/" + "y" * 200
    assert (
        c.post("/api/v1/statuses", headers=auth, json={"status": "x" * 470 + " " + link}).status_code == 200
    )
    r = c.post("/api/v1/statuses", headers=auth, json={"status": "x" * 480, "spoiler_text": "y" * 21})
    assert r.status_code == 422  # the content warning counts
    r = c.post("/api/v2/media", headers=auth, files={"file": ("a.txt", b"hello", "text/plain")})
    assert r.json() == {"error": "Validation failed: File content type is invalid, File is invalid"}
    ids = []
    for _ in range(5):
        m = c.post("/api/v2/media", headers=auth, files={"file": ("a.jpg", b"\xff\xd8\xff", "image/jpeg")})
        assert m.status_code == 200 and m.json()["url"]
        ids.append(m.json()["id"])
    r = c.post("/api/v1/statuses", headers=auth, json={"status": "five", "media_ids": ids})
    assert r.json() == {"error": "Cannot attach more than 4 files"}
    v = c.post("/api/v2/media", headers=auth, files={"file": ("v.mp4", b"\x00" * 32, "video/mp4")})
    assert v.status_code == 202 and v.json()["url"] is None
    r = c.post(
        "/api/v1/statuses", headers=auth, json={"status": "mixed", "media_ids": [ids[0], v.json()["id"]]}
    )
    assert r.json() == {"error": "Cannot attach a video to a post that already contains images"}
