"""Legible text: WCAG AA contrast between a text's colour and what is actually behind it, measured on the pixels.

The text's default colour (the palette's) is kept when every pixel behind the text box contrasts with it at least
`required` (4.5:1, WCAG AA for normal text: the local renderer holds all of its text to it, though its sizes are
large-text sizes, for which 3:1 would do); else near-white or near-black, whichever passes; else, over a busy
background (a photo, a shape under part of the text), a panel behind the text, the text kept light or dark as the
design has it: a rounded rectangle of the design's background colour (or near-black) under light text, of its
background (or near-white) under dark text, as transparent as it can be while every pixel blended with it still
passes. Luminance and contrast are WCAG 2's (relative luminance of sRGB, (L1 + 0.05) / (L2 + 0.05))."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.generation.local.design import RGB, luminance

AA_NORMAL = 4.5  # WCAG 2 AA, normal text
AA_LARGE = 3.0  # WCAG 2 AA, large text (18 pt, or 14 pt bold)
LIGHT: RGB = (250, 250, 246)
DARK: RGB = (20, 20, 24)
MARGIN = (
    0.15  # decided with this much to spare: the panel's opacity is drawn in 1/255 steps, edges anti-aliased
)
ALPHAS = tuple(round(0.1 + 0.05 * i, 2) for i in range(19))  # 0.10 … 1.00


def luminances(region: np.ndarray) -> np.ndarray:
    """WCAG relative luminance of each pixel of an (h, w, 3) sRGB array."""
    s = region.astype(np.float64) / 255.0
    lin = np.where(s <= 0.03928, s / 12.92, ((s + 0.055) / 1.055) ** 2.4)
    return lin[..., 0] * 0.2126 + lin[..., 1] * 0.7152 + lin[..., 2] * 0.0722


def lowest_contrast(colour: RGB, region: np.ndarray) -> float:
    """The lowest contrast ratio between `colour` and the pixels of `region` ((h, w, 3) sRGB)."""
    if region.size == 0:
        return 21.0
    lum = luminances(region)
    lc = luminance(colour)
    hi = np.maximum(lum, lc)
    lo = np.minimum(lum, lc)
    return float(((hi + 0.05) / (lo + 0.05)).min())


@dataclass(frozen=True)
class Choice:
    """The text's colour, and the panel behind it (its colour and opacity) when one is needed."""

    colour: RGB
    panel: RGB | None = None
    opacity: float = 0.0


def choose(region: np.ndarray, preferred: RGB, background: RGB, required: float = AA_NORMAL) -> Choice:
    """The colour for a text over `region` (the pixels behind its box), and a panel if no colour alone passes.
    `preferred` first (the palette's), then near-white, near-black; panels: the design's `background` when it
    contrasts enough with the text, else near-black under light text and near-white under dark text."""
    need = required + MARGIN
    for colour in dict.fromkeys((preferred, LIGHT, DARK)):
        if lowest_contrast(colour, region) >= need:
            return Choice(colour)
    # a panel, keeping the design's light or dark text (light text on a dark panel reads as the same design)
    light = luminance(preferred) > 0.5
    colour, fallback = (LIGHT, DARK) if light else (DARK, LIGHT)
    panel = background if _contrast(colour, background) >= need + 1 else fallback
    base = region.astype(np.float64)
    for alpha in ALPHAS:
        blended = base * (1 - alpha) + np.array(panel, np.float64) * alpha
        if lowest_contrast(colour, np.clip(blended + 0.5, 0, 255).astype(np.uint8)) >= need:
            return Choice(colour, panel, alpha)
    return Choice(colour, panel, 1.0)  # opaque: the panel's colour contrasts with the text by need + 1


def _contrast(a: RGB, b: RGB) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
