"""The network adapters, built from plain values: a platform, an httpx client and the hosts to call.

The same adapter serves a live account (a client of the real hosts) and a sandbox account (a client whose
transport is the network's emulator): the adapters know nothing of the sandbox, the store or the services.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

import httpx

from backend.networks.media_loader import MediaLoader


@dataclass(frozen=True)
class Hosts:
    """Where a network's API lives (live: Settings.<network>_api_base; sandbox: its `.invalid` hosts)."""

    api: str
    video: str | None = None  # Facebook's graph-video host
    upload: str | None = None  # YouTube's upload host


def build_adapter(
    platform: str,
    client: httpx.Client,
    hosts: Hosts,
    *,
    linkedin_version: str = "202506",
    media_loader: MediaLoader | None = None,
    media_by_url: frozenset[str] = frozenset(),
) -> Any:
    """The adapter of `platform` talking through `client` to `hosts`. media_loader: bytes of a media for the
    networks that take uploads (LinkedIn, YouTube, TikTok videos, Facebook). media_by_url: the networks that
    take a media's URL instead of its bytes where they can (SOCIALPUB_MEDIA_BY_URL: facebook, tiktok)."""
    if platform == "tiktok":
        from backend.networks.tiktok.adapter import TikTokAdapter

        return TikTokAdapter(
            client, hosts.api, media_loader=media_loader, media_by_url="tiktok" in media_by_url
        )
    if platform == "facebook":
        from backend.networks.facebook.adapter import FacebookAdapter

        return FacebookAdapter(
            client,
            hosts.api,
            hosts.video or hosts.api,
            media_loader=media_loader,
            media_by_url="facebook" in media_by_url,
        )
    if platform == "instagram":
        from backend.networks.instagram.adapter import InstagramAdapter

        return InstagramAdapter(client, hosts.api)
    if platform == "linkedin":
        from backend.networks.linkedin.adapter import LinkedInAdapter

        return LinkedInAdapter(client, hosts.api, version=linkedin_version, media_loader=media_loader)
    if platform == "youtube":
        from backend.networks.youtube.adapter import YouTubeAdapter

        return YouTubeAdapter(client, hosts.api, hosts.upload or hosts.api, media_loader=media_loader)
    raise ValueError(f"unknown network {platform!r}")


def default_listing_delay_s(platform: str) -> float:
    """How long after the real network accepted a publication its listing may still miss it (the adapter
    module's LISTING_DELAY_S): find_existing's "absent" is conclusive only that long after the call was over."""
    if platform not in ("tiktok", "facebook", "instagram", "linkedin", "youtube"):
        raise ValueError(f"unknown network {platform!r}")
    return float(import_module(f"backend.networks.{platform}.adapter").LISTING_DELAY_S)


def http_client(transport: httpx.BaseTransport | None, timeout_s: float) -> httpx.Client:
    """The adapters' client: no proxies from the environment, no redirects (a network never needs one)."""
    return httpx.Client(transport=transport, timeout=timeout_s, trust_env=False, follow_redirects=False)
