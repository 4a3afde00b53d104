"""Post detail against the embedded backend: what failed at a glance, retry, cancel, links, live refresh,
media previews, actions the state does not allow shown disabled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from textual.widgets import DataTable, Static

from socialpub_tui.app import utc_now
from socialpub_tui.screens.confirm import ConfirmScreen
from socialpub_tui.screens.post_detail import PostDetailScreen
from socialpub_tui.widgets.media_preview import MediaPreview
from tests.cli.conftest import invoke
from tests.tui.helpers import mp4_bytes, png, until

SIZE = (100, 30)


async def open_detail(pilot: Any, post_id: str) -> PostDetailScreen:
    pilot.app.push_screen(PostDetailScreen(post_id))
    return await until(
        pilot,
        lambda: (
            isinstance(pilot.app.screen, PostDetailScreen)  # type: ignore[no-any-return]
            and pilot.app.screen.post_id == post_id
            and pilot.app.screen.post is not None
            and pilot.app.screen
        ),
        what=f"the detail of {post_id}",
    )


def enabled(screen: PostDetailScreen, action: str) -> bool | None:
    return screen.check_action(action, ())


def later(days: int = 2) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_partial_post_says_who_failed_and_retry_creates_one_post_for_the_retriable_target(
    tui_app,
) -> None:
    assert invoke("admin", "plan", "GROWTH").code == 0  # room for more accounts
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        flaky = await app.client.add_sandbox_account("linkedin", "Flaky LI", "fail-retriable")
        dead = await app.client.add_sandbox_account("facebook", "Dead FB", "fail-permanent")
        post = await app.client.create_post(
            {
                "targets": [
                    "linkedin",
                    {"platform": "linkedin", "channelId": flaky.id},
                    {"platform": "facebook", "channelId": dead.id},
                ],
                "content": "mix",
            }
        )
        final = await app.client.wait_post(post.id, timeout=60)
        assert final.status == "partial"
        screen = await open_detail(pilot, post.id)
        summary = str(screen.query_one("#detail-summary", Static).render())
        assert "linkedin · Flaky LI failed:" in summary and "retriable: press r" in summary
        assert "facebook · Dead FB failed:" in summary and "permanent: retrying will not help" in summary
        assert enabled(screen, "retry") and not enabled(screen, "cancel_post") and not enabled(screen, "edit")
        await pilot.press("r")
        retry = await until(
            pilot,
            lambda: (
                isinstance(app.screen, PostDetailScreen)
                and app.screen.post_id != post.id
                and app.screen.post
                and app.screen
            ),
            what="the retry's detail",
        )
        assert retry.post.idempotency_key == f"retry-of:{post.id}"
        assert [(t.platform, t.account_id) for t in retry.post.targets] == [("linkedin", flaky.id)]
        # retrying the original again creates nothing: the same retry post comes back
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, PostDetailScreen), what="back")
        again = await open_detail(pilot, post.id)
        await pilot.press("r")
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, PostDetailScreen)
                and app.screen is not again
                and app.screen.post_id == retry.post_id
            ),
            what="the same retry post",
        )
        retries = await app.client.list_posts(idempotency_key=f"retry-of:{post.id}")
    assert [p.id for p in retries.items] == [retry.post_id]


async def test_cancel_asks_first_then_cancels_and_disables_itself(tui_app) -> None:
    app = tui_app(clock=utc_now)
    changes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.post_changed.subscribe(app, lambda change: changes.append(change.action))
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "later", "scheduledAt": later()}
        )
        screen = await open_detail(pilot, post.id)
        assert enabled(screen, "cancel_post") and enabled(screen, "edit") and not enabled(screen, "retry")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("n")  # kept
        await until(pilot, lambda: app.screen is screen, what="back")
        assert (await app.client.get_post(post.id)).status == "scheduled"
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirmation")
        await pilot.press("y")
        await until(pilot, lambda: screen.post.status == "cancelled", what="the cancelled post")
        assert not enabled(screen, "cancel_post") and not enabled(screen, "edit")
        assert (await app.client.get_post(post.id)).status == "cancelled"
        # the API keeps its targets `pending` (spec 3.2 has no cancelled target): they read "not sent"
        assert [t.status for t in screen.post.targets] == ["pending"]
        table = screen.query_one("#detail-targets", DataTable)
        assert [str(table.get_cell_at((i, 2))) for i in range(table.row_count)] == ["not sent"]
        assert "not sent" in str(screen.query_one("#detail-target", Static).render())
        assert screen._refresh_timer is None  # nothing will move them: no more reads
    assert changes == ["cancelled"]


async def test_links_open_in_a_browser_and_copy_to_the_clipboard(tui_app, monkeypatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        post = await app.client.create_post({"targets": ["facebook", "linkedin"], "content": "links"})
        final = await app.client.wait_post(post.id, timeout=30)
        screen = await open_detail(pilot, post.id)
        screen.query_one("#detail-targets", DataTable).move_cursor(row=1)
        await pilot.pause()
        assert enabled(screen, "open_link") and enabled(screen, "copy_link")
        await pilot.press("y")
        assert app.clipboard == final.targets[1].post_url
        await pilot.press("o")
        await until(pilot, lambda: opened, what="the browser")
        assert (
            not enabled(screen, "edit")
            and not enabled(screen, "cancel_post")
            and not enabled(screen, "retry")
        )
    assert opened == [final.targets[1].post_url]


async def test_the_detail_follows_a_post_being_sent(tui_app) -> None:
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        post = await app.client.create_post({"targets": ["facebook", "linkedin"], "content": "live"})
        pilot.app.push_screen(PostDetailScreen(post.id))
        screen = await until(
            pilot,
            lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post and app.screen,
            what="the detail",
        )
        # nothing pressed: it reads the post again until every target is done
        await until(pilot, lambda: screen.post.status == "completed", what="completed on screen")
        table = screen.query_one("#detail-targets", DataTable)
        statuses = [str(table.get_cell_at((i, 2))) for i in range(table.row_count)]
        assert statuses == ["succeeded", "succeeded"]
        assert screen._refresh_timer is None  # final: no more reads


async def test_media_previews_an_image_and_a_videos_first_frame(tui_app, tmp_path) -> None:
    app = tui_app(clock=utc_now)
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(mp4_bytes(frames=20, rate=10))  # 2 seconds
    async with app.run_test(size=SIZE) as pilot:
        image = await app.client.upload_media_file(png(tmp_path / "p.png"))
        video = await app.client.upload_media_file(clip)
        post = await app.client.create_post(
            {
                "targets": ["facebook"],
                "content": "media",
                "scheduledAt": later(),
                "mediaUrls": [image.url, video.url],
            }
        )
        screen = await open_detail(pilot, post.id)
        previews = await until(
            pilot,
            lambda: (p := list(screen.query(MediaPreview))) and all(x.decoded for x in p) and p,
            what="the previews",
        )
        assert [p.decoded.kind for p in previews] == ["image", "video"]
        assert previews[0].decoded.caption.startswith("image · 64×48")
        assert "0:02" in previews[1].decoded.caption and previews[1].decoded.picture is not None
        assert len(previews[1].query(".media-picture")) == 1


async def test_the_targets_table_has_the_focus_and_the_keys_act_on_the_chosen_target(tui_app) -> None:
    app = tui_app(clock=utc_now)
    async with app.run_test(size=(120, 40)) as pilot:
        post = await app.client.create_post({"targets": ["facebook", "linkedin"], "content": "two links"})
        final = await app.client.wait_post(post.id, timeout=30)
        screen = await open_detail(pilot, post.id)
        table = screen.query_one("#detail-targets", DataTable)
        assert app.focused is table
        await pilot.press("down")  # no tab first: the arrows move between the targets at once
        await until(pilot, lambda: table.cursor_row == 1, what="the second target")
        await pilot.press("y")
        assert app.clipboard == final.targets[1].post_url
        chosen = str(screen.query_one("#detail-target", Static).render())
        assert f"link: {final.targets[1].post_url}" in chosen and final.targets[1].external_post_id in chosen


async def test_a_key_the_post_does_not_allow_says_why(tui_app) -> None:
    from tests.tui.helpers import record_notifications

    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        seen = record_notifications(app)
        post = await app.client.create_post({"targets": ["facebook"], "content": "done"})
        await app.client.wait_post(post.id, timeout=30)
        screen = await open_detail(pilot, post.id)
        # the footer still shows the key, dimmed
        assert (
            screen.active_bindings["e"].binding.action == "edit" and not screen.active_bindings["e"].enabled
        )
        await pilot.press("e")
        await until(pilot, lambda: seen, what="a notification")
        assert seen[-1]["message"] == "Only a scheduled post can be edited — this one is completed."
        await pilot.press("c")
        await until(pilot, lambda: len(seen) == 2, what="a second notification")
        assert seen[-1]["message"] == "Only a scheduled post can be cancelled — this one is completed."
        await pilot.press("r")
        await until(pilot, lambda: len(seen) == 3, what="a third notification")
        assert seen[-1]["message"].startswith("Nothing to retry")
        assert app.screen is screen  # nothing else happened
        await pilot.press("d")  # an action the post allows does not explain itself: it runs
        await until(pilot, lambda: app.screen is not screen, what="the duplicate's compose screen")
        assert len(seen) == 3


def test_the_long_columns_share_what_the_short_ones_leave() -> None:
    from socialpub_tui.screens.post_detail import fit_widths

    natural = {
        "network": 9,
        "account": 9,
        "status": 9,
        "reason": 70,
        "fail": 9,
        "external": 11,
        "link": 40,
        "when": 20,
    }
    labels = {
        "network": 7,
        "account": 7,
        "status": 6,
        "reason": 6,
        "fail": 9,
        "external": 11,
        "link": 4,
        "when": 16,
    }
    widths = fit_widths(natural, 116, labels)  # the detail's width at 120 columns
    assert sum(widths.values()) + 2 * len(widths) == 116  # every column in sight, the width used
    assert {k: widths[k] for k in ("network", "status", "fail", "when", "account", "external")} == {
        "network": 9,
        "status": 9,
        "fail": 9,
        "when": 20,
        "account": 9,
        "external": 11,
    }  # kept whole
    assert widths["link"] == 16 and widths["reason"] == 17
    assert fit_widths(natural, 300, labels) == natural  # room for everything: nothing is cut
    narrow = fit_widths(natural, 60, labels)  # no room: the least widths, and the table scrolls
    assert narrow["external"] == 11 and narrow["link"] == 6 and narrow["reason"] == 6


async def test_the_head_never_breaks_a_time_from_its_zone(tui_app) -> None:
    """Issue 33: the head line wrapped between a time and its zone (`09:00` / `CET`) at some widths."""
    from datetime import UTC, datetime, timedelta

    app = tui_app()
    async with app.run_test(size=(80, 24)) as pilot:
        when = (datetime.now(UTC) + timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%SZ")
        post = await app.client.create_post({"targets": ["facebook"], "content": "x", "scheduledAt": when})
        app.push_screen(PostDetailScreen(post.id))
        detail = await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post and app.screen
        )
        head = detail.query_one("#detail-head")
        for width in range(60, 121, 2):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            lines = [line.text.strip() for line in head.render_lines(head.region.reset_offset)]
            assert not any(line.startswith(("CET", "CEST", "UTC", "(in")) for line in lines), (width, lines)


def test_the_summary_shows_each_warning_of_a_target_that_went_through() -> None:
    from backend.schemas.posts import PostOut
    from socialpub_tui.screens.post_detail import summary_lines
    from tests.client.test_mock import post_json, target

    lock = {"code": "youtube_private_lock", "message": "YouTube locked the video private"}
    done = target("youtube", "succeeded") | {"warnings": [lock]}
    post = PostOut.model_validate(
        post_json(status="completed", targets=[done, target("facebook", "succeeded")])
    )
    (line,) = summary_lines(post, utc_now())
    assert (
        "youtube · youtube page warning youtube_private_lock: YouTube locked the video private" in line.plain
    )


async def test_a_youtube_post_locked_private_shows_its_warning(tui_app, tmp_path) -> None:
    """Issue 29: the default (new, unaudited) Google project's upload succeeds locked private: the detail says so
    at a glance and in the chosen target's box."""
    app = tui_app(clock=utc_now)
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(mp4_bytes())
    async with app.run_test(size=SIZE) as pilot:
        video = await app.client.upload_media_file(clip)
        post = await app.client.create_post(
            {"targets": ["youtube"], "content": "Launch\nday", "mediaUrls": [video.url]}
        )
        final = await app.client.wait_post(post.id, timeout=60)
        assert final.status == "completed"
        screen = await open_detail(pilot, post.id)
        summary = str(screen.query_one("#detail-summary", Static).render())
        assert (
            "youtube · " in summary
            and "warning youtube_private_lock: YouTube locked the video private" in summary
        )
        chosen = str(screen.query_one("#detail-target", Static).render())
        assert "warning youtube_private_lock" in chosen
