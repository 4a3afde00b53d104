"""The address rule's one setting, apart from the guard (which brings httpcore) so that saying or reading it costs
nothing: whether loopback and private addresses may be reached, and what decided it (backend/store/instance.py
reads it; backend/outbound/guard.py applies it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PRIVATE_URLS_SETTING = (
    "private-urls"  # `socialpub admin private-urls`: the setting that lifts the address rule
)


@dataclass(frozen=True)
class AddressRule:
    """Whether loopback and private addresses may be reached, and what decided it: the data dir's setting
    (`socialpub admin private-urls`), or SOCIALPUB_ALLOW_PRIVATE_URLS in this process's environment."""

    private_allowed: bool
    source: Literal["data_dir", "environment"] = "data_dir"

    def how_to_change(self) -> str:
        """A sentence saying what decided a refusal and how to lift it."""
        if self.source == "environment":
            return (
                "SOCIALPUB_ALLOW_PRIVATE_URLS=0 in this process's environment refuses them (it overrides the data "
                "dir's setting: unset it, or set it to 1)"
            )
        return (
            "this data dir refuses them; its operator allows them with `socialpub admin private-urls on` "
            "(local development only: every process on the data dir then reaches this machine and its network)"
        )
