"""Fixtures for the network tests: the lead's `settings` fixture (fresh store, sandbox delays 0) is reused."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from backend.networks.base import AccountCredentials, MediaRef, Publication
from backend.networks.rules import build_payload
from backend.networks.sandbox import SandboxIdentity

IMG = [MediaRef(f"https://media.test/m/{i}.jpg", "image", "image/jpeg", 1080, 1080) for i in range(10)]
VID = MediaRef("https://media.test/m/v.mp4", "video", "video/mp4")
# emulated apps whose listings the reconciliation tests read: LinkedIn's author finder needs r_member_social,
# which only an approved partner app holds (a new app's LinkedIn reconciliation is Unverifiable: that case is
# tests/networks/linkedin's)
READABLE_APPS = {"linkedin": {"products": ["openid", "share", "partner"]}}


@pytest.fixture
def account(settings) -> Callable[..., SandboxIdentity]:  # type: ignore[no-untyped-def]
    def make(platform: str, behaviour: str = "ok", name: str = "Brand", **kw) -> SandboxIdentity:  # type: ignore[no-untyped-def]
        from backend.services.adapters import register_sandbox_account

        return register_sandbox_account(settings, platform, name, behaviour, **kw)

    return make


def publication(
    ident: SandboxIdentity,
    platform: str,
    content: str,
    media: list[MediaRef],
    options: dict | None = None,
    token: str = "tgt_1",
    attempted_at=None,
) -> Publication:  # type: ignore[no-untyped-def]
    if platform == "tiktok" and options is None:
        # the creator's choice (TikTok makes the creator choose, nothing pre-selected) where a test is not about it
        options = {"tiktok": {"privacyLevel": "PUBLIC_TO_EVERYONE"}}
    payload = build_payload(platform, content, media, options)
    creds = AccountCredentials(ident.external_account_id, ident.access_token, ident.username)
    return Publication(payload, creds, token, attempted_at)


def saving(pub: Publication) -> tuple[Publication, list[str]]:
    """`pub` with its progress saved as the engine saves it (Publication.save_progress), and the list it goes to."""
    saved: list[str] = []
    return dataclasses.replace(pub, save_progress=saved.append), saved


def resumed(pub: Publication, saved: list[str]) -> Publication:
    """`pub` as the engine asks about its interrupted attempt: with the progress that attempt saved (`resume`)."""
    return dataclasses.replace(pub, resume=saved[-1] if saved else pub.resume)
