"""LinkedIn's strict emulator (issue 29): what LinkedIn refuses a developer app, by the app's products, kind and
day — each rule a row of the package's fidelity table (backend/networks/linkedin/docs.md)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.networks.linkedin.helpers import (
    authorize,
    client,
    exchange,
    headers,
    member_post,
    sandbox,
    token_for,
)

MEMBER = "openid profile w_member_social"
ORGS = "w_organization_social r_organization_admin r_organization_social"


@pytest.mark.parametrize(
    ("version", "expanded"),
    [("202506", "20250601"), ("202511", "20251101"), ("202512", "20251201"), ("202701", "20270101")],
)
def test_a_version_not_active_is_refused_426(tmp_path: Path, version: str, expanded: str) -> None:
    sb = sandbox(tmp_path)
    ident = sb.register_account("linkedin", "Jo")
    r = member_post(client(sb), ident.access_token, ident.external_account_id)
    assert r.status_code == 201  # 202603, active on 2026-11-28
    r = client(sb).post(
        "/rest/posts",
        json={"author": ident.external_account_id},
        headers=headers(ident.access_token, version),
    )
    assert r.status_code == 426
    assert r.json() == {
        "status": 426,
        "code": "NONEXISTENT_VERSION",
        "message": f"Requested version {expanded} is not active",
    }


def test_versions_are_judged_on_the_app_day_and_revisions_accepted(tmp_path: Path) -> None:
    sb = sandbox(tmp_path, today=date(2027, 1, 16))  # the day after 202601's sunset
    ident = sb.register_account("linkedin", "Jo")
    c = client(sb)
    post = {"author": ident.external_account_id, "commentary": "x", "visibility": "PUBLIC"}
    assert c.post("/rest/posts", json=post, headers=headers(ident.access_token, "202601")).status_code == 426
    r = member_post(c, ident.access_token, ident.external_account_id)
    assert r.status_code == 201
    r = c.post(
        "/rest/posts",
        json={**post, "lifecycleState": "PUBLISHED", "distribution": {}},
        headers=headers(ident.access_token, "202603.01"),
    )
    assert r.status_code == 201


def test_organisation_lookups_need_a_version_and_the_admin_scope(tmp_path: Path) -> None:
    sb = sandbox(tmp_path, "openid", "share", "community")
    c = client(sb)
    token = token_for(c, f"{MEMBER} {ORGS}", sandbox_pages="2")
    acls = "/rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED"
    assert c.get(acls, headers=headers(token)).status_code == 200
    missing = c.get(acls, headers={"Authorization": f"Bearer {token}"})
    assert missing.status_code == 400 and missing.json()["code"] == "VERSION_MISSING"
    sunset = c.get(acls, headers=headers(token, "202506"))
    assert sunset.status_code == 426 and sunset.json()["code"] == "NONEXISTENT_VERSION"
    assert c.get("/rest/organizations?ids=List(1)", headers=headers(token, "202511")).status_code == 426
    narrow = token_for(c, MEMBER, sandbox_user="Narrow", sandbox_pages="2")
    r = c.get(acls, headers=headers(narrow))
    assert r.status_code == 403 and r.json()["code"] == "ACCESS_DENIED"
    assert "organizationAcls.FINDER-roleAssignee.20260301" in r.json()["message"]


def test_a_new_app_is_refused_the_organisation_scopes_at_consent(tmp_path: Path) -> None:
    c = client(sandbox(tmp_path))
    got = authorize(c, f"{MEMBER} w_organization_social r_organization_admin")
    assert "code" not in got and got["state"] == "st"
    assert got["error"] == "unauthorized_scope_error"
    assert (
        got["error_description"]
        == "Scope &quot;w_organization_social&quot; is not authorized for your application"
    )
    assert authorize(c, f"{MEMBER} r_member_social")["error"] == "unauthorized_scope_error"
    assert "code" in authorize(c, MEMBER)  # the self-serve products' scopes
    # an app approved for the Community Management API is granted them
    c2 = client(sandbox(tmp_path / "cma", "openid", "share", "community"))
    assert "code" in authorize(c2, f"{MEMBER} {ORGS}")


def test_a_web_app_sending_pkce_fails_client_authentication(tmp_path: Path) -> None:
    c = client(sandbox(tmp_path))
    code = authorize(c, MEMBER, code_challenge="c" * 43, code_challenge_method="S256")["code"]
    r = exchange(c, code, code_verifier="v" * 64)
    assert r.status_code == 401
    assert r.json() == {"error": "invalid_client", "error_description": "Client authentication failed"}
    # a verifier without a challenge, or a challenge without a verifier: refused the same way
    assert exchange(c, authorize(c, MEMBER)["code"], code_verifier="v" * 64).status_code == 401
    code = authorize(c, MEMBER, code_challenge="c" * 43, code_challenge_method="S256")["code"]
    assert exchange(c, code).status_code == 401
    # without PKCE: the token, with the scopes granted (comma-separated, as LinkedIn answers them)
    ok = exchange(c, authorize(c, MEMBER)["code"])
    assert ok.status_code == 200 and ok.json()["scope"] == "openid,profile,w_member_social"
    assert "refresh_token" not in ok.json()


def test_a_native_app_uses_pkce(tmp_path: Path) -> None:
    import base64
    import hashlib

    c = client(sandbox(tmp_path, kind="native"))
    verifier = "v" * 64
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    code = authorize(c, MEMBER, code_challenge=challenge, code_challenge_method="S256")["code"]
    assert exchange(c, code, code_verifier=verifier).status_code == 200


def test_posting_needs_the_posting_scope_and_organisations_the_cma(tmp_path: Path) -> None:
    sb = sandbox(tmp_path)
    c = client(sb)
    reader = token_for(c, "openid profile", sandbox_user="Reader")
    me = c.get("/v2/userinfo", headers={"Authorization": f"Bearer {reader}"}).json()["sub"]
    r = member_post(c, reader, f"urn:li:person:{me}")
    assert r.status_code == 403
    assert r.json() == {
        "status": 403,
        "serviceErrorCode": 100,
        "code": "ACCESS_DENIED",
        "message": "Not enough permissions to access: partnerApiPostsExternal.CREATE.20260301",
    }
    # an organisation's sandbox account of a new app: the app holds no w_organization_social
    org = sb.register_account("linkedin", "Acme")
    from backend.networks.sandbox.core import write
    from backend.networks.sandbox.store import SandboxAccount

    with write():
        SandboxAccount.update(external_id="urn:li:organization:123").where(
            SandboxAccount.id == org.sandbox_account_id
        ).execute()
    r = member_post(c, org.access_token, "urn:li:organization:123")
    assert r.status_code == 403 and "partnerApiPostsExternal.CREATE" in r.json()["message"]


def test_the_author_finder_needs_r_member_social(tmp_path: Path) -> None:
    sb = sandbox(tmp_path)
    ident = sb.register_account("linkedin", "Jo")
    c = client(sb)
    assert member_post(c, ident.access_token, ident.external_account_id).status_code == 201
    url = f"/rest/posts?q=author&author={ident.external_account_id}&count=10"
    r = c.get(url, headers=headers(ident.access_token))
    assert r.status_code == 403
    assert r.json() == {
        "status": 403,
        "serviceErrorCode": 100,
        "code": "ACCESS_DENIED",
        "message": "Not enough permissions to access: partnerApiPostsExternal.FINDER-author.20260301",
    }
    partner = sandbox(tmp_path / "partner", "openid", "share", "partner")
    ident = partner.register_account("linkedin", "Jo")
    c = client(partner)
    assert member_post(c, ident.access_token, ident.external_account_id).status_code == 201
    url = f"/rest/posts?q=author&author={ident.external_account_id}&count=10"
    assert len(c.get(url, headers=headers(ident.access_token)).json()["elements"]) == 1


def _init_image(c, token: str, owner: str) -> dict:  # type: ignore[no-untyped-def]
    r = c.post(
        "/rest/images?action=initializeUpload",
        json={"initializeUploadRequest": {"owner": owner}},
        headers=headers(token),
    )
    assert r.status_code == 200, r.text
    return r.json()["value"]


def test_bytes_put_as_json_fail_processing(tmp_path: Path) -> None:
    sb = sandbox(tmp_path)
    ident = sb.register_account("linkedin", "Jo")
    c = client(sb)
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 64
    plain = _init_image(c, ident.access_token, ident.external_account_id)
    r = c.put(
        plain["uploadUrl"],
        content=png,
        headers={"Authorization": f"Bearer {ident.access_token}", "Content-Type": "image/png"},
    )
    assert r.status_code == 201
    as_json = _init_image(c, ident.access_token, ident.external_account_id)
    r = c.put(
        as_json["uploadUrl"],
        content=png,
        headers={**headers(ident.access_token), "Content-Type": "application/json"},
    )
    assert r.status_code == 201  # taken…
    from urllib.parse import quote

    def status(urn: str) -> str:
        got = c.get(f"/rest/images/{quote(urn, safe='')}", headers=headers(ident.access_token))
        return str(got.json()["status"])

    assert status(plain["image"]) == "AVAILABLE"
    assert status(as_json["image"]) == "PROCESSING_FAILED"  # … and its processing fails
    # a PUT without the member's Bearer token
    other = _init_image(c, ident.access_token, ident.external_account_id)
    assert c.put(other["uploadUrl"], content=png, headers={"Content-Type": "image/png"}).status_code == 401


def test_commentary_over_3000_characters_as_sent_is_refused(tmp_path: Path) -> None:
    sb = sandbox(tmp_path)
    ident = sb.register_account("linkedin", "Jo")
    c = client(sb)
    assert (
        member_post(c, ident.access_token, ident.external_account_id, commentary="x" * 3000).status_code
        == 201
    )
    r = member_post(c, ident.access_token, ident.external_account_id, commentary="x" * 3001)
    assert r.status_code == 422


def test_an_unknown_product_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown LinkedIn product"):
        sandbox(tmp_path, "marketing").emulator("linkedin")


def test_a_registered_redirect_url_must_match_exactly(tmp_path: Path) -> None:
    from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
    from backend.services.adapters import sandbox_emulators

    sb = Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            options=(("linkedin.redirect_port", 53682),),  # SOCIALPUB_LINKEDIN_REDIRECT_PORT=53682
        )
    ).activate()
    c = client(sb)
    assert "code" in authorize(c, MEMBER)  # http://127.0.0.1:53682/callback: the registered URL
    params = {
        "client_id": "app-1",
        "redirect_uri": "http://127.0.0.1:40000/callback",
        "response_type": "code",
        "scope": MEMBER,
        "state": "st",
    }
    r = c.get("/oauth/v2/authorization", params=params)
    assert r.status_code == 400 and "location" not in r.headers  # an error page, never a redirect
    assert "redirect_uri does not match the registered value" in r.text


def test_the_setting_registers_the_redirect_url_of_the_sandbox(tmp_path: Path) -> None:
    from backend.config import Settings
    from backend.services.adapters import sandbox_options
    from tests.support.networks import own

    s = Settings(data_dir=tmp_path)
    assert ("linkedin.redirect_port", 53682) not in sandbox_options(s)
    own(s, "linkedin").redirect_port = 53682
    assert ("linkedin.redirect_port", 53682) in sandbox_options(s)
