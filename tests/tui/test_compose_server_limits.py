"""Compose counts a Mastodon target against its account's instance's own limit (AccountOut.textLimit, from the
limits cached when the account connected), not upstream Mastodon's 500: a text the instance takes is not refused
locally, and the counter shows the instance's bound."""

from __future__ import annotations

from textual.widgets import Static, TextArea

from backend.networks.mastodon.emulator import SANDBOX_HOST, configure_instance
from backend.networks.mastodon.instance import InstanceLimits
from backend.services import network_instances
from socialpub_tui.app import utc_now
from tests.tui.helpers import until
from tests.tui.test_compose import accounts_by_platform, open_compose, pick, problem_text, row


async def test_the_counter_and_the_check_use_the_accounts_instance_limit(tui_app) -> None:  # type: ignore[no-untyped-def]
    app = tui_app(clock=utc_now)
    async with app.run_test(size=(120, 40)) as pilot:
        configure_instance(SANDBOX_HOST, max_characters=1000)
        network_instances.save_limits(
            "mastodon", SANDBOX_HOST, InstanceLimits(SANDBOX_HOST, "4.4.0", max_characters=1000).to_dict()
        )
        ids = await accounts_by_platform(app)
        listing = await app.client.list_accounts()
        assert {a.platform: a.text_limit for a in listing.items}["mastodon"] == 1000
        screen = await open_compose(pilot)
        pick(screen, ids["mastodon"])
        screen.query_one("#compose-text", TextArea).text = "x" * 900
        await pilot.pause()
        count = row(screen, ids["mastodon"]).query_one(".target-count", Static)
        await until(pilot, lambda: "900 / 1,000" in str(count.render()), what="the instance's bound")
        assert "✓" in problem_text(screen, ids["mastodon"])
        screen.query_one("#compose-text", TextArea).text = "x" * 1001
        await pilot.pause()
        await until(
            pilot, lambda: "at most 1,000" in problem_text(screen, ids["mastodon"]), what="the refusal"
        )
