"""Pigeon post's API versions (a test plugin: the dates are the loft's own, no vendor page)."""

from datetime import date

from backend.networks.lifecycle import ApiVersion, Lifecycle

LIFECYCLE = Lifecycle(
    setting="SOCIALPUB_PIGEON_VERSION",
    versions=(
        ApiVersion("2025-01", date(2025, 1, 1), date(2026, 1, 31), "the loft's notice board (test plugin)"),
        ApiVersion("2026-01", date(2026, 1, 1), date(2027, 1, 31), "the loft's notice board (test plugin)"),
        ApiVersion("2027-01", date(2027, 1, 1), None, "the loft's notice board (test plugin)"),
    ),
    default="2026-01",
)
