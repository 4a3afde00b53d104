"""Issue 32's "done when", for the TUI: on the embedded sandbox, one video composed to every built-in network's
account (eight today, read from the registry) and sent now ends succeeded on each (the worker in process)."""

from __future__ import annotations

from textual.widgets import Select, TextArea

from backend.networks import registry
from socialpub_tui.app import utc_now
from tests.tui.helpers import mp4_bytes, until
from tests.tui.test_compose import accounts_by_platform, attach, open_compose, pick

NETWORKS = sorted(n.name for n in registry.networks() if n.builtin and n.emulator)


async def test_one_video_composed_to_every_network_succeeds_everywhere(tui_app, tmp_path) -> None:  # type: ignore[no-untyped-def]
    app = tui_app(clock=utc_now)
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(mp4_bytes())
    async with app.run_test(size=(120, 40)) as pilot:
        ids = await accounts_by_platform(app)
        assert sorted(ids) == NETWORKS and len(NETWORKS) >= 8
        screen = await open_compose(pilot)
        screen.query_one("#compose-text", TextArea).text = "Pour-over in 3 minutes #coffee"
        pick(screen, *ids.values())
        await attach(pilot, screen, clip)
        # the levels are the account's own (read from the network): wait for them, then choose
        await until(pilot, lambda: ids["tiktok"] in screen.account_choices, what="the account's choices")
        await pilot.pause()
        screen.query_one("#tiktok-privacyLevel", Select).value = "SELF_ONLY"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.sent is not None, what="the post")
        post_id = screen.sent.id  # type: ignore[union-attr]

        async def final() -> bool:
            post = await app.client.get_post(post_id)
            return post.status in ("completed", "partially_failed", "failed")

        for _ in range(600):
            if await final():
                break
            await pilot.pause(0.1)
        stored = await app.client.get_post(post_id)
    assert {t.platform: t.status for t in stored.targets} == dict.fromkeys(NETWORKS, "succeeded")
    assert stored.status == "completed"
