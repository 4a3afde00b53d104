"""Helpers shared by the posts and accounts tests: sandbox accounts, probed remote media, post calls."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from backend import clock
from backend.media.detect import Detected
from tests.conftest import key_headers

IMG = "https://cdn.example.com/pic-{}.jpg"
PNG = "https://cdn.example.com/pic-{}.png"
VID = "https://cdn.example.com/clip-{}.mp4"
BROKEN = "https://cdn.example.com/broken.bin"
GONE = "https://cdn.example.com/gone.jpg"


@pytest.fixture
def fast(settings):  # type: ignore[no-untyped-def]
    """These suites send many requests with one key: lift the per-minute budget."""
    settings.rate_limit_per_minute = 1_000_000
    return settings


@pytest.fixture
def remote_media(monkeypatch):  # type: ignore[no-untyped-def]
    """The SSRF-guarded probe answers from the URL (no traffic): .jpg image, .png image, .mp4 video,
    .bin unknown type, 'gone' unreachable. Records every probed URL."""
    from backend.errors import ApiError
    from backend.media import fetch

    probed: list[str] = []

    def probe(url: str, settings: Any) -> Detected | None:
        probed.append(url)
        if "gone" in url:
            raise ApiError(400, "fetch_failed", "the server answered 404: check the URL")
        if url.endswith(".jpg"):
            return Detected("image", "jpeg", "image/jpeg")
        if url.endswith(".png"):
            return Detected("image", "png", "image/png")
        if url.endswith(".mp4"):
            return Detected("video", "mp4", "video/mp4")
        return None

    monkeypatch.setattr(fetch, "probe", probe)
    return probed


@pytest.fixture
def sandbox(settings, owner):  # type: ignore[no-untyped-def]
    """One sandbox account per network (what `socialpub init --sandbox` connects), every one public (TikTok's too:
    the suites post to it publicly; init's private TikTok account is tests/cli's): {platform: account}."""
    from backend.services import accounts

    found = accounts.connect_sandbox_defaults(settings, owner.workspace_id, public=True)
    return {a["platform"]: a for a in found}


def post(client, owner, expect: int | None = None, **body: Any):  # type: ignore[no-untyped-def]
    body.setdefault("content", "Hello from the test suite")
    if any("tiktok" in str(t) for t in body.get("targets") or []):
        # the creator's choice (TikTok makes the creator choose, else the post is refused at creation): public,
        # for suites running an audited TikTok app (audited_tiktok); a test of the choice itself sets its own
        tiktok = dict((body.get("options") or {}).get("tiktok") or {})
        if tiktok.get("postMode") != "MEDIA_UPLOAD" and "privacyLevel" not in tiktok:
            body["options"] = {
                **(body.get("options") or {}),
                "tiktok": {**tiktok, "privacyLevel": "PUBLIC_TO_EVERYONE"},
            }
    r = client.post("/v1/posts", json=body, headers=key_headers(owner.api_key))
    if expect is not None:
        assert r.status_code == expect, r.text
    return r


def details(r) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(d["platform"], d["error"]) for d in r.json()["details"]]


def future(**kw: float) -> str:
    return clock.iso(clock.now() + timedelta(**kw)) or ""
