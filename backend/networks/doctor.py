"""What `accounts doctor` reports: findings about a network's configured app and its connected accounts.

A network's registry entry contributes `check_app(settings)` (credentials, redirect kind, the scopes that
will be asked and whether the app's products grant them, audit or verification status and what it implies)
and `check_account(granted_scopes)` (what publishing and reconciliation need against what the network
granted). The doctor service (backend/services/doctor.py) adds the generic checks (credentials present, API
version lifecycle) and serves them through the API and the CLI. Each finding says what to do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Literal

from backend.networks.lifecycle import Lifecycle

if TYPE_CHECKING:
    from backend.config import Settings

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem. error: publishing or connecting will fail until it is fixed; warning: it works now, but
    the user must know (a version ending soon, posts that will be private)."""

    code: str
    severity: Severity
    message: str  # what is wrong, in the user's terms
    fix: str  # what to do about it

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "message": self.message, "fix": self.fix}


@dataclass(frozen=True)
class NetworkChecks:
    """A network's own checks, named by its registry entry (`checks`).

    check_app(settings): its configured developer app — credentials, redirect kind, the scopes connect will
    ask and whether the app's products grant them, audit or verification and what they imply (posts private,
    SELF_ONLY…). check_account(granted_scopes): a connected account's grant against what publishing and
    reconciliation need (an empty grant: the network did not say; check what can be checked)."""

    check_app: Callable[[Settings], list[Finding]]
    check_account: Callable[[Sequence[str]], list[Finding]]


def version_findings(label: str, lifecycle: Lifecycle, configured: str, today: date) -> list[Finding]:
    """The lifecycle of the configured API version, as findings (none while it is active)."""
    st = lifecycle.state(configured, today)
    setting = lifecycle.setting
    if st.status == "unknown":
        return [
            Finding(
                "api_version_unknown",
                "error",
                f"{label} API version {configured!r} is not one socialpub knows (known: "
                f"{', '.join(v.name for v in lifecycle.versions)})",
                f"unset {setting} to use {st.newest}, or set it to a version listed",
            )
        ]
    if st.status == "sunset":
        return [
            Finding(
                "api_version_sunset",
                "error",
                f"{label} API version {configured} ended on {st.sunset}: {label} refuses every call made with it",
                f"unset {setting} to use {st.newest}, or set it to an active version",
            )
        ]
    if st.status == "ending":
        when = "today" if st.days_left == 0 else f"in {st.days_left} day{'s' if st.days_left != 1 else ''}"
        return [
            Finding(
                "api_version_ending",
                "warning",
                f"{label} API version {configured} ends {when} ({st.sunset})",
                f"unset {setting} to use {st.newest}"
                if configured != st.newest
                else "upgrade socialpub: this version is the newest it knows",
            )
        ]
    return []
