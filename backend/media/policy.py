"""The media fetcher's policy, said once when the app starts (backend/media/fetch.py applies it).

Apart from the fetcher so that saying it does not import the download machinery (httpcore, h11: ~20-30 ms) into
a process that may never fetch a URL (the embedded TUI's launch, a CLI command)."""

from __future__ import annotations

import logging

from backend.config import Settings

log = logging.getLogger("socialpub.media.fetch")


def log_policy(settings: Settings) -> None:
    """Log the fetch policy once at start; loudly when the address rule is lifted."""
    if settings.allow_private_urls:
        log.warning(
            "SOCIALPUB_ALLOW_PRIVATE_URLS=1: the media fetcher and webhook delivery WILL reach loopback "
            "and private addresses (local development and tests only; never in production)"
        )
    else:
        log.info(
            "media fetcher: public (global) addresses only, no redirects, connect %.0f s, total %.0f s",
            settings.fetch_connect_timeout_s,
            settings.fetch_total_timeout_s,
        )
