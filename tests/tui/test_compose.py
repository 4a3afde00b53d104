"""Compose against the embedded backend: schedule in a zone, upload with progress, local and API validation
next to the target, idempotent send, edit, duplicate.

The backend's clock is real time, so these tests give the app the real clock too (`clock=utc_now`) and
schedule relative to it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from textual.widgets import Checkbox, Input, ProgressBar, RadioButton, Static, TextArea

from socialpub_tui.app import utc_now
from socialpub_tui.screens.compose import ComposeScreen
from socialpub_tui.screens.compose_targets import TargetRow
from socialpub_tui.screens.post_detail import PostDetailScreen
from tests.tui.helpers import png, until

SIZE = (100, 30)


async def accounts_by_platform(app: Any) -> dict[str, str]:
    listing = await app.client.list_accounts()
    return {a.platform: a.id for a in listing.items if a.is_default}


async def open_compose(pilot: Any) -> ComposeScreen:
    await pilot.press("n")
    screen = await until(
        pilot,
        lambda: isinstance(pilot.app.screen, ComposeScreen) and pilot.app.screen,
        what="the compose screen",
    )
    await until(pilot, lambda: screen.rows(), what="the target rows")
    return screen  # type: ignore[no-any-return]


def pick(screen: ComposeScreen, *account_ids: str) -> None:
    for account_id in account_ids:
        screen.query_one(f"#tgt-{account_id}", Checkbox).value = True


def row(screen: ComposeScreen, account_id: str) -> TargetRow:
    return screen.query_one(f"#row-{account_id}", TargetRow)


def problem_text(screen: ComposeScreen, account_id: str) -> str:
    return str(row(screen, account_id).query_one(".target-problem", Static).render())


async def schedule_at(pilot: Any, screen: ComposeScreen, date: str, time: str, zone: str) -> None:
    screen.query_one("#when-at", RadioButton).value = True
    screen.query_one("#compose-date", Input).value = date
    screen.query_one("#compose-time", Input).value = time
    screen.query_one("#compose-zone", Input).value = zone
    await pilot.pause()


async def attach(pilot: Any, screen: ComposeScreen, path: Any) -> None:
    before = len(screen.media)
    field = screen.query_one("#compose-media-path", Input)
    field.value = str(path)
    field.focus()
    await pilot.press("enter")
    await until(pilot, lambda: len(screen.media) > before, what="the upload")


async def test_compose_an_image_post_to_three_networks_for_tomorrow_9_in_paris(tui_app, tmp_path) -> None:
    app = tui_app(clock=utc_now)
    image = png(tmp_path / "photo.png")
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        await pilot.press(*"Launch day")  # typed: the text area has the focus
        assert screen.query_one("#compose-text", TextArea).text == "Launch day"
        pick(screen, ids["facebook"], ids["instagram"], ids["linkedin"])
        await attach(pilot, screen, image)
        tomorrow = (datetime.now(ZoneInfo("Europe/Paris")) + timedelta(days=1)).date()
        await schedule_at(pilot, screen, tomorrow.isoformat(), "09:00", "Europe/Paris")
        expected = datetime(
            tomorrow.year, tomorrow.month, tomorrow.day, 9, 0, tzinfo=ZoneInfo("Europe/Paris")
        ).astimezone(UTC)
        preview = str(screen.query_one("#compose-when-preview", Static).render())
        assert (
            expected.strftime("%Y-%m-%dT%H:%M:%SZ") in preview and "in " in preview
        )  # UTC instant, "in 17 h"
        # the counters run against each target's own limit
        assert "10 / 2,200" in str(row(screen, ids["instagram"]).query_one(".target-count", Static).render())
        assert "10 / 3,000" in str(row(screen, ids["linkedin"]).query_one(".target-count", Static).render())
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, ComposeScreen), what="the screen to close")
        post = screen.sent
        assert post is not None
        stored = await app.client.get_post(post.id)
    assert stored.status == "scheduled"
    assert stored.scheduled_at is not None
    assert datetime.fromisoformat(stored.scheduled_at.replace("Z", "+00:00")) == expected
    assert sorted(t.account_id for t in stored.targets) == sorted(
        [ids["facebook"], ids["instagram"], ids["linkedin"]]
    )
    assert len(stored.media_urls) == 1 and stored.content == "Launch day"
    assert stored.idempotency_key == screen.idempotency_key


async def test_a_double_submit_creates_one_post(tui_app) -> None:
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "only once"
        pick(screen, ids["facebook"])
        await pilot.pause()
        body, _ = screen.body()  # (read before sending: once sent, the screen closes and its rows go)
        assert body is not None and body["idempotencyKey"] == screen.idempotency_key
        screen.action_send()
        screen.action_send()  # the second press while the first is in flight
        await until(pilot, lambda: screen.sent is not None, what="the post")
        # the same body sent again (a retry after a lost answer) is answered with the existing post
        again = await app.client.create_post(body)
        page = await app.client.list_posts(idempotency_key=screen.idempotency_key)
    assert again.id == screen.sent.id
    assert [p.id for p in page.items] == [screen.sent.id]


async def test_local_checks_show_next_to_the_target_and_nothing_is_sent(tui_app) -> None:
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "x" * 2300
        pick(screen, ids["instagram"], ids["linkedin"], ids["facebook"])
        await pilot.pause()
        assert "needs an image or a video" in problem_text(screen, ids["instagram"])
        assert "at most 2,200 characters" in problem_text(screen, ids["instagram"])
        assert "✓" in problem_text(screen, ids["linkedin"])
        assert row(screen, ids["instagram"]).has_class("has-problem")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ComposeScreen) and screen.sent is None
        assert "would refuse" in str(screen.query_one("#compose-status", Static).render())
        page = await app.client.list_posts()
    assert page.items == []


async def test_the_apis_per_target_errors_show_next_to_the_target(tui_app, monkeypatch) -> None:
    import socialpub_tui.screens.compose_targets as compose_targets

    monkeypatch.setattr(compose_targets, "check_target", lambda *a, **k: [])  # let the server refuse
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "text only"
        pick(screen, ids["instagram"], ids["youtube"], ids["facebook"])
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.server_problems, what="the API's answer")
        assert "media" in problem_text(
            screen, ids["instagram"]
        )  # media_required_for_target, the server's words
        assert "video" in problem_text(screen, ids["youtube"])
        assert "✓" in problem_text(screen, ids["facebook"])
        assert "invalid_targets" in str(screen.query_one("#compose-status", Static).render())
        assert isinstance(app.screen, ComposeScreen) and screen.sent is None
        # changing the post clears the server's verdict (the next send is checked again)
        screen.query_one("#compose-text", TextArea).text = "text only!"
        await pilot.pause()
        assert "✓" in problem_text(screen, ids["instagram"])


async def test_a_time_that_does_not_exist_is_refused_with_the_reason(tui_app) -> None:
    app = tui_app(clock=lambda: datetime(2027, 3, 1, tzinfo=UTC))
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "gap"
        pick(screen, ids["facebook"])
        await schedule_at(pilot, screen, "2027-03-28", "02:30", "Europe/Paris")
        preview = str(screen.query_one("#compose-when-preview", Static).render())
        assert "does not exist in Europe/Paris (DST change)" in preview
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.sent is None and "does not exist" in str(
            screen.query_one("#compose-status", Static).render()
        )
        await schedule_at(pilot, screen, "2027-03-28", "03:30", "Europe/Paris")
        assert "2027-03-28T01:30:00Z" in str(screen.query_one("#compose-when-preview", Static).render())


async def test_upload_progress_is_shown_while_the_file_is_sent(tui_app, tmp_path) -> None:
    app = tui_app(clock=utc_now)
    big = png(tmp_path / "big.png", size=(700, 700), noise=True)  # about 1.5 MB: several chunks
    seen: list[tuple[float | None, bool]] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compose(pilot)
        bar = screen.query_one("#compose-upload", ProgressBar)
        original = bar.update

        def spy(**kwargs: Any) -> None:
            original(**kwargs)
            seen.append((bar.progress, bar.display))

        bar.update = spy  # type: ignore[method-assign]
        await attach(pilot, screen, big)
        assert not bar.display  # hidden again once uploaded
        label = screen.media[0].label
    size = big.stat().st_size
    progress = [p for p, shown in seen if shown and p]
    assert len(progress) >= 3 and progress == sorted(progress) and progress[-1] == size
    assert label.startswith("image · big.png")


async def test_edit_a_scheduled_post_from_its_detail(tui_app) -> None:
    app = tui_app(clock=utc_now)
    when = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    async with app.run_test(size=SIZE) as pilot:
        post = await app.client.create_post(
            {
                "targets": ["facebook", "linkedin"],
                "content": "before",
                "scheduledAt": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
        app.push_screen(PostDetailScreen(post.id))
        detail = await until(
            pilot,
            lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post and app.screen,
            what="the detail",
        )
        await pilot.press("e")
        screen = await until(
            pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen, what="compose"
        )
        await pilot.pause()
        assert screen.editing and screen.query_one("#compose-text", TextArea).text == "before"
        assert all(r.query_one(Checkbox).disabled and r.selected for r in screen.rows())  # targets are fixed
        assert screen.query_one("#when-now", RadioButton).disabled
        screen.query_one("#compose-text", TextArea).text = "after"
        later = when + timedelta(hours=1)
        local = later.astimezone(ZoneInfo("Europe/Paris"))
        await schedule_at(pilot, screen, local.strftime("%Y-%m-%d"), local.strftime("%H:%M"), "Europe/Paris")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: app.screen is detail, what="back on the detail")
        await until(pilot, lambda: detail.post.content == "after", what="the detail redrawn")
        stored = await app.client.get_post(post.id)
    assert stored.content == "after" and stored.status == "scheduled"
    assert stored.scheduled_at is not None and stored.scheduled_at.startswith(
        later.strftime("%Y-%m-%dT%H:%M")
    )
    assert [t.platform for t in stored.targets] == [t.platform for t in post.targets]


async def test_duplicate_prefills_a_new_post_and_sends_nothing_until_asked(tui_app) -> None:
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        post = await app.client.create_post(
            {"targets": ["facebook", "linkedin"], "content": "again", "options": {}}
        )
        await app.client.wait_post(post.id, timeout=30)
        app.push_screen(PostDetailScreen(post.id))
        await until(
            pilot, lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post, what="detail"
        )
        await pilot.press("d")
        screen = await until(
            pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen, what="compose"
        )
        await until(pilot, lambda: screen.selected_rows(), what="the preselected targets")
        assert screen.duplicate and screen.query_one("#compose-text", TextArea).text == "again"
        assert {r.choice.account_id for r in screen.selected_rows()} == {ids["facebook"], ids["linkedin"]}
        assert screen.query_one("#when-now", RadioButton).value
        assert len((await app.client.list_posts()).items) == 1  # nothing sent yet
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.sent is not None, what="the new post")
        new_id = screen.sent.id
        await until(
            pilot,
            lambda: isinstance(app.screen, PostDetailScreen) and app.screen.post_id == new_id,
            what="the new post's detail",
        )
        assert len((await app.client.list_posts()).items) == 2
    assert new_id != post.id


async def test_a_duplicate_of_a_scheduled_post_is_scheduled_at_its_time_never_now(tui_app) -> None:
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        await accounts_by_platform(app)
        when = (utc_now() + timedelta(days=3)).replace(hour=7, minute=30, second=0, microsecond=0)
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "later", "scheduledAt": when.strftime("%Y-%m-%dT%H:%M:%SZ")}
        )
        screen = ComposeScreen(post, duplicate=True)
        app.push_screen(screen)
        await until(pilot, lambda: app.screen is screen and screen.selected_rows(), what="the duplicate")
        assert (
            screen.query_one("#when-at", RadioButton).value
            and not screen.query_one("#when-now", RadioButton).value
        )
        local = app.zone.local(when)
        assert screen.query_one("#compose-date", Input).value == local.strftime("%Y-%m-%d")
        assert screen.query_one("#compose-time", Input).value == local.strftime("%H:%M")


async def test_back_with_changes_asks_before_discarding(tui_app) -> None:
    from socialpub_tui.screens.confirm import ConfirmScreen

    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compose(pilot)
        await pilot.press("escape")  # nothing typed: leaves at once
        await until(pilot, lambda: not isinstance(app.screen, ComposeScreen), what="compose closed")
        screen = await open_compose(pilot)
        await pilot.press(*"draft")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen, what="back to compose")
        assert screen.query_one("#compose-text", TextArea).text == "draft"
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("y")
        await until(
            pilot, lambda: not isinstance(app.screen, (ComposeScreen, ConfirmScreen)), what="discarded"
        )


async def test_tiktok_and_youtube_options_are_sent(tui_app, tmp_path) -> None:
    from textual.widgets import Select

    from tests.tui.helpers import mp4_bytes

    app = tui_app(clock=utc_now)
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(mp4_bytes())
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "Behind the scenes"
        assert not screen.query_one("#compose-tiktok").display  # shown only for a tiktok target
        pick(screen, ids["tiktok"], ids["youtube"])
        await attach(pilot, screen, clip)
        assert screen.query_one("#compose-tiktok").display and screen.query_one("#compose-youtube").display
        # each network's form is built from its options' JSON Schema (GET /v1/networks): `<network>-<option>`
        # TikTok's UX rules: the creator chooses who sees it (nothing pre-selected) and turns each interaction on
        assert screen.query_one("#tiktok-privacyLevel", Select).value is Select.NULL
        for name, label in (
            ("Comment", "Allow comments"),
            ("Duet", "Allow Duet"),
            ("Stitch", "Allow Stitch"),
        ):
            box = screen.query_one(f"#tiktok-disable{name}", Checkbox)
            assert box.value is False and str(box.label) == label
        screen.query_one("#tiktok-postMode", Select).value = "MEDIA_UPLOAD"
        screen.query_one("#tiktok-disableComment", Checkbox).value = True  # "Allow comments" ticked
        screen.query_one("#youtube-title", Input).value = "BTS"
        screen.query_one("#youtube-privacyStatus", Select).value = "unlisted"
        screen.query_one("#youtube-tags", Input).value = "making of, studio"
        screen.query_one("#youtube-containsSyntheticMedia", Checkbox).value = True
        await schedule_at(pilot, screen, "tomorrow", "10:00", "Europe/Paris")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.sent is not None, what="the post")
        stored = await app.client.get_post(screen.sent.id)
    assert stored.options["tiktok"]["postMode"] == "MEDIA_UPLOAD"
    assert stored.options["tiktok"]["disableComment"] is False  # comments allowed
    assert "disableDuet" not in stored.options["tiktok"]  # off (the server's default)
    assert stored.options["youtube"] == stored.options["youtube"] | {
        "title": "BTS",
        "privacyStatus": "unlisted",
        "tags": ["making of", "studio"],
        "containsSyntheticMedia": True,
    }


async def test_a_refused_upload_gives_the_field_back_and_says_so(tui_app, tmp_path) -> None:
    app = tui_app(clock=utc_now)
    notes = tmp_path / "notes.txt"
    notes.write_text("not an image")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compose(pilot)
        field = screen.query_one("#compose-media-path", Input)
        field.value = str(notes)
        field.focus()
        await pilot.press("enter")
        error = screen.query_one("#compose-media-error", Static)
        await until(pilot, lambda: error.display and "notes.txt" in str(error.render()), what="the refusal")
        await until(pilot, lambda: not screen.uploading and not field.disabled, what="the field given back")
        assert app.focused is field  # typing goes on in the field (it went nowhere)
        assert "Uploading" not in str(screen.query_one("#compose-status", Static).render())
        assert screen.media == []


async def test_the_schedule_preview_says_how_far_in_two_units(tui_app) -> None:
    from tests.tui.conftest import FIXED_NOW

    app = tui_app()  # the app's clock fixed at FIXED_NOW, 2027-01-15 08:00 UTC
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compose(pilot)
        await schedule_at(pilot, screen, "2027-01-16", "16:00", "Europe/Paris")  # 15:00 UTC: 31 h ahead
        preview = str(screen.query_one("#compose-when-preview", Static).render())
        assert "2027-01-16 16:00 Europe/Paris (2027-01-16T15:00:00Z) · in 1 day 7 h" in preview
        assert "(in 1 day 7 h)" in str(screen.query_one("#compose-status", Static).render())
        assert app.now() == FIXED_NOW


async def test_up_and_down_move_between_the_target_checkboxes(tui_app) -> None:
    """Issue 33: only tab moved between compose's targets."""
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compose(pilot)
        boxes = [r.query_one(Checkbox) for r in screen.rows()]
        boxes[0].focus()
        await pilot.pause()
        await pilot.press("down", "down")
        assert app.focused is boxes[2]
        await pilot.press("up")
        assert app.focused is boxes[1]
        before = boxes[1].value
        await pilot.press("space")
        assert boxes[1].value is (not before)  # space still ticks the one with the focus
        await pilot.press("up", "up")
        assert app.focused is screen.query_one(
            "#compose-text", TextArea
        )  # past the first: the text, as shift+tab
        boxes[-1].focus()
        await pilot.press("down")
        assert (
            app.focused is not None and app.focused.id == "compose-media-path"
        )  # past the last: the next field


