"""The activity screen (f5) against the embedded backend: plan and credits, the counts of the last 30 days from
GET /v1/activity, the latest failure with its reason."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from socialpub_tui.screens.activity import ActivityScreen, iana_name
from socialpub_tui.times import DisplayZone


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.fixture
def growth(embedded):  # type: ignore[no-untyped-def]
    """A paid plan: room for a sixth account."""
    from tests.cli.conftest import invoke

    assert invoke("admin", "plan", "GROWTH", "--status", "active", "--period-end", "2099-01-01T00:00:00Z").code == 0


async def test_shows_plan_credits_counts_and_failures(tui_app, growth):
    app = tui_app(worker=True)
    async with app.run_test(size=(100, 30)) as pilot:
        bad = await app.client.add_sandbox_account("linkedin", "LinkedIn broken", "fail-permanent")
        ok = await app.client.create_post({"targets": ["facebook"], "content": "All good"})
        partial = await app.client.create_post(
            {"targets": ["facebook", {"platform": "linkedin", "channelId": bad.id}], "content": "Half good"})
        for post in (ok, partial):
            await app.client.wait_post(post.id, timeout=30, interval=0.1)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ActivityScreen)
        summary = str(screen.query_one("#act-summary").render())
        assert "Plan GROWTH active until 2099-01-01" in summary and "credits 1000 (+1000 a month)" in summary
        assert "2 posts" in summary and "1 completed" in summary and "1 partial" in summary
        assert "success 67% (2/3 targets)" in summary
        table = screen.query_one(DataTable)
        assert table.row_count == 1
        row = [str(c).strip() for c in table.get_row_at(0)]
        assert row[1:4] == ["linkedin", "LinkedIn broken", "permanent"] and row[4]
        assert screen.failures[0].post_id == partial.id
        await pilot.press("d")
        await settle(pilot)
        assert screen.days == 90 and "Last 90 days" in str(screen.query_one("#act-summary").render())


def test_the_zone_sent_is_an_iana_name(monkeypatch):
    assert iana_name(DisplayZone("Europe/Paris")) == "Europe/Paris"
    monkeypatch.setenv("TZ", "America/New_York")
    assert iana_name(DisplayZone(None)) == "America/New_York"
