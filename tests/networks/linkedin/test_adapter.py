"""LinkedIn's adapter and OAuth app against the strict emulator of a NEW developer app (issue 29's findings, red
before their fixes): connect asks the self-serve scopes only and sends no PKCE, discovery makes no organisation
call, every call carries an active version, uploads are plain PUTs, and an ambiguous member post is never
reported absent (LinkedIn will not let the app read it back)."""

from __future__ import annotations

import dataclasses
import json
from datetime import date
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from backend.config import Settings
from backend.networks import oauth, oauth_apps
from backend.networks.base import Unverifiable
from backend.networks.linkedin.adapter import LinkedInAdapter, make_adapter
from backend.networks.linkedin.lifecycle import LIFECYCLE
from backend.networks.sandbox import Sandbox
from backend.services.adapters import make_adapter as adapter_of
from backend.services.adapters import sandbox
from tests.networks.conftest import IMG, VID, publication, resumed, saving
from tests.networks.linkedin.helpers import REDIRECT, TODAY
from tests.networks.linkedin.helpers import sandbox as app_sandbox
from tests.networks.test_networks import loader
from tests.support.networks import own


def _settings(tmp_path: Path, **env: object) -> Settings:
    s = Settings(data_dir=tmp_path)
    mine = own(s, "linkedin")
    mine.api_base = "http://127.0.0.1:9/rest"
    mine.client_id, mine.client_secret = "app-1", "s3cret"
    for k, v in env.items():
        setattr(mine, k, v)
    return s


