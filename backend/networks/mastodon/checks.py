"""Mastodon's accounts doctor hooks (backend/networks/doctor.py): `check_app` (nothing to configure: an app is
registered per instance at connect) and `check_account`. A granted scope covers its children: `write` covers `write:statuses` (docs.joinmastodon.org/
api/oauth-scopes/, read 2026-11-28: "read" and "write" are the parents of the granular scopes). Publishing needs
`write:statuses` and `write:media`; reconciliation needs `read:statuses` (the owner's listing of every
visibility and `/statuses/:id/source`): without it a status that is not public cannot be found, so a retry past
the Idempotency-Key's hour could not tell whether the first attempt published."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from backend.networks.doctor import Finding, NetworkChecks
from backend.networks.mastodon.connect import PUBLISH_SCOPES

if TYPE_CHECKING:
    from backend.config import Settings


def covers(granted: Sequence[str], needed: str) -> bool:
    """Whether the granted scopes include `needed` or its parent (`write` for `write:media`)."""
    return needed in granted or needed.split(":", 1)[0] in granted


def check_account(granted_scopes: Sequence[str]) -> list[Finding]:
    if not granted_scopes:
        return []  # the instance did not say: nothing to judge
    missing = [s for s in PUBLISH_SCOPES if not covers(granted_scopes, s)]
    if not missing:
        return []
    return [
        Finding(
            "mastodon_scopes_missing",
            "error",
            f"the account's grant lacks {' '.join(missing)} (granted: {' '.join(granted_scopes)}): "
            + (
                "socialpub cannot verify what it published, so it would not retry safely"
                if missing == ["read:statuses"]
                else "socialpub cannot publish with it"
            ),
            "reconnect the account: socialpub accounts connect mastodon --instance HOST",
        )
    ]


def check_app(settings: Settings) -> list[Finding]:
    """Nothing to configure: socialpub registers its app on each instance when an account connects there (no
    review, no product to ask for: docs.joinmastodon.org/methods/apps/)."""
    return []


CHECKS = NetworkChecks(check_app, check_account)
