"""The activity screen (f5) against the embedded backend: plan and credits, the counts of the last 30 days from
GET /v1/activity, the latest failure with its reason."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from socialpub_tui.screens.activity import ActivityScreen, iana_name
from socialpub_tui.times import DisplayZone
from tests.tui.helpers import press_until


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


@pytest.fixture
def growth(embedded):  # type: ignore[no-untyped-def]
    """A paid plan: room for a sixth account."""
    from tests.cli.conftest import invoke

    assert (
        invoke("admin", "plan", "GROWTH", "--status", "active", "--period-end", "2099-01-01T00:00:00Z").code
        == 0
    )


async def test_shows_plan_credits_counts_and_failures(tui_app, growth):
    app = tui_app(worker=True)
    async with app.run_test(size=(100, 30)) as pilot:
        bad = await app.client.add_sandbox_account("linkedin", "LinkedIn broken", "fail-permanent")
        ok = await app.client.create_post({"targets": ["facebook"], "content": "All good"})
        partial = await app.client.create_post(
            {"targets": ["facebook", {"platform": "linkedin", "channelId": bad.id}], "content": "Half good"}
        )
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


# ---- the webhooks panel (w), on a canned backend (tests/tui/webhooks_canned.py) --------------------------------
def webhooks_app(
    calls: list | None = None,
    endpoints: list | None = None,  # type: ignore[no-untyped-def]
    extra: dict | None = None,
):
    from tests.tui import webhooks_canned
    from tests.tui.canned import canned_app
    from tests.tui.test_activity_snapshots import WORKSPACE, activity

    return canned_app(
        {("GET", "/v1/workspace"): WORKSPACE, ("GET", "/v1/activity"): activity()}
        | webhooks_canned.routes(endpoints, calls)
        | (extra or {})
    )


def rows(table: DataTable) -> list[list[str]]:
    return [[str(c).strip() for c in table.get_row_at(i)] for i in range(table.row_count)]


def title(screen: ActivityScreen, name: str) -> str:
    return str(screen.query_one(name).render())


async def test_webhooks_panel_lists_failing_endpoints_and_failed_deliveries():
    calls: list = []
    app = webhooks_app(calls)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ActivityScreen)
        # out of view: only the list is read, and the failures' title tells
        assert not screen.query_one("#act-webhooks").display
        assert [c[:2] for c in calls] == [("GET", "/v1/webhooks")]
        assert "webhooks: 1 failing, 1 disabled (w)" in title(screen, "#act-failures-title")
        await pilot.press("w")
        await settle(pilot)
        assert screen.query_one("#act-webhooks").display and not screen.query_one("#act-failures").display
        asked = {c[1]: c[2] for c in calls if c[1].endswith("/deliveries")}
        assert asked == {
            f"/v1/webhooks/{w}/deliveries": {"status": "failed", "limit": "20"}
            for w in ("we_ok", "we_fail", "we_gone")
        }
        assert "3 endpoints: 1 failing, 1 disabled" in title(screen, "#act-webhooks-title")
        assert "webhooks:" not in title(screen, "#act-failures-title")
        hooks = rows(screen.query_one("#act-hooks", DataTable))
        assert [(r[0], r[2]) for r in hooks] == [
            ("https://old.example.net/hook", "410"),
            ("https://ops.example.org/webhooks/socialpub", "500"),
        ]
        assert (
            hooks[0][1].startswith("disabled: the receiver") and hooks[1][1] == "failing since 14 Jan 17:05"
        )
        deliveries = rows(screen.query_one("#act-deliveries", DataTable))
        # newest first across the endpoints, with the receiver's status code (- when none answered)
        assert [(r[0], r[1], r[2], r[3]) for r in deliveries] == [
            ("15 Jan 07:40", "publish.failed", "500", "HTTP 500"),
            ("14 Jan 17:05", "publish.completed", "503", "HTTP 503 (Retry-After: 120)"),
            ("14 Jan 12:00", "tiktok.publish.inbox_…", "410", "HTTP 410"),
            ("13 Jan 10:30", "generation.failed", "-", "connection refused"),
        ]
        assert deliveries[0][4].startswith("ops.example.org/") and deliveries[0][4].endswith("/socialpub")
        assert screen.focused is screen.query_one("#act-deliveries")
        await pilot.press("w")
        assert screen.query_one("#act-failures").display and not screen.query_one("#act-webhooks").display


async def test_redeliver_and_re_enable_call_the_api_and_notify():
    from tests.tui.helpers import record_notifications

    calls: list = []
    app = webhooks_app(calls)
    async with app.run_test(size=(100, 30)) as pilot:
        seen = record_notifications(app)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert screen.check_action("redeliver", ()) is False  # the panel is not in view: not in the footer
        await pilot.press("s")
        assert not [c for c in calls if c[0] == "POST"]
        await pilot.press("w")
        await settle(pilot)
        descriptions = {b.binding.description for b in screen.active_bindings.values() if b.enabled}
        assert {"Redeliver", "Re-enable"} <= descriptions  # footer and command palette
        await pilot.press("down", "s")
        await settle(pilot)
        assert [c for c in calls if c[0] == "POST"] == [
            ("POST", "/v1/events/evt_0005/redeliver", {"endpointId": "we_fail"})
        ]
        assert seen[-1]["title"] == "Redelivered" and "evt_0005" in seen[-1]["message"]
        assert "https://ops.example.org/webhooks/socialpub" in seen[-1]["message"]
        # e: the selected endpoint (the disabled one) enabled again
        screen.query_one("#act-hooks", DataTable).focus()
        await pilot.press("e")
        await settle(pilot)
        assert [c for c in calls if c[0] == "PATCH"] == [("PATCH", "/v1/webhooks/we_gone", {"enabled": True})]
        assert seen[-1]["title"] == "Endpoint re-enabled"
        await pilot.press("down")  # the failing endpoint is enabled: nothing to re-enable
        assert screen.check_action("enable_webhook", ()) is None


async def test_redeliver_refused_is_notified_with_the_api_code():
    import httpx

    from tests.tui.helpers import record_notifications

    def refused(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            403,
            json={
                "error": "insufficient_scope",
                "message": "this API key lacks the scope 'webhooks:write'",
                "details": [],
            },
        )

    app = webhooks_app(extra={("POST", "/v1/events/evt_0007/redeliver"): refused})
    async with app.run_test(size=(100, 30)) as pilot:
        seen = record_notifications(app)
        await press_until(pilot, "f5", lambda: isinstance(app.screen, ActivityScreen))
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert seen[-1]["title"] == "insufficient_scope" and seen[-1]["severity"] == "error"
        assert "Redeliver: this API key lacks the scope 'webhooks:write'" == seen[-1]["message"]


async def test_a_server_without_webhooks_shows_the_panel_unavailable():
    from tests.tui.canned import canned_app
    from tests.tui.helpers import record_notifications
    from tests.tui.test_activity_snapshots import WORKSPACE, activity

    app = canned_app({("GET", "/v1/workspace"): WORKSPACE, ("GET", "/v1/activity"): activity()})  # 404 else
    async with app.run_test(size=(80, 24)) as pilot:
        seen = record_notifications(app)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert screen.query_one("#act-failures", DataTable).row_count == 3  # the rest of the screen as before
        await pilot.press("w")
        await settle(pilot)
        assert "not offered by this server" in title(screen, "#act-webhooks-title")
        assert not screen.query_one("#act-hooks").display and not screen.query_one("#act-deliveries").display
        assert screen.check_action("redeliver", ()) is None
        assert seen == []  # no error toast on every refresh
        await pilot.press("r")
        await settle(pilot)
        assert seen == [] and "Plan STARTER" in title(screen, "#act-summary")


async def test_no_endpoints_yet_hints_at_the_cli():
    app = webhooks_app(endpoints=[])
    async with app.run_test(size=(80, 24)) as pilot:
        await press_until(pilot, "f5", lambda: isinstance(app.screen, ActivityScreen))
        await pilot.press("w")
        await settle(pilot)
        assert "no endpoints yet; add one with socialpub webhooks add URL" in title(
            app.screen, "#act-webhooks-title"
        )


async def test_a_tall_terminal_shows_the_webhooks_beneath_the_failures():
    calls: list = []
    app = webhooks_app(calls)
    async with app.run_test(size=(120, 44)) as pilot:
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert screen.query_one("#act-failures").display and screen.query_one("#act-webhooks").display
        assert screen.query_one("#act-deliveries", DataTable).row_count == 4
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert screen.query_one("#act-failures").display and not screen.query_one("#act-webhooks").display
        assert "webhooks: 1 failing, 1 disabled (w)" in title(screen, "#act-failures-title")
        await pilot.press("w")
        await settle(pilot)
        await pilot.resize_terminal(80, 24)  # narrower: the columns shrink with it, no sideways scrolling
        await settle(pilot)
        for name in ("#act-hooks", "#act-deliveries"):
            table = screen.query_one(name, DataTable)
            assert table.display and table.virtual_size.width <= table.size.width, name


# ---- on the embedded backend: a real endpoint where nothing listens ---------------------------------------------
@pytest.fixture
def failing_hooks(embedded, monkeypatch):  # type: ignore[no-untyped-def]
    """Loopback receivers allowed; one attempt per delivery (the first failure is final); a free port."""
    import socket

    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_ALLOW_PRIVATE_URLS", "1")
    monkeypatch.setenv("SOCIALPUB_WEBHOOK_RETRY_SCHEDULE", "0")
    get_settings.cache_clear()
    with socket.socket() as s:  # bound, never listening: a connection is refused
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}/hook"
    get_settings.cache_clear()


async def failed_deliveries(client, endpoint_id: str, count: int) -> list:  # type: ignore[no-untyped-def]
    import asyncio
    import time

    deadline = time.monotonic() + 30
    while True:
        page = await client.list_deliveries(endpoint_id, status="failed")
        if len(page.items) >= count or time.monotonic() > deadline:
            return page.items
        await asyncio.sleep(0.1)


async def test_a_real_failing_endpoint_is_listed_and_its_event_redelivered(tui_app, failing_hooks):
    from tests.tui.helpers import record_notifications, until

    app = tui_app(worker=True)
    async with app.run_test(size=(100, 30)) as pilot:
        seen = record_notifications(app)
        hook = await app.client.create_webhook(failing_hooks, description="nothing listens")
        test = await app.client.test_webhook(hook.id)
        app.client.ready()  # the worker now, not a second after the first screen
        first = await failed_deliveries(app.client, hook.id, 1)
        assert [d.id for d in first] == [test.delivery_id] and first[0].last_status_code is None
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert "webhooks: 1 failing (w)" in title(screen, "#act-failures-title")
        await pilot.press("w")
        await settle(pilot)
        [endpoint] = rows(screen.query_one("#act-hooks", DataTable))
        assert (
            endpoint[0] == failing_hooks and endpoint[1].startswith("failing since ") and endpoint[2] == "-"
        )
        [delivery] = rows(screen.query_one("#act-deliveries", DataTable))
        assert delivery[1:3] == ["webhook.test", "-"] and delivery[3].startswith("could not connect")
        await pilot.press("s")
        await until(pilot, lambda: any(n["title"] == "Redelivered" for n in seen), what="the redelivery")
        assert test.event_id in seen[-1]["message"]
        again = await failed_deliveries(app.client, hook.id, 2)
        assert len(again) == 2 and {d.event_id for d in again} == {test.event_id}
        await pilot.press("r")
        await settle(pilot)
        assert screen.query_one("#act-deliveries", DataTable).row_count == 2
        assert not [n for n in seen if n["severity"] == "error"]


@pytest.fixture
def data_dir_rule(embedded, monkeypatch):  # type: ignore[no-untyped-def]
    """The address rule left to the data dir (no SOCIALPUB_ALLOW_PRIVATE_URLS); one attempt per delivery."""
    from backend.config import get_settings

    monkeypatch.delenv("SOCIALPUB_ALLOW_PRIVATE_URLS", raising=False)
    monkeypatch.setenv("SOCIALPUB_WEBHOOK_RETRY_SCHEDULE", "0")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


async def test_a_delivery_the_data_dir_refuses_says_which_setting_and_redeliver_says_why_not(
    tui_app, data_dir_rule
):
    """Issue 33: the TUI's own worker refused a delivery without saying why, and `s` said "queued" only for it to
    be refused again. The panel names the setting; `s` is refused up front with the API's code and the command;
    once `socialpub admin private-urls on` ran (in another process: the data dir's fact), `s` redelivers."""
    from tests.cli.conftest import invoke
    from tests.tui.helpers import record_notifications, until

    assert invoke("admin", "private-urls", "on").code == 0
    app = tui_app(worker=True)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = record_notifications(app)
        hook = await app.client.create_webhook("http://127.0.0.1:9/hook", description="laptop")
        assert invoke("admin", "private-urls", "off").code == 0
        post = await app.client.create_post({"targets": ["facebook"], "content": "Refused hook"})
        app.client.ready()
        await app.client.wait_post(post.id, timeout=30, interval=0.1)
        [refused] = await failed_deliveries(app.client, hook.id, 1)
        assert refused.refused_by == "private-urls"
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        screen = app.screen
        assert (
            "1 refused by the private-urls setting: socialpub admin private-urls on, then s redelivers"
            in title(screen, "#act-webhooks-title")
        )
        assert "failing" not in title(screen, "#act-failures-title")  # the endpoint is not blamed
        [row] = rows(screen.query_one("#act-deliveries", DataTable))
        assert row[3] == "refused by the private-urls setting", row
        await pilot.press("s")
        await until(pilot, lambda: any(n["title"] == "webhook_url_refused" for n in seen), what="the refusal")
        assert "`socialpub admin private-urls on`" in seen[-1]["message"]
        assert not [n for n in seen if n["title"] == "Redelivered"]
        assert invoke("admin", "private-urls", "on").code == 0
        await pilot.press("s")
        await until(pilot, lambda: any(n["title"] == "Redelivered" for n in seen), what="the redelivery")


async def test_o_s_e_and_w_say_something_when_there_is_nothing_to_act_on(tui_app):
    """Issue 33: on Activity, `w`, `o` and `e` gave no visible result or message when there was nothing to act
    on (no failed post, no endpoint, a terminal tall enough to show both panels already)."""
    from tests.tui.helpers import record_notifications, until

    app = tui_app(worker=False)
    async with app.run_test(size=(120, 44)) as pilot:  # tall: the webhooks are beneath the failures
        seen = record_notifications(app)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ActivityScreen) and screen.failures == []
        for key, said in (
            ("o", "No failed post in the last 30 days"),
            (
                "s",
                "No failed delivery to redeliver. There is no webhook endpoint yet: socialpub webhooks add URL",
            ),
            ("e", "No disabled endpoint"),
            ("w", "On the webhooks"),
        ):
            before = len(seen)
            await pilot.press(key)
            await until(pilot, lambda before=before: len(seen) > before, what=f"a word after {key}")
            assert said in seen[-1]["message"], (key, seen[-1])
        await pilot.press("w")
        await until(pilot, lambda: "On the failed posts" in seen[-1]["message"])


async def test_one_credit_movement_is_not_movements(tui_app, growth):
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot)
        text = title(app.screen, "#act-credits-title")
        assert "the latest movement" in text and "1 latest movements" not in text, text
