"""The accounts screen (f4) against the embedded backend: the sandbox accounts of `init --sandbox`, the default
marker, and what the emulated network received once a post was published."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from textual.widgets import DataTable, Input, Select

from backend.schemas.accounts import AccountOut
from socialpub_tui.screens.accounts import AccountsScreen, expiry
from tests.tui.helpers import press_until, record_notifications


async def settle(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def fields(app) -> tuple[Select, Input, Select]:  # type: ignore[no-untyped-def,type-arg]
    """The add dialog's network, name and behaviour fields."""
    screen = app.screen
    return (
        screen.query_one("#add-sandbox-network", Select),
        screen.query_one("#add-sandbox-name", Input),
        screen.query_one("#add-sandbox-behaviour", Select),
    )


def opened(app, select: Select) -> bool:  # type: ignore[no-untyped-def,type-arg]
    """`select`'s list of options is open and has the focus."""
    return app.focused is not None and app.focused is not select and select in app.focused.ancestors


def rows(table: DataTable) -> list[list[str]]:  # type: ignore[type-arg]
    return [
        [str(c) for c in table.get_row_at(i)[1:]] for i in range(table.row_count)
    ]  # after the doctor's marker


async def test_lists_the_sandbox_accounts_with_their_default(tui_app):
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AccountsScreen)
        table = screen.query_one(DataTable)
        shown = rows(table)
        assert sorted(r[0].split()[0] for r in shown) == ["BS", "FB", "IG", "LI", "MA", "TH", "TT", "YT"]
        assert any("Sandbox LinkedIn" in r[0] for r in shown)
        assert all(r[2].strip() == "sandbox" and r[3].strip() == "active" and r[5] == "✓" for r in shown)
        assert "8 connected" in str(screen.query_one("#acc-title").render())
        assert "nothing received yet" in str(screen.query_one("#acc-published").render())


async def test_shows_what_the_emulated_network_received_after_a_post_published(tui_app):
    app = tui_app(worker=True)
    async with app.run_test(size=(100, 30)) as pilot:
        post = await app.client.create_post(
            {"targets": ["linkedin"], "content": "Hello from the accounts test"}
        )
        done = await app.client.wait_post(post.id, timeout=30, interval=0.1)
        assert done.status == "completed"
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        table = screen.query_one(DataTable)
        linkedin = next(i for i, r in enumerate(rows(table)) if r[0].startswith("LI"))
        table.move_cursor(row=linkedin)
        await settle(pilot)
        panel = str(screen.query_one("#acc-published").render())
        assert "Hello from the accounts test" in panel and "published" in panel
        assert "Sandbox LinkedIn" in str(screen.query_one("#acc-published-title").render())
        # another account: its own (empty) list
        table.move_cursor(row=(linkedin + 1) % table.row_count)
        await settle(pilot)
        assert "Hello from the accounts test" not in str(screen.query_one("#acc-published").render())


def test_token_expiry_warns_a_week_before():
    now = datetime(2027, 1, 15, 8, tzinfo=UTC)

    def acc(delta: timedelta | None) -> AccountOut:
        return AccountOut.model_validate(
            {
                "id": "acc_1",
                "platform": "linkedin",
                "name": "Brand page",
                "username": "brand",
                "kind": "live",
                "status": "active",
                "isDefault": True,
                "behaviour": None,
                "connectedAt": "2026-12-01T00:00:00Z",
                "tokenExpiresAt": None if delta is None else (now + delta).isoformat(),
            }
        )

    assert expiry(acc(None), now) == ("none", None)
    assert expiry(acc(timedelta(days=30)), now) == ("ok", None)
    state, line = expiry(acc(timedelta(days=3)), now)
    assert state == "soon" and "Brand page" in line and "in 3 days" in line and "reconnect" in line
    assert expiry(acc(timedelta(days=7)), now)[0] == "soon"
    state, line = expiry(acc(timedelta(hours=-2)), now)
    assert state == "expired" and "2 h ago" in line


def test_every_action_of_the_three_screens_has_an_id_and_a_description():
    from socialpub_tui.screens.activity import ActivityScreen
    from socialpub_tui.screens.calendar import CalendarScreen

    for screen in (CalendarScreen, AccountsScreen, ActivityScreen):
        for binding in screen.BINDINGS:
            assert binding.id and binding.description, (screen.__name__, binding)  # type: ignore[union-attr]
        ids = [b.id for b in screen.BINDINGS]  # type: ignore[union-attr]
        assert len(ids) == len(set(ids))


