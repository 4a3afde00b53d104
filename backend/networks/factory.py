"""The network adapters, built from plain values: an httpx client, the hosts to call, the network's own settings.

The same adapter serves a live account (a client of the real hosts) and a sandbox account (a client whose
transport is the network's emulator): the adapters know nothing of the sandbox, the store or the services. Each
network's package gives a factory (its registry entry's `adapter`) called with an AdapterContext.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from backend.networks.media_loader import MediaLoader


@dataclass(frozen=True)
class AdapterContext:
    """What a network's adapter factory gets.

    hosts: where its API lives, by role (`api` always; e.g. Facebook's `video`, YouTube's `upload`): the live
    hosts of its settings, or its emulator's `.invalid` hosts. settings: the network's own settings model (its
    LinkedIn version…), None for a network without one. media_loader: the bytes of a media, for the networks
    that upload them. media_by_url: the network is configured (SOCIALPUB_MEDIA_BY_URL) to take a media's URL
    instead of its bytes where it can."""

    client: httpx.Client
    hosts: Mapping[str, str]
    settings: Any = None
    media_loader: MediaLoader | None = None
    media_by_url: bool = False
    # (url, max bytes) -> a web page's bytes through the SSRF-guarded fetcher (a link card's page and picture);
    # raises NetworkError when it cannot be fetched
    page_loader: Callable[[str, int], bytes] | None = None

    def host(self, role: str, default: str | None = None) -> str:
        """The host of `role`, else `default` (else the API host)."""
        return self.hosts.get(role) or default or self.hosts["api"]


def http_client(transport: httpx.BaseTransport | None, timeout_s: float) -> httpx.Client:
    """The adapters' client: no proxies from the environment, no redirects (a network never needs one)."""
    return httpx.Client(transport=transport, timeout=timeout_s, trust_env=False, follow_redirects=False)
