"""Instagram cURLs the media of a container from the public internet (content publishing: "the media must be hosted
on a publicly accessible server"): an `image_url` or `video_url` on this machine or a private network cannot be
fetched, and the emulator refuses it as Instagram does (9004 / 2207052, HTTP 400). The emulator only classifies the
URL (a `localhost` name or a literal address that is not global): nothing is fetched, no name looked up."""

from __future__ import annotations

import httpx
import pytest

from backend.networks.sandbox import Sandbox, list_published
from backend.services.adapters import sandbox_config

NOT_PUBLIC = [
    "http://127.0.0.1:8000/m/a.jpg",
    "http://localhost/m/a.jpg",
    "http://10.1.2.3/m/a.jpg",
    "http://192.168.0.7/m/a.jpg",
    "http://[::1]/m/a.jpg",
    "http://169.254.169.254/m/a.jpg",
]


def strict(settings):  # type: ignore[no-untyped-def]
    """The emulator as `socialpub sandbox serve` runs it (the in-process sandbox of sandbox accounts reads their
    media from this machine: `instagram.reaches_this_machine`)."""
    config = sandbox_config(settings, served=True)
    assert ("instagram.reaches_this_machine", True) in sandbox_config(settings).options
    return Sandbox(config).activate()


def create(settings, ident, **params: str) -> httpx.Response:  # type: ignore[no-untyped-def]
    handler = strict(settings).handler("instagram")
    url = f"https://graph.facebook.sandbox.invalid/v26.0/{ident.external_account_id}/media"
    return handler(httpx.Request("POST", url, data={**params, "access_token": ident.access_token}))


@pytest.mark.parametrize("media", NOT_PUBLIC)
def test_an_image_url_meta_cannot_fetch_is_refused_9004_2207052(settings, account, media: str) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram")
    r = create(settings, ident, image_url=media)
    err = r.json()["error"]
    assert r.status_code == 400 and (err["code"], err["error_subcode"]) == (9004, 2207052), err
    assert media in err["error_user_msg"]
    assert list_published(platform="instagram") == []


def test_a_reels_video_url_meta_cannot_fetch_is_refused(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram")
    r = create(settings, ident, media_type="REELS", video_url="http://127.0.0.1:8000/m/v.mp4")
    assert r.status_code == 400 and r.json()["error"]["error_subcode"] == 2207052


def test_a_public_looking_url_is_taken(settings, account) -> None:  # type: ignore[no-untyped-def]
    ident = account("instagram")
    assert create(settings, ident, image_url="https://media.test/m/a.jpg").status_code == 200
    assert (
        create(settings, ident, image_url="http://93.184.215.14/m/a.jpg").status_code == 200
    )  # never fetched
