"""Bytes of a post's media, for the networks that take uploads instead of URLs (LinkedIn, YouTube, TikTok videos,
Facebook; a whole file in memory: media are at most MAX_UPLOAD_BYTES): the adapters
get a MediaLoader from whoever builds them (backend/services/adapters.py: our media host's files from storage,
anything else through the SSRF-guarded fetcher)."""

from __future__ import annotations

from collections.abc import Callable

from backend.networks.base import MediaRef

MediaLoader = Callable[[MediaRef], bytes]
MAX_UPLOAD_BYTES = 128 * 1024 * 1024  # the largest media we ingest by URL (spec 8)
