"""Bytes of a post's media, for the networks that take uploads instead of URLs (LinkedIn, YouTube).
Media on our own media host are read from storage; anything else is fetched (no redirects)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from backend.config import Settings
from backend.networks.base import MediaRef, NetworkError

MediaLoader = Callable[[MediaRef], bytes]


def default_loader(settings: Settings) -> MediaLoader:
    def load(media: MediaRef) -> bytes:
        base = settings.public_media_url
        if media.url.startswith(base):
            from backend.media.storage import get_storage

            storage = get_storage(settings)
            key = media.url[len(base):].split("?")[0]
            size = storage.size(key)
            if size is None:
                raise NetworkError("permanent", f"the media {media.url} is no longer on the media host (expired or "
                                   "deleted): upload it again", code="media_missing")
            return b"".join(storage.open_range(key, 0, size - 1))
        try:
            resp = httpx.get(media.url, timeout=settings.fetch_total_timeout_s, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise NetworkError("retriable", f"could not download the media {media.url} ({type(exc).__name__})",
                               code="media_fetch_failed") from exc
        if resp.status_code != 200:
            raise NetworkError("retriable" if resp.status_code >= 500 else "permanent",
                               f"could not download the media {media.url} (HTTP {resp.status_code})",
                               code="media_fetch_failed")
        return resp.content

    return load