async def test_the_palette_offers_the_calendar_moves(tui_app):
    from socialpub_tui.commands import SocialpubCommands

    app = tui_app(worker=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        found = [hit.text async for hit in SocialpubCommands(app.screen).search("week")]
        assert "Week/month" in found


async def test_a_connects_a_sandbox_account_with_the_chosen_behaviour_from_the_keyboard(tui_app):
    from socialpub_tui.screens.add_sandbox import AddSandboxScreen
    from tests.cli.conftest import invoke

    assert invoke("admin", "plan", "GROWTH").code == 0  # room for a sixth account
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, AddSandboxScreen)
        await pilot.press("ctrl+s")  # nothing chosen yet: the dialog says what is missing and stays
        await pilot.pause()
        assert isinstance(app.screen, AddSandboxScreen)
        assert "pick a network" in str(app.screen.query_one("#add-sandbox-problem").render())
        network, name, behaviour = fields(app)
        # network: the select opens with enter, linkedin is the fourth entry
        await press_until(pilot, "enter", lambda: opened(app, network))
        await pilot.press("down", "down", "down", "down")
        await press_until(pilot, "enter", lambda: app.focused is network)
        await press_until(pilot, "tab", lambda: app.focused is name)
        await pilot.press(*"Flaky Corp")
        await press_until(pilot, "tab", lambda: app.focused is behaviour)
        await press_until(pilot, "enter", lambda: opened(app, behaviour))
        await pilot.press("down", "down")  # behaviour: ok -> fail-permanent -> fail-retriable
        await press_until(pilot, "enter", lambda: app.focused is behaviour)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, AccountsScreen)
        listing = await app.client.list_accounts()
        added = [a for a in listing.items if a.name == "Flaky Corp"]
        assert [(a.platform, a.behaviour, a.kind) for a in added] == [
            ("linkedin", "fail-retriable", "sandbox")
        ]
        shown = rows(app.screen.query_one(DataTable))
        assert any("Flaky Corp" in r[0] and r[2].strip() == "sandbox*" for r in shown)


async def test_escape_leaves_the_add_dialog_without_connecting_anything(tui_app):
    app = tui_app(worker=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, AccountsScreen)
        assert len((await app.client.list_accounts()).items) == 8


async def test_an_account_the_plan_does_not_allow_is_refused_with_the_apis_reason(tui_app):
    app = tui_app(worker=False)  # the FREE plan: 8 accounts (one per built-in network), all connected
    shown = record_notifications(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        network, name, _ = fields(app)
        await press_until(pilot, "enter", lambda: opened(app, network))
        await pilot.press("down")
        await press_until(pilot, "enter", lambda: app.focused is network)
        await press_until(pilot, "tab", lambda: app.focused is name)
        await pilot.press(*"Sixth", "ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, AccountsScreen)
        notes = [n for n in shown if n["severity"] == "error"]
        assert (
            notes
            and "8 connected accounts" in notes[-1]["message"]
            and notes[-1]["title"] == "channel_limit_exceeded"
        )
        assert len((await app.client.list_accounts()).items) == 8


async def test_names_are_not_cut_while_the_terminal_has_room(tui_app):
    """Issue 33: the table started at column 0 and cut the names (`Sandbox Facebook …`) with most of the width
    empty."""
    app = tui_app(worker=False)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        shown = rows(app.screen.query_one(DataTable))
        names = [r[0].strip() for r in shown]
        assert "FB Sandbox Facebook Page" in names and not any("…" in r[0] + r[1] for r in shown), shown
        assert app.screen.query_one(DataTable).region.x >= 1  # a margin, as the title above it has


async def test_the_doctors_markers_and_findings_and_d_runs_it_again() -> None:
    """`accounts doctor`'s findings (canned): ✗ on the row of an account with an error, ⚠ with a warning; the
    selected live account's findings and its network app's, each with its fix, in the panel; `d` runs the doctor
    again and says what it found."""
    from tests.tui.test_accounts_snapshots import app as canned

    app = canned()
    shown = record_notifications(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        table = screen.query_one(DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == [" ", " ", "⚠", " ", "✗", " "]
        assert "✗ LinkedIn app: LinkedIn API version 202506 ended" in str(
            screen.query_one("#acc-warnings").render()
        )
        table.move_cursor(row=2)  # Brand LinkedIn, live
        await settle(pilot)
        panel = str(screen.query_one("#acc-published").render())
        assert "⚠ token_expiring: token expires in 3 days" in panel
        assert "✗ api_version_sunset" in panel and "fix: unset SOCIALPUB_LINKEDIN_VERSION" in panel
        await pilot.press("d")
        await settle(pilot)
        [note] = [n for n in shown if n["title"] == "Doctor"]
        assert note["severity"] == "error" and "2 error(s), 1 warning(s)" in note["message"]


async def test_d_on_a_sandbox_installation(tui_app):  # type: ignore[no-untyped-def]
    """The embedded backend, sandbox accounts only: no marker; the doctor says what it found (each network's
    OAuth app unconfigured: warnings)."""
    app = tui_app(worker=False)
    shown = record_notifications(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        assert {str(table.get_row_at(i)[0]) for i in range(table.row_count)} == {" "}
        await pilot.press("d")
        await settle(pilot)
        [note] = [n for n in shown if n["title"] == "Doctor"]
        assert note["severity"] == "warning" and re.search(r"0 error\(s\), \d+ warning\(s\)", note["message"])