async def test_a_targets_name_is_cut_only_when_there_is_no_room(tui_app) -> None:
    """Issue 33: `Sandbox Facebook P…` on a line with room."""
    app = tui_app(clock=utc_now)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_compose(pilot)
        await pilot.pause()
        labels = [str(r.query_one(Checkbox).label) for r in screen.rows()]
        assert "facebook · Sandbox Facebook Page" in labels
        for r in screen.rows():
            box = r.query_one(Checkbox)
            assert box.size.width >= len(str(box.label)) + 6, (str(box.label), box.size.width)


async def test_escape_leaves_a_compose_opened_from_a_generation_and_maximize_is_not_offered(tui_app) -> None:
    """Issue 33: once, escape and the palette's Back did nothing on a compose opened with `u` from a generation.
    The state: the text maximized (Textual's palette offered "Maximize"), where escape only restores it. The
    palette no longer offers Maximize, so escape always reaches Back."""
    from textual.command import CommandPalette

    from socialpub_tui.screens.attachments import Media
    from socialpub_tui.screens.confirm import ConfirmScreen

    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(
            ComposeScreen(media=[Media("http://x.invalid/media/a.jpg", "image", "image · gen_1")])
        )
        screen = await until(pilot, lambda: isinstance(app.screen, ComposeScreen) and app.screen)
        await pilot.pause()
        titles = [c.title for c in app.get_system_commands(screen)]
        assert "Maximize" not in titles and "Keys" not in titles and "Quit" not in titles, titles
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Back", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the discard question")
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the discard question")
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, (ComposeScreen, ConfirmScreen)), what="left")


async def test_the_edit_screen_names_media_as_compose_showed_them(tui_app, tmp_path) -> None:
    """Issue 33: the edit screen listed a post's media by the media host's key where compose showed the file."""
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compose(pilot)
        path = png(tmp_path / "launch-photo.png")
        await attach(pilot, screen, path)
        assert "launch-photo.png" in screen.media[0].label
        url = screen.media[0].url
        when = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
        post = await app.client.create_post(
            {"targets": ["facebook"], "content": "x", "mediaUrls": [url], "scheduledAt": when}
        )
        editing = ComposeScreen(post)
        app.push_screen(editing)
        await until(pilot, lambda: app.screen is editing and editing.media)
        await pilot.pause()
        assert "launch-photo.png" in editing.media[0].label, editing.media[0].label
        assert url.rsplit("/", 1)[-1] not in editing.media[0].label
