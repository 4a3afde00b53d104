"""The media fetcher's policy, said once when the app starts (backend/media/fetch.py applies it).

Apart from the fetcher so that saying it does not import the download machinery (httpcore, h11: ~20-30 ms) into
a process that may never fetch a URL (the embedded TUI's launch, a CLI command)."""

from __future__ import annotations

import logging

from backend.config import Settings
from backend.store.instance import address_rule, private_urls_allowed

log = logging.getLogger("socialpub.media.fetch")


def log_policy(settings: Settings) -> None:
    """Log the fetch policy once at start; loudly when the address rule is lifted, and when this process's
    environment overrides the data dir's setting (its other processes may then apply another rule)."""
    rule = address_rule(settings)
    if rule.source == "environment" and rule.private_allowed != private_urls_allowed():
        log.warning(
            "SOCIALPUB_ALLOW_PRIVATE_URLS=%d overrides this data dir's setting (private addresses %s) in this "
            "process only: `socialpub admin private-urls %s` makes it the data dir's, for every process",
            int(rule.private_allowed),
            "refused" if rule.private_allowed else "allowed",
            "on" if rule.private_allowed else "off",
        )
    if rule.private_allowed:
        log.warning(
            "private addresses allowed (%s): the media fetcher and webhook delivery WILL reach loopback "
            "and private addresses (local development and tests only; never in production)",
            "SOCIALPUB_ALLOW_PRIVATE_URLS=1"
            if rule.source == "environment"
            else "socialpub admin private-urls on",
        )
    else:
        log.info(
            "media fetcher: public (global) addresses only, no redirects, connect %.0f s, total %.0f s",
            settings.fetch_connect_timeout_s,
            settings.fetch_total_timeout_s,
        )
