"""The emulators' OAuth switches and lifetimes (split from oauth.py, issue 31): each network's switches with their
defaults (its provider's DEFAULTS, over COMMON), kept in the sandbox database's `emulator_setting` so a served
emulator sees a change at once; and the lifetime arithmetic of the credentials they issue. Lifetimes follow
../shared/ANCHORS.md ("OAuth and token life"). docs/sandbox.md lists every switch.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from backend.networks.sandbox.core import emulator_type, now, write
from backend.networks.sandbox.store import SandboxSetting

DAY = 86400
# Each network's own switches and their defaults (its lifetimes, in seconds, None: never expires; the behaviours
# of its token endpoint) are its provider's DEFAULTS (its package's emulator_oauth.py); these every network has.
COMMON: dict[str, Any] = {
    "code_ttl_s": 600,  # an authorization code is good for 10 minutes, once
    "consent": "grant",  # grant | deny: what the scripted user answers at the authorize endpoint
    "token_failure": None,  # None | "invalid_grant" (dead grant) | "server_error" (a 5xx, transient)
    "pages": 1,  # the pages (organisations…) a new user manages, where the network has them
}
TOKEN_FAILURES = (None, "invalid_grant", "server_error")


def defaults(platform: str) -> dict[str, Any]:
    """The network's own switches with their defaults (ValueError for a network without an OAuth side)."""
    provider = emulator_type(platform).OAUTH
    if provider is None:
        raise ValueError(f"{platform}'s emulator has no OAuth side")
    found: dict[str, Any] = provider.DEFAULTS
    return found


def oauth_settings(platform: str) -> dict[str, Any]:
    """The OAuth switches of a network: defaults, overridden by what configure_oauth stored."""
    own = defaults(platform)
    row = SandboxSetting.get_or_none(SandboxSetting.key == f"oauth:{platform}")
    return {**COMMON, **own, **(row.value if row else {})}


def configure_oauth(platform: str, **changes: Any) -> dict[str, Any]:
    """Set OAuth switches of a network (kept in the sandbox database: a served emulator sees them at once).
    A value of None for a lifetime means "never expires"; reset=True first returns every switch to its default.
    Returns the switches now in force."""
    own = defaults(platform)
    reset = bool(changes.pop("reset", False))
    allowed = set(COMMON) | set(own)
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(
            f"unknown OAuth switch(es) for {platform}: {', '.join(sorted(unknown))}; "
            f"one of {', '.join(sorted(allowed))}"
        )
    if changes.get("token_failure") not in TOKEN_FAILURES:
        raise ValueError("token_failure: null, invalid_grant or server_error")
    if changes.get("consent", "grant") not in ("grant", "deny"):
        raise ValueError("consent: grant or deny")
    for k, v in changes.items():
        if k.endswith("_ttl_s") and v is not None and (not isinstance(v, int | float) or v < 0):
            raise ValueError(f"{k}: seconds (>= 0) or null")
    key = f"oauth:{platform}"
    with write():
        row = SandboxSetting.get_or_none(SandboxSetting.key == key)
        value = {} if reset or row is None else dict(row.value)
        value.update(changes)
        if row is None:
            SandboxSetting.create(key=key, value=value)
        else:
            SandboxSetting.update(value=value).where(SandboxSetting.key == key).execute()
    return oauth_settings(platform)


def expiry(ttl: float | None) -> datetime | None:
    return None if ttl is None else now() + timedelta(seconds=float(ttl))


def seconds_left(at: datetime | None, default: int = 0) -> int:
    return default if at is None else max(0, int((at - now()).total_seconds()))