def _spied(sb: Sandbox, seen: list[httpx.Request]) -> httpx.Client:
    emu = sb.transport("linkedin")

    def spy(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return emu.handle_request(req)

    return httpx.Client(transport=httpx.MockTransport(spy))


def _connect(sb: Sandbox, s: Settings, seen: list[httpx.Request], **sandbox_params: str):  # type: ignore[no-untyped-def]
    """The product's connect flow (authorize URL, consent, code exchange, discovery) against the emulator."""
    app = oauth_apps.app("linkedin", s)
    c = _spied(sb, seen)
    verifier, challenge = oauth.pkce_pair()
    url = oauth.authorize_url(app, REDIRECT, "state-1", challenge)
    r = c.get(url + "".join(f"&{k}={quote(v)}" for k, v in sandbox_params.items()))
    assert r.status_code == 302
    got = {k: v[0] for k, v in parse_qs(urlsplit(r.headers["location"]).query).items()}
    assert "error" not in got, got  # a new app is refused the organisation scopes at consent
    tokens = oauth.exchange_code(app, c, got["code"], REDIRECT, verifier)
    return oauth.discover("linkedin", s, c, tokens), tokens


def test_a_new_app_connects_the_member_with_the_self_serve_scopes(tmp_path: Path) -> None:
    sb = app_sandbox(tmp_path / "sb")
    seen: list[httpx.Request] = []
    found, tokens = _connect(sb, _settings(tmp_path), seen, sandbox_user="Jo", sandbox_pages="2")
    assert [(f.type, f.name) for f in found] == [("member", "Jo")]
    assert found[0].granted_scopes == ("openid", "profile", "w_member_social")
    authorize, exchange = seen[0], seen[1]
    q = parse_qs(urlsplit(str(authorize.url)).query)
    assert q["scope"] == ["openid profile w_member_social"]
    assert "code_challenge" not in q  # no PKCE for LinkedIn's web flow
    assert b"code_verifier" not in exchange.content
    assert not [r for r in seen if "/rest/organization" in str(r.url)]  # no organisation call at all


def test_organisation_posting_is_opt_in_and_needs_the_community_management_product(tmp_path: Path) -> None:
    s = _settings(tmp_path, organizations=True)
    scopes = oauth_apps.endpoints("linkedin", s).scopes
    assert scopes == (
        "openid",
        "profile",
        "w_member_social",
        "w_organization_social",
        "r_organization_admin",
        "r_organization_social",
    )
    seen: list[httpx.Request] = []
    sb = app_sandbox(tmp_path / "sb", "openid", "share", "community")
    found, _ = _connect(sb, s, seen, sandbox_user="Jo", sandbox_pages="3")
    assert [f.type for f in found] == ["member", "organization", "organization"]
    assert [f.name for f in found] == ["Jo", "Jo Org 1", "Jo Org 2"]
    acl = next(r for r in seen if "/rest/organizationAcls" in str(r.url))
    assert acl.headers["linkedin-version"] == LIFECYCLE.default


def test_organisations_of_every_role_that_may_post_are_found(tmp_path: Path) -> None:
    """L-POSTS: w_organization_social posts for members whose role is ADMINISTRATOR, DIRECT_SPONSORED_CONTENT_POSTER
    or CONTENT_ADMIN(ISTRATOR); the emulated member's organisations hold those three, then ANALYST (may not post)."""
    s = _settings(tmp_path, organizations=True)
    seen: list[httpx.Request] = []
    sb = app_sandbox(tmp_path / "sb", "openid", "share", "community")
    found, _ = _connect(sb, s, seen, sandbox_user="Jo", sandbox_pages="5")
    assert [f.name for f in found] == ["Jo", "Jo Org 1", "Jo Org 2", "Jo Org 3"]  # not Org 4 (ANALYST)
    acl = next(r for r in seen if "/rest/organizationAcls" in str(r.url))
    assert "role=" not in str(acl.url) and "state=APPROVED" in str(acl.url)  # every role asked, then sorted


def test_organisation_opt_in_on_a_new_app_is_refused_at_consent(tmp_path: Path) -> None:
    s = _settings(tmp_path, organizations=True)
    app = oauth_apps.app("linkedin", s)
    c = _spied(app_sandbox(tmp_path / "sb"), [])
    r = c.get(oauth.authorize_url(app, REDIRECT, "st", None))
    got = parse_qs(urlsplit(r.headers["location"]).query)
    assert got["error"] == ["unauthorized_scope_error"]


def test_the_default_version_is_active_and_sent_on_every_rest_call(settings, account, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert own(settings, "linkedin").version == LIFECYCLE.default == "202603"
    assert LIFECYCLE.state("202603", TODAY).status == "active"
    settings.sandbox_apps = {"linkedin": {"today": TODAY.isoformat()}}
    ident = account("linkedin")
    out = adapter_of("linkedin", settings, media_loader=loader).publish(
        publication(ident, "linkedin", "clip", [VID])
    )
    if out.state == "pending":
        out = adapter_of("linkedin", settings, media_loader=loader).check_status(
            publication(ident, "linkedin", "clip", [VID]), out.tracking_ref or ""
        )
    assert out.state in ("published", "ready"), out


def test_upload_puts_are_plain(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_apps = {"linkedin": {"today": TODAY.isoformat()}}
    ident = account("linkedin")
    seen: list[httpx.Request] = []
    ad = LinkedInAdapter(
        _spied(sandbox(settings), seen),
        "https://api.linkedin.sandbox.invalid/rest",
        media_loader=loader,
    )
    out = ad.publish(publication(ident, "linkedin", "photo", [IMG[0]]))
    assert out.state == "published", out
    [put] = [r for r in seen if r.method == "PUT"]
    assert put.headers["authorization"] == f"Bearer {ident.access_token}"
    assert put.headers["content-type"] == "image/jpeg"
    assert "linkedin-version" not in put.headers and "x-restli-protocol-version" not in put.headers
    for r in seen:
        if r.method != "PUT":
            assert (
                r.headers["linkedin-version"] == "202603"
                and r.headers["x-restli-protocol-version"] == "2.0.0"
            )
    post = json.loads(seen[-1].content)
    assert post["content"]["media"]["id"].startswith("urn:li:image:")


def test_a_sunset_version_is_a_configuration_error_before_any_call(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("linkedin")
    seen: list[httpx.Request] = []
    ad = LinkedInAdapter(
        _spied(sandbox(settings), seen), "https://api.linkedin.sandbox.invalid/rest", version="202506"
    )
    out = ad.publish(publication(ident, "linkedin", "hello", []))
    assert out.state == "failed" and out.fail_type == "permanent"
    assert out.network_code == "api_version_sunset"
    assert "SOCIALPUB_LINKEDIN_VERSION" in (out.fail_reason or "") and "202603" in (out.fail_reason or "")
    assert seen == []


def test_a_426_from_linkedin_names_the_setting(settings, account) -> None:  # type: ignore[no-untyped-def]
    # the code knows 202601 active; the emulated day is past its sunset: LinkedIn's 426 says so
    settings.sandbox_apps = {"linkedin": {"today": "2027-01-16"}}
    ident = account("linkedin")
    ad = LinkedInAdapter(
        httpx.Client(transport=sandbox(settings).transport("linkedin")),
        "https://api.linkedin.sandbox.invalid/rest",
        version="202601",
    )
    out = ad.publish(publication(ident, "linkedin", "hello", []))
    assert (
        out.state == "failed" and out.fail_type == "permanent" and out.network_code == "NONEXISTENT_VERSION"
    )
    assert "SOCIALPUB_LINKEDIN_VERSION" in (out.fail_reason or "")


def test_a_member_of_a_new_app_cannot_be_reconciled(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_apps = {"linkedin": {"today": TODAY.isoformat()}}
    ident = account("linkedin")
    ad = adapter_of("linkedin", settings)
    pub, saved = saving(publication(ident, "linkedin", "hello", []))
    assert ad.publish(pub).state == "published"
    with pytest.raises(Unverifiable, match="r_member_social"):
        ad.find_existing(resumed(pub, saved))  # it reached POST /rest/posts: only LinkedIn could tell


def test_each_call_that_may_post_is_preceded_by_its_saved_stage(settings, account) -> None:  # type: ignore[no-untyped-def]
    """An attempt saves "upload" before its first upload call and "post" before POST /rest/posts, so the attempt
    after an interruption knows whether a post may exist (a new app's LinkedIn cannot be asked)."""
    settings.sandbox_apps = {"linkedin": {"today": TODAY.isoformat()}}
    settings.sandbox_processing_s = 0.0  # the video is AVAILABLE at once: posted in the same call
    ident = account("linkedin")
    seen: list[httpx.Request] = []
    emu = sandbox(settings).transport("linkedin")

    def spy(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return emu.handle_request(req)

    ad = adapter_of("linkedin", settings, media_loader=loader, transport=httpx.MockTransport(spy))
    saved: list[tuple[str, int]] = []
    pub = dataclasses.replace(
        publication(ident, "linkedin", "a clip", [VID]),
        save_progress=lambda ref: saved.append((json.loads(ref)["stage"], len(seen))),
    )
    assert ad.publish(pub).state == "published"
    post_at = next(i for i, r in enumerate(seen) if r.method == "POST" and r.url.path.endswith("/posts"))
    assert saved == [("upload", 0), ("post", post_at)]  # before the first call of all; right before the post


def test_an_attempt_interrupted_at_its_uploads_made_no_post(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_apps = {"linkedin": {"today": TODAY.isoformat()}}
    ident = account("linkedin")
    ad = adapter_of("linkedin", settings)
    pub = publication(ident, "linkedin", "hello", [])
    assert (
        ad.find_existing(dataclasses.replace(pub, resume='{"stage":"upload"}')) is None
    )  # proved by our record
    assert ad.find_existing(pub) is None  # nothing saved: cut off before its first call, nothing to ask
    with pytest.raises(Unverifiable):  # from POST /rest/posts on, only LinkedIn could tell
        ad.find_existing(dataclasses.replace(pub, resume='{"stage":"post"}'))


def test_a_partner_app_reconciles_the_member(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_apps = {"linkedin": {"products": ["openid", "share", "partner"], "today": "2026-11-28"}}
    ident = account("linkedin")
    ad = adapter_of("linkedin", settings)
    pub, saved = saving(publication(ident, "linkedin", "hello (again)", []))
    out = ad.publish(pub)
    found = ad.find_existing(resumed(pub, saved))
    assert found is not None and found.external_post_id == out.external_post_id


def test_make_adapter_uses_the_configured_version(tmp_path: Path) -> None:
    from backend.networks.factory import AdapterContext

    s = _settings(tmp_path, version="202601")
    ctx = AdapterContext(httpx.Client(), {"api": "http://127.0.0.1:9/rest"}, own(s, "linkedin"), None)
    assert make_adapter(ctx).version == "202601"
    assert date(2027, 1, 15) == LIFECYCLE.find("202601").sunset  # type: ignore[union-attr]
