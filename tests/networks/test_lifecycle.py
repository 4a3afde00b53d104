from datetime import date

import pytest

from backend.networks.doctor import version_findings
from backend.networks.lifecycle import ApiVersion, Lifecycle

LC = Lifecycle(
    "SOCIALPUB_X_VERSION",
    (
        ApiVersion(
            "202511", date(2025, 11, 1), date(2026, 11, 16), "https://example.test/v (read 2026-11-28)"
        ),
        ApiVersion("202601", date(2026, 1, 1), date(2027, 1, 15), "https://example.test/v (read 2026-11-28)"),
        ApiVersion("202603", date(2026, 3, 1), None, "https://example.test/v (read 2026-11-28)"),
    ),
    "202603",
)


@pytest.mark.parametrize(
    ("version", "today", "status", "days"),
    [
        ("202511", date(2026, 11, 16), "ending", 0),  # its last day
        ("202511", date(2026, 11, 17), "sunset", -1),
        ("202601", date(2026, 12, 16), "ending", 30),
        ("202601", date(2026, 12, 15), "active", 31),
        ("202603", date(2030, 1, 1), "active", None),
        ("202603", date(2026, 2, 1), "unknown", None),  # not released yet on that day
        ("202506", date(2026, 11, 28), "unknown", None),
    ],
)
def test_state(version: str, today: date, status: str, days: int | None) -> None:
    st = LC.state(version, today)
    assert st.status == status and st.newest == "202603"
    if status in ("active", "ending", "sunset") and days is not None:
        assert st.days_left == days


def test_active_on_lists_what_the_network_serves() -> None:
    assert LC.active_on(date(2026, 11, 28)) == ("202601", "202603")


def test_default_must_be_known() -> None:
    with pytest.raises(ValueError):
        Lifecycle("S", LC.versions, "209901")


def test_findings_say_what_to_set() -> None:
    assert version_findings("X", LC, "202603", date(2026, 11, 28)) == []
    [sunset] = version_findings("X", LC, "202511", date(2026, 11, 28))
    assert sunset.severity == "error" and sunset.code == "api_version_sunset"
    assert "2026-11-16" in sunset.message and "SOCIALPUB_X_VERSION" in sunset.fix and "202603" in sunset.fix
    [ending] = version_findings("X", LC, "202601", date(2026, 12, 20))
    assert ending.severity == "warning" and "in 26 days" in ending.message
    [unknown] = version_findings("X", LC, "202506", date(2026, 11, 28))
    assert unknown.code == "api_version_unknown" and unknown.severity == "error"
