"""Compose and what the targeted account's network lets its creator choose now (GET /v1/accounts/{id}/choices,
issue 29): the options form lists the account's own values (nothing pre-selected), shows the boxes the creator
turned off disabled and unticked, names the creator and shows the network's consent sentence; when the call
fails, every value of the schema with a note saying so."""

from __future__ import annotations

from typing import Any

import httpx
from textual.widgets import Checkbox, OptionList, Select, Static, TextArea

from backend.networks.tiktok.adapter import CONSENT, TikTokAdapter
from backend.networks.tiktok.options import CONSENT_BRANDED, DISCLOSE_REQUIRES_ONE
from socialpub_tui.app import utc_now
from socialpub_tui.screens.compose import ComposeScreen
from tests.tui.helpers import mp4_bytes, until
from tests.tui.test_compose import (
    SIZE,
    accounts_by_platform,
    attach,
    open_compose,
    pick,
    problem_text,
    schedule_at,
)

FOUR = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]


def listed(screen: ComposeScreen, wid: str) -> list[Any]:
    """The values a dropdown offers (its list's options, the blank prompt left out)."""
    select = screen.query_one(wid, Select)
    options = select.query_one(OptionList)
    prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    return [p for p in prompts if p != select.prompt]


def note(screen: ComposeScreen) -> str:
    return str(screen.query_one("#tiktok-choices", Static).render())


async def test_the_privacy_list_is_the_accounts_own_and_nothing_is_chosen(
    audited_tiktok_env, tui_app
) -> None:  # type: ignore[no-untyped-def]
    """`init --sandbox`'s TikTok account is private: its three levels, and Duet and Stitch off (creator_info says so
    of a private account) — greyed and unticked."""
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        pick(screen, ids["tiktok"])
        await until(pilot, lambda: ids["tiktok"] in screen.account_choices, what="the account's choices")
        await pilot.pause()
        assert listed(screen, "#tiktok-privacyLevel") == [
            "FOLLOWER_OF_CREATOR",
            "MUTUAL_FOLLOW_FRIENDS",
            "SELF_ONLY",
        ]  # this private account's three, not PUBLIC_TO_EVERYONE
        assert screen.query_one("#tiktok-privacyLevel", Select).value is Select.NULL
        comment = screen.query_one("#tiktok-disableComment", Checkbox)
        assert comment.value is False and not comment.disabled
        for name in ("Duet", "Stitch"):  # turned off by the creator's (private) account: greyed, unticked
            box = screen.query_one(f"#tiktok-disable{name}", Checkbox)
            assert box.value is False and box.disabled
        assert "Posting as" in note(screen) and CONSENT in note(screen)


async def test_when_the_choices_cannot_be_read_every_level_is_shown_with_a_note(tui_app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def down(self, token):  # type: ignore[no-untyped-def]
        raise httpx.ConnectError("TikTok is down")

    monkeypatch.setattr(TikTokAdapter, "creator_info", down)
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        pick(screen, ids["tiktok"])
        await until(pilot, lambda: ids["tiktok"] in screen.account_choices, what="the failed read")
        await pilot.pause()
        assert listed(screen, "#tiktok-privacyLevel") == FOUR
        assert screen.query_one("#tiktok-privacyLevel", Select).value is Select.NULL
        assert "Could not read what this account lets you choose" in note(screen)


async def test_disclose_video_content(audited_tiktok_env, tui_app, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """TikTok's commercial content disclosure: a 'Disclose video content' toggle, off; on, 'Your brand' and
    'Branded content' boxes, one required; the label the post gets; branded content's consent sentence; branded
    content never SELF_ONLY — then sent as brandOrganicToggle / brandContentToggle."""
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(mp4_bytes())
    app = tui_app(clock=utc_now)
    async with app.run_test(size=SIZE) as pilot:
        ids = await accounts_by_platform(app)
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "Our new roast"
        pick(screen, ids["tiktok"])
        await attach(pilot, screen, clip)
        await until(pilot, lambda: ids["tiktok"] in screen.account_choices, what="the account's choices")
        toggle = screen.query_one("#tiktok-group-disclose", Checkbox)
        assert str(toggle.label) == "Disclose video content" and toggle.value is False
        assert not screen.query_one("#tiktok-group-disclose-members").display
        toggle.value = True
        await pilot.pause()
        assert screen.query_one("#tiktok-group-disclose-members").display
        assert str(screen.query_one("#tiktok-brandOrganicToggle", Checkbox).label) == "Your brand"
        assert str(screen.query_one("#tiktok-brandContentToggle", Checkbox).label) == "Branded content"
        assert DISCLOSE_REQUIRES_ONE in problem_text(screen, ids["tiktok"])
        screen.query_one("#tiktok-brandOrganicToggle", Checkbox).value = True
        await pilot.pause()
        group_note = str(screen.query_one("#tiktok-group-disclose-note", Static).render())
        assert "'Promotional content'" in group_note and CONSENT in note(screen)
        screen.query_one("#tiktok-brandContentToggle", Checkbox).value = True
        screen.query_one("#tiktok-privacyLevel", Select).value = "SELF_ONLY"
        await pilot.pause()
        group_note = str(screen.query_one("#tiktok-group-disclose-note", Static).render())
        assert "'Paid partnership'" in group_note and CONSENT_BRANDED in note(screen)
        assert "Branded content cannot go with privacyLevel SELF_ONLY" in problem_text(screen, ids["tiktok"])
        screen.query_one("#tiktok-privacyLevel", Select).value = "MUTUAL_FOLLOW_FRIENDS"
        await schedule_at(pilot, screen, "tomorrow", "10:00", "Europe/Paris")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.sent is not None, what="the post")
        stored = await app.client.get_post(screen.sent.id)
    tiktok = stored.options["tiktok"]
    assert tiktok["brandOrganicToggle"] is True and tiktok["brandContentToggle"] is True
    assert tiktok["privacyLevel"] == "MUTUAL_FOLLOW_FRIENDS"
