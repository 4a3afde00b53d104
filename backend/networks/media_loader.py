"""Bytes of a post's media, for the networks that take uploads instead of URLs (LinkedIn, YouTube).
Media on our own media host are read from storage; anything else goes through the SSRF-guarded fetcher."""

from __future__ import annotations

from collections.abc import Callable

from backend.config import Settings
from backend.networks.base import MediaRef, NetworkError

MediaLoader = Callable[[MediaRef], bytes]
MAX_UPLOAD_BYTES = 128 * 1024 * 1024  # the largest media we ingest by URL (spec 8)


def default_loader(settings: Settings) -> MediaLoader:
    def load(media: MediaRef) -> bytes:
        from backend.media.storage import get_storage, media_base_url

        base = media_base_url(settings)  # the public URL prefix of our files (media host, or S3/CDN)
        if media.url.startswith(base):

            storage = get_storage(settings)
            key = media.url[len(base):].split("?")[0]
            size = storage.size(key)
            if size is None:
                raise NetworkError("permanent", f"the media {media.url} is no longer on the media host (expired or "
                                   "deleted): upload it again", code="media_missing")
            return b"".join(storage.open_range(key, 0, size - 1))
        from backend.errors import ApiError
        from backend.media import fetch

        try:  # anything not on our host goes through the SSRF-guarded fetcher (no redirects, global IPs only)
            return fetch.fetch_bytes(media.url, settings, MAX_UPLOAD_BYTES)
        except ApiError as exc:
            fail_type = "permanent" if isinstance(exc, fetch.FetchTooLarge) else "retriable"
            raise NetworkError(fail_type, f"could not download the media {media.url}: {exc.message}",
                               code="media_fetch_failed") from exc

    return load
