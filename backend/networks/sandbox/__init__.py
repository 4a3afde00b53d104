"""Sandbox networks: in-process emulators of the five networks' real APIs, and the adapter factory.

    ident = register_account("tiktok", "Brand", "ok")        # connect a sandbox account
    adapter = make_adapter("tiktok", settings)                 # adapter wired to the emulator
    list_published(platform="tiktok")                          # what the sandbox networks hold
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from backend.config import Settings, get_settings
from backend.networks.base import MediaRef
from backend.networks.sandbox import wire
from backend.networks.sandbox.core import (
    BEHAVIOURS,
    SANDBOX_BASES,
    Emulator,
    SandboxIdentity,
    register_account,
    set_behaviour,
)
from backend.store.models.sandbox import SandboxAccount, SandboxItem

MediaLoader = Callable[[MediaRef], bytes]


_EMULATORS = {"tiktok": "TikTokEmulator", "facebook": "FacebookEmulator", "instagram": "InstagramEmulator",
              "linkedin": "LinkedInEmulator", "youtube": "YouTubeEmulator"}


def emulator(platform: str, settings: Settings | None = None) -> Emulator:
    """The emulator of one network: a callable httpx.Request -> httpx.Response."""
    import importlib

    if platform not in _EMULATORS:
        raise ValueError(f"unknown network {platform!r}")
    module = importlib.import_module(f"backend.networks.sandbox.{platform}")
    return getattr(module, _EMULATORS[platform])(settings or get_settings())


def sandbox_transport(platform: str, settings: Settings | None = None) -> httpx.BaseTransport:
    """An in-process transport serving the platform's emulator to a sync httpx.Client."""
    return httpx.MockTransport(emulator(platform, settings))


class SandboxClient(httpx.Client):
    """The httpx client of the sandbox adapters: requests go straight to the in-process emulator.

    The emulators set no cookies, never redirect and need no auth flow, so what `Client.send` adds around the
    transport (auth and redirect loops, cookie jar, event hooks, elapsed timers) and what `build_request`
    merges in (client headers, cookies, base URL) is only cost here (~a fifth of the pipeline's CPU). The
    request is still a real `httpx.Request` (built by `wire.request`: the same object as
    `httpx.Request(method, url, ...)`, without re-parsing the URL character by character) and the response a
    real `httpx.Response`, read before returning, so adapters and emulators see exactly what they would over a
    live client.
    """

    def request(self, method: str, url: httpx.URL | str, *, content: Any = None, data: Any = None,  # type: ignore[override]
                files: Any = None, json: Any = None, params: Any = None, headers: Any = None,
                **_ignored: Any) -> httpx.Response:
        return self.send(wire.request(method, url, content=content, data=data, files=files, json=json,
                                      params=params, headers=headers))

    def send(self, request: httpx.Request, *, stream: bool = False, **_ignored: Any) -> httpx.Response:  # type: ignore[override]
        response = self._transport.handle_request(request)
        response.request = request
        if not stream:
            try:
                response.read()
            finally:
                response.close()
        return response


_ADAPTERS: dict[tuple[str, int, bool], tuple[Settings, Any]] = {}


def make_adapter(platform: str, settings: Settings | None = None, transport: httpx.BaseTransport | None = None,
                 *, live: bool = False, media_loader: MediaLoader | None = None) -> Any:
    """The adapter for a network. Sandbox (default): talks to the emulator in-process. live=True: the real
    hosts of Settings.<network>_api_base (transport defaults to httpx's). A given transport is used as is
    (tests use respx / MockTransport). Sandbox adapters are cached per settings object."""
    settings = settings or get_settings()
    key = (platform, id(settings), live)
    if transport is None and media_loader is None:
        cached = _ADAPTERS.get(key)
        if cached is not None and cached[0] is settings:
            return cached[1]
    client_class = httpx.Client
    if transport is None and not live:
        transport = sandbox_transport(platform, settings)
        client_class = SandboxClient
    client = client_class(transport=transport, timeout=settings.network_timeout_s, trust_env=False,
                          follow_redirects=False)
    adapter = build_adapter(platform, client, settings, live=live, media_loader=media_loader)
    if media_loader is None and transport is not None and not live and len(_ADAPTERS) < 256:
        _ADAPTERS[key] = (settings, adapter)
    return adapter


def build_adapter(platform: str, client: httpx.Client, settings: Settings, *, live: bool = False,
                  media_loader: MediaLoader | None = None) -> Any:
    from backend.networks.media_loader import default_loader

    sb = SANDBOX_BASES[platform]
    media_loader = media_loader or default_loader(settings)
    if platform == "tiktok":
        from backend.networks.tiktok import TikTokAdapter


        return TikTokAdapter(client, settings.tiktok_api_base if live else sb["api"])
    if platform == "facebook":
        from backend.networks.facebook import FacebookAdapter

        return FacebookAdapter(client, settings.facebook_api_base if live else sb["api"],
                               settings.facebook_video_api_base if live else sb["video"])
    if platform == "instagram":
        from backend.networks.instagram import InstagramAdapter

        return InstagramAdapter(client, settings.instagram_api_base if live else sb["api"])
    if platform == "linkedin":
        from backend.networks.linkedin import LinkedInAdapter

        return LinkedInAdapter(client, settings.linkedin_api_base if live else sb["api"],
                               version=settings.linkedin_version, media_loader=media_loader)
    if platform == "youtube":
        from backend.networks.youtube import YouTubeAdapter

        return YouTubeAdapter(client, settings.youtube_api_base if live else sb["api"],
                              settings.youtube_upload_base if live else sb["upload"], media_loader=media_loader)
    raise ValueError(f"unknown network {platform!r}")


def list_published(platform: str | None = None, account: str | None = None, limit: int = 100,
                   settings: Settings | None = None) -> list[dict[str, Any]]:
    """What the sandbox networks published (and TikTok drafts delivered), newest first.
    account: a sandbox account id, external account id or username."""
    settings = settings or get_settings()
    platforms = [platform] if platform else [p for p in SANDBOX_BASES if _available(p)]
    emus = {p: emulator(p, settings) for p in platforms}
    q = SandboxItem.select().where(SandboxItem.platform.in_(platforms))
    accounts = {a.id: a for a in SandboxAccount.select().where(SandboxAccount.platform.in_(platforms))}
    if account:
        ids = [a.id for a in accounts.values() if account in (a.id, a.external_id, a.username)]
        q = q.where(SandboxItem.account_id.in_(ids))
    out: list[dict[str, Any]] = []
    for item in q.order_by(SandboxItem.created_at.desc(), SandboxItem.id.desc()).iterator():
        row = emus[item.platform].describe(item)  # type: ignore[attr-defined]
        if row is None:
            continue
        acc = accounts.get(item.account_id)
        row.update(platform=item.platform, account_id=item.account_id,
                   account_username=acc.username if acc else None, created_at=item.created_at)
        out.append(row)
        if len(out) >= limit:
            break
    return out


def _available(platform: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(f"backend.networks.sandbox.{platform}") is not None


__all__ = ["BEHAVIOURS", "SandboxIdentity", "build_adapter", "emulator", "list_published", "make_adapter",
           "register_account", "sandbox_transport", "set_behaviour"]
