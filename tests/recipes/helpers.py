"""Helpers of the recipe tests that run against a backend: recipe text, images, the set's posts read through the
client. (The `backend` fixture is in conftest.py.)"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from recipes.model import LABEL_SET
from tests.cli.conftest import invoke

__all__ = ["all_posts", "entry", "invoke", "jpeg", "recipe", "set_posts", "write"]


def jpeg(n: int = 0, size: tuple[int, int] = (320, 240)) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", size, ((n * 37) % 256, (n * 91) % 256, (n * 53) % 256))
    ImageDraw.Draw(im).line([(0, 0), size], fill=(255, 255, (n * 17) % 256), width=5)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=85)
    return buf.getvalue()


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def entry(
    id: str,
    at: str,
    content: str | None = None,
    media: str | None = None,
    targets: str = "[facebook, linkedin]",
) -> str:
    lines = [
        f"  - id: {id}",
        f'    content: "{content or "Post " + id}"',
        f'    at: "{at}"',
        f"    targets: {targets}",
    ]
    if media:
        lines.append(f"    media: {media}")
    return "\n".join(lines) + "\n"


def recipe(*entries: str, zone: str = "Europe/Paris") -> str:
    return f"timezone: {zone}\nposts:\n" + "".join(entries)


def set_posts(set_name: str, status: str | None = None) -> list[Any]:
    """Every post with the set's label, read through the client (every status unless `status`)."""
    from socialpub_tui.client import connect

    with connect(worker=False) as client:
        return list(client.iter_posts(label=[f"{LABEL_SET}={set_name}"], status=[status] if status else None))


def all_posts() -> list[Any]:
    from socialpub_tui.client import connect

    with connect(worker=False) as client:
        return list(client.iter_posts())
