"""API versions as data: each versioned network's versions with their release and sunset dates, sourced.

A network whose API is versioned (LinkedIn's monthly `LinkedIn-Version`, Meta's Graph `vNN.0`) declares a
`Lifecycle` in its registry entry: the versions it knows, each with the vendor's page that dates it, the
setting that chooses one, and the default (the newest version the code is tested against). `state()` says
where a configured version stands on a day: `accounts doctor`, `accounts check`/`list` and the TUI warn
`WARN_DAYS` before its sunset and say what to set; a sunset or unknown version is a configuration error
reported once, not every post failing one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

WARN_DAYS = 30  # a version this close to its sunset is warned about

VersionStatus = Literal["active", "ending", "sunset", "unknown"]


@dataclass(frozen=True)
class ApiVersion:
    """One version of a network's API. sunset: the last day the network serves it (None: no end announced)."""

    name: str
    released: date | None
    sunset: date | None
    source: str  # the vendor's page that dates it, with the date it was read


@dataclass(frozen=True)
class VersionState:
    version: str
    status: VersionStatus
    days_left: int | None  # days until the sunset (0: its last day); None: no end announced, or unknown
    sunset: date | None
    newest: str  # the newest version the code is tested against (the default)


@dataclass(frozen=True)
class Lifecycle:
    """A network's API versions. setting: the environment variable that chooses one (e.g.
    SOCIALPUB_LINKEDIN_VERSION); default: the version used when it is unset."""

    setting: str
    versions: tuple[ApiVersion, ...]
    default: str

    def __post_init__(self) -> None:
        if self.default not in {v.name for v in self.versions}:
            raise ValueError(f"the default version {self.default!r} is not among the known versions")

    def find(self, name: str) -> ApiVersion | None:
        return next((v for v in self.versions if v.name == name), None)

    def state(self, name: str, today: date) -> VersionState:
        version = self.find(name)
        if version is None:
            return VersionState(name, "unknown", None, None, self.default)
        if version.released is not None and today < version.released:
            return VersionState(name, "unknown", None, version.sunset, self.default)
        if version.sunset is None:
            return VersionState(name, "active", None, None, self.default)
        left = (version.sunset - today).days
        if left < 0:
            status: VersionStatus = "sunset"
        elif left <= WARN_DAYS:
            status = "ending"
        else:
            status = "active"
        return VersionState(name, status, left, version.sunset, self.default)

    def active_on(self, today: date) -> tuple[str, ...]:
        """The versions the network serves on `today` (what an emulator accepts)."""
        return tuple(
            v.name for v in self.versions if self.state(v.name, today).status in ("active", "ending")
        )
