"""Typefaces for the local renderer: fonts already on the machine, found by file name; nothing is downloaded.

Looked for, in order: the operator's `SOCIALPUB_GENERATION_LOCAL_FONT_DIR`, then the usual system font folders
(DejaVu, Liberation, Noto: what Debian, Ubuntu, Fedora and macOS ship). A typeface with none of its files found
falls back to the font bundled with Pillow (Aileron), so rendering never fails for want of fonts. The same
machine (the same fonts) renders the same pixels.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

SYSTEM_DIRS = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "/Library/Fonts",
    "/System/Library/Fonts",
    str(Path.home() / ".fonts"),
    str(Path.home() / ".local/share/fonts"),
)

CANDIDATES: dict[tuple[str, bool], tuple[str, ...]] = {
    ("sans", False): ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "NotoSans-Regular.ttf", "Arial.ttf"),
    ("sans", True): ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "NotoSans-Bold.ttf", "Arial Bold.ttf"),
    ("serif", False): (
        "DejaVuSerif.ttf",
        "LiberationSerif-Regular.ttf",
        "NotoSerif-Regular.ttf",
        "Georgia.ttf",
    ),
    ("serif", True): (
        "DejaVuSerif-Bold.ttf",
        "LiberationSerif-Bold.ttf",
        "NotoSerif-Bold.ttf",
        "Georgia Bold.ttf",
    ),
    ("mono", False): ("DejaVuSansMono.ttf", "LiberationMono-Regular.ttf", "NotoSansMono-Regular.ttf"),
    ("mono", True): ("DejaVuSansMono-Bold.ttf", "LiberationMono-Bold.ttf", "NotoSansMono-Bold.ttf"),
}


@lru_cache(maxsize=8)
def _index(extra_dir: str | None) -> dict[str, str]:
    """File name -> path of every .ttf/.otf under the font folders (the first found wins)."""
    found: dict[str, str] = {}
    for root in ([extra_dir] if extra_dir else []) + list(SYSTEM_DIRS):
        if not os.path.isdir(root):
            continue
        for dirpath, _dirs, files in sorted(os.walk(root)):
            for name in sorted(files):
                if name.lower().endswith((".ttf", ".otf")):
                    found.setdefault(name, os.path.join(dirpath, name))
    return found


def font_path(typeface: str, bold: bool, extra_dir: str | None = None) -> str | None:
    index = _index(extra_dir)
    for name in CANDIDATES.get((typeface, bold), ()) + CANDIDATES[("sans", bold)]:
        if name in index:
            return index[name]
    return None


@lru_cache(maxsize=256)
def font(typeface: str, bold: bool, size: int, extra_dir: str | None = None) -> ImageFont.FreeTypeFont:
    path = font_path(typeface, bold, extra_dir)
    if path is None:
        return ImageFont.load_default(size=size)  # type: ignore[return-value]  # Pillow types load_default() as ImageFont | FreeTypeFont; with size= it returns a FreeTypeFont
    return ImageFont.truetype(path, size=size)
