"""How the generations screen looks (canned backend: fixed ids, prompts and times): the list with every status,
the create form with its cost preview, a failed creation's detail. Review a changed picture by eye before
accepting it: `rsvg-convert -o x.png tests/tui/__snapshots__/…/….svg`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from socialpub_tui.screens.generations import (
    CreateGenerationScreen,
    GenerationDetailScreen,
    GenerationsScreen,
)
from tests.tui.canned import canned_app, ts
from tests.tui.helpers import until

CREDITS = {"balance": 148, "cost": {"IMAGE": 2, "VIDEO": 15}, "clip": {"5": 15, "10": 30, "15": 45}}


def generation(gid: str, kind: str, status: str, prompt: str, created: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": gid,
        "type": kind,
        "status": status,
        "prompt": prompt,
        "aspectRatio": "9:16",
        "durationSec": 10 if kind == "video" else None,
        "sourceUrls": [],
        "mediaUrl": None,
        "mimeType": None,
        "error": None,
        "creditsCost": 30 if kind == "video" else 2,
        "createdAt": created,
        "completedAt": None,
    }
    return base | extra


FAILED = generation(
    "gen_failed",
    "video",
    "failed",
    "A crowded stadium at night, fireworks over the pitch",
    ts(2027, 1, 15, 6, 40),
    completedAt=ts(2027, 1, 15, 6, 42),
    error="The provider's own policy refuses this prompt (content policy). Rephrase it and try "
    "again. Your 30 credits were refunded.",
)
ITEMS = [
    generation(
        "gen_processing",
        "video",
        "processing",
        "Slow pan over fresh roasted coffee beans, morning light",
        ts(2027, 1, 15, 7, 58),
    ),
    generation(
        "gen_pending",
        "image",
        "pending",
        "A flat white on a sunny terrace\nwarm tones",
        ts(2027, 1, 15, 7, 59),
    ),
    generation(
        "gen_done",
        "image",
        "completed",
        "Latte art close-up, a heart in the foam",
        ts(2027, 1, 15, 7, 20),
        aspectRatio="1:1",
        mediaUrl="http://canned.socialpub/media/gen_done.jpg",
        mimeType="image/jpeg",
        completedAt=ts(2027, 1, 15, 7, 21),
    ),
    FAILED,
    generation(
        "gen_old",
        "video",
        "completed",
        "Barista pouring a cortado, close shot",
        ts(2027, 1, 12, 16, 0),
        durationSec=5,
        creditsCost=15,
        mediaUrl="http://canned.socialpub/media/gen_old.mp4",
        mimeType="video/mp4",
        completedAt=ts(2027, 1, 12, 16, 3),
    ),
]


def quote(request: httpx.Request) -> httpx.Response:
    import json

    body = json.loads(request.content)
    cost = 2 if body["type"] == "image" else {5: 15, 10: 30, 15: 45}[body.get("durationSec") or 5]
    return httpx.Response(
        200,
        json={
            "dryRun": True,
            "type": body["type"],
            "durationSec": body.get("durationSec"),
            "creditsCost": cost,
            "balance": 148,
            "balanceAfter": 148 - cost,
            "enough": True,
        },
    )


def app() -> Any:
    return canned_app(
        {
            ("GET", "/v1/generations"): {"items": ITEMS, "nextCursor": None, "credits": CREDITS},
            ("GET", "/v1/generations/gen_failed"): FAILED,
            ("POST", "/v1/generations"): quote,
        }
    )


async def to_list(pilot: Any) -> GenerationsScreen:
    await pilot.press("f6")
    screen = await until(
        pilot,
        lambda: (
            isinstance(pilot.app.screen, GenerationsScreen) and pilot.app.screen.loads and pilot.app.screen
        ),
        what="the list",
    )
    await pilot.pause()
    return screen


async def stop_refreshing(screen: GenerationsScreen) -> None:
    """The canned list never changes: no timer keeps reading it while the picture is taken."""
    if screen._timer is not None:
        screen._timer.stop()


@pytest.mark.parametrize("size", [pytest.param((100, 30), id="100x30"), pytest.param((80, 24), id="80x24")])
def test_list(snap_compare, size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await stop_refreshing(await to_list(pilot))

    assert snap_compare(app(), terminal_size=size, run_before=run_before)


def test_create_form_with_its_cost_preview(snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await stop_refreshing(await to_list(pilot))
        await pilot.press("n")
        form = await until(
            pilot, lambda: isinstance(pilot.app.screen, CreateGenerationScreen) and pilot.app.screen
        )
        form.query_one("#gc-type").value = "video"
        form.query_one("#gc-duration").value = 10
        await pilot.press(*"Slow pan over fresh roasted coffee beans")
        await until(pilot, lambda: form.quote is not None and form.quote.duration_sec == 10, what="the quote")
        await pilot.pause()

    assert snap_compare(app(), terminal_size=(100, 30), run_before=run_before)


def test_failed_generation_detail(snap_compare) -> None:
    async def run_before(pilot: Any) -> None:
        await stop_refreshing(await to_list(pilot))
        pilot.app.push_screen(GenerationDetailScreen("gen_failed"))
        await until(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, GenerationDetailScreen)
                and pilot.app.screen.generation is not None
            ),
            what="the detail",
        )
        await pilot.pause()

    assert snap_compare(app(), terminal_size=(100, 30), run_before=run_before)
