"""The data dir's own settings (`instance_setting`, migration 0027): facts every process opening the data dir — the
embedded TUI's worker, a CLI command, `serve`, `worker`, on any machine sharing a PostgreSQL database — applies
the same way, read when used (a change made by `socialpub admin …` holds at once everywhere, with no restart).

`private_urls`: whether the media fetcher and webhook deliveries may reach loopback and private addresses (off by
default). SOCIALPUB_ALLOW_PRIVATE_URLS, when set (1 or 0), overrides it in that one process: an operator's
override, said as such in every refusal it causes (backend.outbound.guard.AddressRule)."""

from __future__ import annotations

from typing import Any

from backend import clock
from backend.outbound.rule import AddressRule
from backend.store.db import database, tx
from backend.store.models import InstanceSetting

PRIVATE_URLS = "private_urls"


def address_rule(settings: Any) -> AddressRule:
    """The address rule this process applies now: SOCIALPUB_ALLOW_PRIVATE_URLS when set, else the data dir's
    `private_urls` (off when never set, or when no store is open in this process)."""
    if settings.allow_private_urls is not None:
        return AddressRule(bool(settings.allow_private_urls), "environment")
    return AddressRule(private_urls_allowed(), "data_dir")


def private_urls_allowed() -> bool:
    """The data dir's `private_urls` setting (False when never set)."""
    if database.obj is None:  # no store open in this process (a bare fetch in a tool): the safe default
        return False
    row = InstanceSetting.get_or_none(InstanceSetting.key == PRIVATE_URLS)
    return row is not None and row.value == "1"


def set_private_urls(allowed: bool) -> None:
    """`socialpub admin private-urls on|off`: one row, written in one transaction."""
    with tx():
        row = InstanceSetting.get_or_none(InstanceSetting.key == PRIVATE_URLS)
        if row is None:
            InstanceSetting.create(key=PRIVATE_URLS, value="1" if allowed else "0", updated_at=clock.now())
        else:
            InstanceSetting.update(value="1" if allowed else "0", updated_at=clock.now()).where(
                InstanceSetting.key == PRIVATE_URLS
            ).execute()
