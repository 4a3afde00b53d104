"""Helpers of the TUI's pilot tests: wait for a worker's outcome or a key's effect, make media files."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

WAIT_S = 20.0


async def until(pilot: Any, condition: Callable[[], Any], limit_s: float = WAIT_S, what: str = "") -> Any:
    """Pause the pilot until `condition()` is truthy (returned), or fail after `limit_s` seconds."""
    import time

    deadline = time.monotonic() + limit_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        await pilot.pause(0.05)


async def press_until(pilot: Any, key: str, condition: Callable[[], Any], what: str = "") -> Any:
    """Press one key that moves the focus or changes the screen, then wait until `condition()` holds, so that the
    keys pressed next go where the test means them to go.

    `pilot.press(a, b, …)` sends b once the process merely looks idle after a: on a loaded machine (the suite runs
    in parallel) b can reach the widget that had the focus before a moved it (a focus change is applied later, by
    a callback of its own)."""
    await pilot.press(key)
    return await until(pilot, condition, what=what or f"what {key!r} does")


def png(
    path: Path,
    size: tuple[int, int] = (64, 48),
    colour: tuple[int, int, int] = (200, 30, 30),
    noise: bool = False,
) -> Path:
    """An image file (`noise`: random pixels, so it does not compress: a large file)."""
    from PIL import Image

    if noise:
        import os

        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        image = Image.new("RGB", size, colour)
    image.save(path, format="PNG")
    return path


def mp4_bytes(frames: int = 72, rate: int = 24, size: tuple[int, int] = (360, 640)) -> bytes:
    """A short MP4 (PyAV): `frames / rate` seconds of a colour ramp. By default one every network's video rules
    take (3 s, 24 frames a second, 360 × 640: backend/networks/rules VideoLimits)."""
    import av
    from PIL import Image

    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264" if "libx264" in av.codecs_available else "mpeg4", rate=rate)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        for i in range(frames):
            frame = av.VideoFrame.from_image(Image.new("RGB", size, (min(255, 12 * i), 120, 200)))
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return buf.getvalue()


def record_notifications(app: Any) -> list[dict[str, Any]]:
    """Keep every notification the app shows from now on (message, title, severity), through its public
    `notify`: the list fills as the app runs."""
    seen: list[dict[str, Any]] = []
    show = app.notify

    def notify(message: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(
            {
                "message": str(message),
                "title": kwargs.get("title", ""),
                "severity": kwargs.get("severity", "information"),
            }
        )
        return show(message, *args, **kwargs)

    app.notify = notify
    return seen
