"""Bluesky's accounts doctor hooks (backend/networks/doctor.py). There is no developer app: nothing to check of
it but where socialpub looks accounts up. An account is fine when its session is an app password's
(`com.atproto.appPass`); a full-access session (`com.atproto.access`) is one socialpub refuses at connect."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from backend.config import Settings
from backend.networks.bluesky.session import APP_PASSWORD_SCOPES
from backend.networks.bluesky.settings import BlueskySettings
from backend.networks.doctor import Finding, NetworkChecks
from backend.outbound.guard import host_is_local


def check_app(settings: Settings) -> list[Finding]:
    own = settings.network_settings(BlueskySettings)
    out: list[Finding] = []
    for label, url in (
        ("SOCIALPUB_BLUESKY_BASE_URL", own.api_base),
        ("SOCIALPUB_BLUESKY_PLC_URL", own.plc_url),
    ):
        p = urlsplit(url)
        if p.scheme != "https" and not host_is_local(p.hostname or ""):
            out.append(
                Finding(
                    "bluesky_insecure_host",
                    "error",
                    f"{label} is {url}: app passwords and sessions would travel unencrypted",
                    f"set {label} to an https URL",
                )
            )
    return out


def check_account(granted_scopes: Sequence[str]) -> list[Finding]:
    if not granted_scopes:
        return []
    if APP_PASSWORD_SCOPES.intersection(granted_scopes):
        return []
    return [
        Finding(
            "bluesky_not_app_password",
            "error",
            f"the account's session has scope {' '.join(granted_scopes)}, not an app password's",
            "reconnect with an app password: socialpub accounts connect bluesky --handle HANDLE",
        )
    ]


CHECKS = NetworkChecks(check_app, check_account)
