"""Threads' accounts doctor hooks, called directly: the app's own credentials, the Meta app's ID refused, the
HTTPS-only redirect, testers only until App Review, media that Threads cannot download, a grant without a permission."""

from __future__ import annotations

from backend.networks.threads.checks import check_account, check_app
from tests.support.networks import own


def codes(findings) -> set[str]:  # type: ignore[no-untyped-def]
    return {f.code for f in findings}


def test_a_new_unconfigured_app_says_what_to_set(settings) -> None:  # type: ignore[no-untyped-def]
    own(settings, "threads").client_id = None
    found = codes(check_app(settings))
    assert {"threads_redirect_https_only", "threads_testers_only"} <= found


def test_the_meta_app_id_is_not_the_threads_app_id(settings) -> None:  # type: ignore[no-untyped-def]
    mine = own(settings, "threads")
    mine.client_id, mine.client_secret = "1234", "s"
    own(settings, "facebook").client_id = "1234"
    assert "threads_app_id_is_meta_app_id" in codes(check_app(settings))
    own(settings, "facebook").client_id = "9999"
    assert "threads_app_id_is_meta_app_id" not in codes(check_app(settings))


def test_a_reviewed_app_has_no_testers_only_warning(settings) -> None:  # type: ignore[no-untyped-def]
    own(settings, "threads").app_reviewed = True
    assert "threads_testers_only" not in codes(check_app(settings))


def test_a_loopback_media_host_is_named(settings) -> None:  # type: ignore[no-untyped-def]
    settings.media_url = "http://127.0.0.1:8000/media/"
    [finding] = [f for f in check_app(settings) if f.code == "media_url_not_public"]
    assert "SOCIALPUB_MEDIA_URL" in finding.fix


def test_a_grant_without_publishing_is_an_error() -> None:
    [finding] = check_account(["threads_basic"])
    assert finding.code == "scopes_missing" and finding.severity == "error"
    assert "threads_content_publish" in finding.message
    assert check_account(["threads_basic", "threads_content_publish"]) == []
    assert check_account([]) == []  # the network did not say
