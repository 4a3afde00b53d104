"""Images for Bluesky: each within the image blob limit, recompressed when over it (JPEG, lower quality, then
smaller), with its pixel size for `aspectRatio` (docs.bsky.app posts guide: leave it out rather than guess).
Pure code (Pillow)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

# app.bsky.embed.images: maxSize 2,000,000 since 2026-04-08, 1,000,000 before and on the docs page: the strictest
IMAGE_MAX_BYTES = 1_000_000
THUMB_MAX_BYTES = 1_000_000  # app.bsky.embed.external `thumb`: maxSize 1,000,000
_QUALITIES = (90, 80, 70, 60, 50, 40)


@dataclass(frozen=True)
class Fitted:
    data: bytes
    mime: str
    width: int | None
    height: int | None


def _sniff(data: bytes) -> str | None:
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def fit_image(data: bytes, max_bytes: int, mime: str | None = None) -> Fitted:
    """The image as sent: unchanged when within `max_bytes`, else re-encoded as JPEG until it fits. ValueError
    when it is not an image Pillow reads, or cannot be made to fit."""
    try:
        with Image.open(io.BytesIO(data)) as probe:
            width, height = probe.size
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"not a readable image ({exc})") from None
    if len(data) <= max_bytes:
        return Fitted(data, _sniff(data) or mime or "image/jpeg", width, height)
    with Image.open(io.BytesIO(data)) as img:
        rgb = img.convert("RGB")
    scale = 1.0
    for _ in range(8):
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        frame = rgb if scale == 1.0 else rgb.resize(size, Image.Resampling.LANCZOS)
        for q in _QUALITIES:
            buf = io.BytesIO()
            frame.save(buf, "JPEG", quality=q, optimize=True)
            if buf.tell() <= max_bytes:
                return Fitted(buf.getvalue(), "image/jpeg", size[0], size[1])
        scale *= 0.75
    raise ValueError(f"the image cannot be made smaller than {max_bytes:,} bytes")
