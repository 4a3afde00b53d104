"""Facebook Login's Strict Mode (developers.facebook.com/blog/post/2017/12/18/strict-uri-matching/): the redirect
URI must be one of the Meta app's Valid OAuth Redirect URIs, exactly; another one gets the "URL Blocked" dialog and
nobody is sent back. The emulated app registers the CLI's loopback listener on SOCIALPUB_FACEBOOK_REDIRECT_PORT
(SOCIALPUB_INSTAGRAM_REDIRECT_PORT for Instagram's), as LinkedIn's does; without it any http(s) URI is taken."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from backend.config import Settings
from backend.networks import oauth, oauth_apps
from backend.networks.sandbox import DatabaseLocation, Sandbox, SandboxConfig
from backend.services.adapters import sandbox_emulators, sandbox_options
from tests.networks.test_oauth import settings_for
from tests.support.networks import own


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
def test_a_registered_redirect_uri_must_match_exactly(tmp_path: Path, platform: str) -> None:
    sb = Sandbox(
        SandboxConfig(
            DatabaseLocation.sqlite_in(tmp_path),
            emulators=sandbox_emulators(),
            delay_s=0,
            options=((f"{platform}.redirect_port", 53682),),  # SOCIALPUB_<NETWORK>_REDIRECT_PORT=53682
        )
    ).activate()
    app = oauth_apps.app(platform, settings_for(platform, tmp_path))
    c = httpx.Client(transport=sb.transport(platform))
    challenge = oauth.pkce_pair()[1]
    ok = c.get(oauth.authorize_url(app, "http://127.0.0.1:53682/callback", "st", challenge))
    assert ok.status_code == 302 and "code=" in ok.headers["location"]
    r = c.get(oauth.authorize_url(app, "http://127.0.0.1:40000/callback", "st", challenge))
    assert r.status_code == 200 and "location" not in r.headers  # the dialog's page, never a redirect
    assert "URL Blocked" in r.text and "Valid OAuth Redirect URIs" in r.text


@pytest.mark.parametrize("platform", ["facebook", "instagram"])
def test_the_setting_registers_the_redirect_uri_of_the_sandbox(tmp_path: Path, platform: str) -> None:
    s = Settings(data_dir=tmp_path)
    assert (f"{platform}.redirect_port", 53682) not in sandbox_options(s)
    own(s, platform).redirect_port = 53682
    assert (f"{platform}.redirect_port", 53682) in sandbox_options(s)
