"""A Meta app in development mode (every new app) publishes Page posts that only the people with a role on the app
can see (fidelity table: FB-R18, a belief from public reports): the target succeeds WITH a warning
(`facebook_development_mode`, SOCIALPUB_FACEBOOK_APP_MODE says the mode); the emulated app in development mode (its
default; `kind: live` for a Live app) marks such posts visible to the app's roles only."""

from __future__ import annotations

import time_machine

from backend import clock
from backend.networks.sandbox import list_published
from backend.services.adapters import make_adapter
from tests.networks.conftest import VID, publication
from tests.networks.test_networks import loader
from tests.support.networks import own


def test_a_development_mode_apps_post_succeeds_with_a_warning(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("facebook")
    out = make_adapter("facebook", settings, media_loader=loader).publish(
        publication(ident, "facebook", "hello from a new app", [])
    )
    assert out.state == "published", out
    [warning] = out.warnings
    assert warning.code == "facebook_development_mode"
    assert "role on" in warning.message and "SOCIALPUB_FACEBOOK_APP_MODE=live" in warning.message
    [listed] = list_published(platform="facebook")
    assert listed["visibility"] == "app_roles"  # the emulated new app: not seen by the public


def test_a_development_mode_apps_video_gets_the_warning_once_processed(settings, account) -> None:  # type: ignore[no-untyped-def]
    settings.sandbox_processing_s = 0.0
    ident = account("facebook")
    ad = make_adapter("facebook", settings, media_loader=loader)
    pub = publication(ident, "facebook", "a video", [VID])
    with time_machine.travel(clock.now(), tick=True):
        out = ad.publish(pub)
        if out.state == "pending":
            out = ad.check_status(pub, out.tracking_ref or "")
    assert out.state == "published" and [w.code for w in out.warnings] == ["facebook_development_mode"]


def test_a_live_app_posts_for_everyone_without_a_warning(settings, account) -> None:  # type: ignore[no-untyped-def]
    own(settings, "facebook").app_mode = "live"  # SOCIALPUB_FACEBOOK_APP_MODE=live
    settings.sandbox_apps = {"facebook": {"kind": "live"}}
    ident = account("facebook")
    out = make_adapter("facebook", settings, media_loader=loader).publish(
        publication(ident, "facebook", "hello from a live app", [])
    )
    assert out.state == "published" and out.warnings == ()
    [listed] = list_published(platform="facebook")
    assert listed["visibility"] == "everyone"
