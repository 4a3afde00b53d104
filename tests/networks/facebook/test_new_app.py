"""The default emulated Meta app is a new one (issue 29): Standard Access to the permissions its use cases hold
(not publish_video), development mode, the connecting person has a role on it. Grant = asked ∩ held; a person
without a role cannot consent ("App not active", no redirect); a Page token without pages_manage_posts is refused
(#200); discovery records the grant (GET /me/permissions) for `accounts doctor`."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from backend.networks import oauth, oauth_apps
from backend.networks.facebook.checks import check_account as fb_account
from backend.networks.facebook.checks import check_app as fb_app
from backend.networks.instagram.checks import check_account as ig_account
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.networks.sandbox.developer_app import EmulatedApp
from backend.services.adapters import sandbox_emulators
from tests.networks.test_oauth import REDIRECT, consent, settings_for


def make_sb(tmp_path: Path, **apps: EmulatedApp) -> Sandbox:
    config = SandboxConfig(
        DatabaseLocation.sqlite_in(tmp_path),
        emulators=sandbox_emulators(),
        delay_s=0,
        processing_s=0,
        apps=tuple(sorted(apps.items())),
    )
    return Sandbox(config).activate()


def connect(sb: Sandbox, platform: str, tmp_path: Path, **sandbox: str):  # type: ignore[no-untyped-def]
    s = settings_for(platform, tmp_path)
    app = oauth_apps.app(platform, s)
    c = httpx.Client(transport=sb.transport(platform))
    verifier, challenge = oauth.pkce_pair()
    got = consent(c, oauth.authorize_url(app, REDIRECT, "st", challenge), **sandbox)
    tokens = oauth.exchange_code(app, c, got["code"], REDIRECT, verifier)
    return s, c, tokens


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
def test_a_new_app_grants_what_it_holds_and_discovery_records_it(tmp_path: Path, platform: str) -> None:
    sb = make_sb(tmp_path)
    s, c, tokens = connect(sb, platform, tmp_path)
    [cand] = oauth.discover(platform, s, c, tokens)
    asked = set(oauth_apps.app(platform, s).endpoints.scopes)
    assert set(cand.granted_scopes) == asked - {"publish_video"}  # not held by a new app's Pages use case
    check = fb_account if platform == "facebook" else ig_account
    assert check(cand.granted_scopes) == []


def test_a_person_without_a_role_cannot_consent_to_a_new_app(tmp_path: Path) -> None:
    sb = make_sb(tmp_path)
    s = settings_for("facebook", tmp_path)
    app = oauth_apps.app("facebook", s)
    c = httpx.Client(transport=sb.transport("facebook"))
    url = oauth.authorize_url(app, REDIRECT, "st", oauth.pkce_pair()[1]) + "&sandbox_role=none"
    r = c.get(url)
    assert r.status_code == 200 and "location" not in r.headers and "App not active" in r.text
    # an app past App Review (Advanced Access) may be granted by anyone
    sb2 = make_sb(tmp_path / "reviewed", facebook=EmulatedApp(audited=True))
    c2 = httpx.Client(transport=sb2.transport("facebook"))
    assert c2.get(url).status_code == 302


def test_a_page_token_without_pages_manage_posts_is_refused_200(tmp_path: Path) -> None:
    held = EmulatedApp(products=frozenset({"pages_show_list", "pages_read_engagement"}))
    sb = make_sb(tmp_path, facebook=held)
    s, c, tokens = connect(sb, "facebook", tmp_path)
    [cand] = oauth.discover("facebook", s, c, tokens)
    assert "pages_manage_posts" not in cand.granted_scopes
    [finding] = fb_account(cand.granted_scopes)
    assert (
        finding.severity == "error" and "pages_manage_posts" in finding.message and "reconnect" in finding.fix
    )
    r = c.post(
        f"http://127.0.0.1:9/v26.0/{cand.external_id}/feed",
        data={"message": "hi", "access_token": cand.access_token},
    )
    err = r.json()["error"]
    assert r.status_code == 403 and err["code"] == 200 and "pages_manage_posts" in err["message"]


def test_doctor_explains_development_mode_and_a_live_apps_https_redirect(tmp_path: Path) -> None:
    s = settings_for("facebook", tmp_path)
    dev, redirect = fb_app(s)
    assert dev.code == "meta_app_development_mode" and "App roles" in dev.fix
    # a new app registers no redirect URI: Strict Mode refuses the CLI's listener until one is
    assert redirect.code == "meta_redirect_uri" and "SOCIALPUB_FACEBOOK_REDIRECT_PORT=53682" in redirect.fix
    from tests.support.networks import own

    own(s, "facebook").redirect_port = 53682
    [dev] = fb_app(s)
    assert dev.code == "meta_app_development_mode"

    own(s, "facebook").app_mode = "live"
    [live] = fb_app(s)
    assert live.code == "meta_redirect_https_only" and "--access-token" in live.fix


def test_instagram_doctor_names_business_management(tmp_path: Path) -> None:
    granted = ("instagram_basic", "instagram_content_publish", "pages_show_list", "pages_read_engagement")
    [warn] = ig_account(granted)
    assert warn.code == "business_management_missing" and warn.severity == "warning"
    assert ig_account((*granted, "business_management")) == []
    assert ig_account(()) == []  # the network did not say: nothing to check


def test_a_grant_that_cannot_read_the_pages_posts_never_reads_as_absent(tmp_path: Path) -> None:
    """Reconciliation with a grant lacking pages_read_engagement: Facebook refuses the listing (#200), and
    find_existing says it could not check — never "absent", so never a second publication."""
    from backend.networks.base import AccountCredentials, Payload, Publication
    from backend.networks.facebook.adapter import FacebookAdapter

    held = EmulatedApp(products=frozenset({"pages_show_list", "pages_manage_posts"}))
    sb = make_sb(tmp_path, facebook=held)
    s, c, tokens = connect(sb, "facebook", tmp_path)
    [cand] = oauth.discover("facebook", s, c, tokens)
    ad = FacebookAdapter(c, "http://127.0.0.1:9/v26.0", "http://127.0.0.1:9/v26.0")
    creds = AccountCredentials(cand.external_id, cand.access_token, "")
    from datetime import UTC, datetime

    pub = Publication(Payload("facebook", "text", "lost", None, ()), creds, "t1", datetime.now(UTC))
    assert ad.publish(pub).state == "published"
    found = ad.find_existing(pub)
    assert found is not None and found.state == "failed" and found.ambiguous
    assert "could not check" in str(found.fail_reason) and "reconnect" in str(found.fail_reason)
