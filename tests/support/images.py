"""The straightforward Pillow pipeline: the reference the media benchmark and the image tests compare
backend.media.images.process_image with (not product code)."""

from __future__ import annotations

import io

from PIL import Image, ImageOps

from backend.media.images import JPEG_QUALITY, MAX_SIDE


def naive_pipeline(data: bytes) -> bytes:
    """Open, apply the EXIF orientation, convert to RGB, fit in MAX_SIDE (LANCZOS), save as JPEG."""
    im = Image.open(io.BytesIO(data))
    im.load()
    im = ImageOps.exif_transpose(im)
    im = im.convert("RGB")
    im.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    im.save(out, "JPEG", quality=JPEG_QUALITY)
    return out.getvalue()
