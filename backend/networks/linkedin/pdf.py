"""LinkedIn carousel = a PDF document: one SQUARE page per image, the image letterboxed on white."""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image, ImageOps

PAGE_PX = 1080
MAX_PAGES = 300


def build_carousel_pdf(images: Sequence[bytes], side: int = PAGE_PX) -> bytes:
    """PDF bytes with len(images) square pages of `side` x `side` points (72 dpi)."""
    if not images:
        raise ValueError("a carousel PDF needs at least one image")
    if len(images) > MAX_PAGES:
        raise ValueError(f"LinkedIn documents hold at most {MAX_PAGES} pages")
    pages: list[Image.Image] = []
    for raw in images:
        with Image.open(io.BytesIO(raw)) as opened:
            im: Image.Image = ImageOps.exif_transpose(opened)
            if im.mode in ("RGBA", "LA", "P"):
                im = im.convert("RGBA")
                flat = Image.new("RGB", im.size, "white")
                flat.paste(im, mask=im.getchannel("A"))
                im = flat
            else:
                im = im.convert("RGB")
            im.thumbnail((side, side), Image.Resampling.LANCZOS)
            page = Image.new("RGB", (side, side), "white")
            page.paste(im, ((side - im.width) // 2, (side - im.height) // 2))
            pages.append(page)
    out = io.BytesIO()
    pages[0].save(out, "PDF", save_all=True, append_images=pages[1:], resolution=72.0)
    return out.getvalue()
