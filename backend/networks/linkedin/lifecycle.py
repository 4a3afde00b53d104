"""LinkedIn's API versions (`LinkedIn-Version: YYYYMM`) with their sunset dates, sourced (issue 29).

LinkedIn releases a version a month and serves each "for a minimum of one year before sunset"; a call with a
sunset or not-yet-released version is refused 426 `NONEXISTENT_VERSION`. The default is 202603: the newest
version whose sunset date an official page states (the migrations table), and the one the adapter and its
emulator are tested against. Rows marked "belief" come from a third-party aggregator only (their dates follow
the official pattern, the 15th a year after release); re-read the migrations page before moving the default.
Versions after 202608 are not confirmed by any page read and are not listed.
"""

from __future__ import annotations

from datetime import date

from backend.networks.lifecycle import ApiVersion, Lifecycle

MIGRATIONS = "https://learn.microsoft.com/it-it/linkedin/marketing/integrations/migrations (read 2026-11-28)"
NOTICE = (
    "https://learn.microsoft.com/en-us/linkedin/marketing/lead-sync/leadsync-overview?view=li-lms-2026-06 "
    "banner (read 2026-11-28)"
)
VIEW_202608 = (
    "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/"
    "community-management-overview?view=li-lms-2026-08 (read 2026-11-28)"
)
AGGREGATOR = (
    "belief: https://raw.githubusercontent.com/api-evangelist/linkedin-ads/refs/heads/main/lifecycle/"
    "linkedin-ads-lifecycle.yml (third party, read 2026-11-28)"
)
SETTING = "SOCIALPUB_LINKEDIN_VERSION"


def _v(name: str, sunset: date, source: str) -> ApiVersion:
    return ApiVersion(name, date(int(name[:4]), int(name[4:6]), 1), sunset, source)


LIFECYCLE = Lifecycle(
    SETTING,
    (
        _v("202506", date(2026, 6, 15), f"{NOTICE} ('has been sunset'; the day: {AGGREGATOR})"),
        _v("202507", date(2026, 7, 15), AGGREGATOR),
        _v(
            "202508", date(2026, 8, 17), VIEW_202608 + " banner: '202508 … will be sunset on August 17, 2026'"
        ),
        _v("202509", date(2026, 9, 15), AGGREGATOR),
        _v("202510", date(2026, 10, 15), MIGRATIONS),
        _v("202511", date(2026, 11, 16), MIGRATIONS),
        # no 202512: neither the migrations table nor the aggregator lists one (never released)
        _v("202601", date(2027, 1, 15), MIGRATIONS),
        _v("202602", date(2027, 2, 15), MIGRATIONS),
        _v("202603", date(2027, 3, 16), MIGRATIONS),
        _v("202604", date(2027, 4, 15), AGGREGATOR),
        _v("202605", date(2027, 5, 15), AGGREGATOR),
        _v("202606", date(2027, 6, 15), AGGREGATOR),
        _v("202607", date(2027, 7, 15), AGGREGATOR),
        _v("202608", date(2027, 8, 15), f"{VIEW_202608} (released); the sunset day: belief, as {AGGREGATOR}"),
    ),
    "202603",
)
DEFAULT_VERSION = LIFECYCLE.default


def base_version(header: str) -> str:
    """The monthly version of a `LinkedIn-Version` value: `YYYYMM`, or `YYYYMM.RR` (a revision of it)."""
    return header.split(".", 1)[0]


def expanded(version: str) -> str:
    """How LinkedIn's 426 message names a version: `YYYYMM01` (header 202506 → "20250601")."""
    return base_version(version) + "01"
