"""The pictures a design is made of, drawn once with Pillow: background, floating shapes, text blocks, brand.

Every layer is drawn once per generation; the still image stacks them, the video moves them (video.py). Shapes
are drawn on a 2x mask of their own bounding box and reduced (anti-aliased edges at the cost of their own area,
not the frame's). Layout keeps text inside the networks' safe zones (clear of the top 12 % and the bottom 20 % of a
vertical frame, where TikTok and Reels lay their own buttons and captions).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PIL import Image, ImageDraw

from backend.generation.local.design import RGB, Design, shade
from backend.generation.local.fonts import font


class Draw(Protocol):
    """Draws in the base picture's coordinates (a Protocol, not a Callable: the shapes are lambdas that bind their
    loop's values as default arguments, which mypy infers against a Protocol's positional-only call only)."""

    def __call__(self, d: _MaskDraw, scale: float, /) -> None: ...


class SpriteDraw(Protocol):
    """Draws a sprite in its own coordinates (a Protocol for the same reason as Draw)."""

    def __call__(self, d: _MaskDraw, /) -> None: ...


def gradient(size: tuple[int, int], a: RGB, b: RGB, angle: float) -> Image.Image:
    """A linear gradient from `a` to `b` along `angle` (radians), as RGB."""
    w, h = size
    xs = np.linspace(-0.5, 0.5, w, dtype=np.float32)[None, :]
    ys = np.linspace(-0.5, 0.5, h, dtype=np.float32)[:, None]
    t = xs * math.cos(angle) * (w / max(w, h)) + ys * math.sin(angle) * (h / max(w, h))
    t = (t - t.min()) / max(1e-6, float(t.max() - t.min()))
    ca, cb = np.array(a, np.float32), np.array(b, np.float32)
    out = ca[None, None, :] + (cb - ca)[None, None, :] * t[:, :, None]
    return Image.fromarray(np.clip(out + 0.5, 0, 255).astype(np.uint8), "RGB")


def stamp(
    base: Image.Image, bbox: tuple[float, float, float, float], color: RGB, opacity: float, draw: Draw
) -> None:
    """Draw a shape of `color` at `opacity` onto the RGB `base` inside `bbox` (base coordinates), anti-aliased:
    `draw` gets a _MaskDraw over a 2x mask of the bbox alone."""
    x0, y0 = math.floor(bbox[0]), math.floor(bbox[1])
    w, h = max(1, math.ceil(bbox[2]) - x0), max(1, math.ceil(bbox[3]) - y0)
    mask = Image.new("L", (w * 2, h * 2), 0)
    draw(_MaskDraw(ImageDraw.Draw(mask), x0, y0), 2.0)
    mask = mask.reduce(2)
    if opacity < 1:
        mask = mask.point(lambda v: round(v * opacity))
    base.paste(Image.new("RGB", (w, h), color), (x0, y0), mask)


class _MaskDraw:
    """ImageDraw's shape calls, in the base picture's coordinates, onto a 2x mask whose origin is (ox, oy)."""

    def __init__(self, d: ImageDraw.ImageDraw, ox: int, oy: int) -> None:
        self.d, self.ox, self.oy = d, ox, oy

    def _p(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.ox) * 2, (y - self.oy) * 2

    def ellipse(self, box: tuple[float, float, float, float], width: float = 0) -> None:
        a, b = self._p(box[0], box[1]), self._p(box[2], box[3])
        if width:
            self.d.ellipse((*a, *b), outline=255, width=max(1, round(width * 2)))
        else:
            self.d.ellipse((*a, *b), fill=255)

    def polygon(self, points: list[tuple[float, float]]) -> None:
        self.d.polygon([self._p(x, y) for x, y in points], fill=255)

    def rect(self, box: tuple[float, float, float, float], radius: float = 0, width: float = 0) -> None:
        a, b = self._p(box[0], box[1]), self._p(box[2], box[3])
        if width:
            self.d.rounded_rectangle((*a, *b), radius=radius * 2, outline=255, width=max(1, round(width * 2)))
        else:
            self.d.rounded_rectangle((*a, *b), radius=radius * 2, fill=255)

    def line(self, points: list[tuple[float, float]], width: float) -> None:
        self.d.line(
            [self._p(x, y) for x, y in points], fill=255, width=max(1, round(width * 2)), joint="curve"
        )


@dataclass
class Sprite:
    """An RGBA picture placed at (x, y) of the frame (its top-left), moving by `drift` pixels over the piece
    (the video's parallax) and bobbing by `bob` pixels with period `period_s`."""

    image: Image.Image
    x: float
    y: float
    drift: tuple[float, float] = (0.0, 0.0)
    bob: float = 0.0
    period_s: float = 6.0
    phase: float = 0.0


def _shape_sprite(w: float, h: float, color: RGB, opacity: float, draw: SpriteDraw) -> Image.Image:
    w_i, h_i = max(2, math.ceil(w)), max(2, math.ceil(h))
    mask = Image.new("L", (w_i * 2, h_i * 2), 0)
    draw(_MaskDraw(ImageDraw.Draw(mask), 0, 0))
    mask = mask.reduce(2)
    if opacity < 1:
        mask = mask.point(lambda v: round(v * opacity))
    img = Image.new("RGBA", (w_i, h_i), color + (0,))
    img.putalpha(mask)
    return img


def _blob_points(
    cx: float, cy: float, r: float, rnd: Callable[[str], float], salt: str, n: int = 48
) -> list[tuple[float, float]]:
    k = [
        (1 + int(rnd(f"{salt}k{i}") * 3), rnd(f"{salt}p{i}") * math.tau, 0.05 + rnd(f"{salt}a{i}") * 0.12)
        for i in range(3)
    ]
    pts = []
    for i in range(n):
        a = math.tau * i / n
        rr = r * (1 + sum(amp * math.sin(f * a + ph) for f, ph, amp in k))
        pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    return pts


def background(design: Design, size: tuple[int, int]) -> Image.Image:
    """The gradient and the composition's fixed decorations, RGB, at `size` (the video's is oversized to pan)."""
    p = design.palette
    w, h = size
    s = min(w, h)
    img = gradient(size, p.background, p.background2, design.rand("angle") * math.pi)
    r = design.rand
    comp = design.composition
    if comp == "waves":
        colors = [p.accent, p.accent2, shade(p.accent, 0.15), shade(p.background, -0.08)]
        for i in range(4):
            base_y = h * (0.62 + 0.09 * i)
            amp, freq, ph = s * (0.03 + 0.02 * r(f"wa{i}")), 1.2 + r(f"wf{i}") * 1.6, r(f"wp{i}") * math.tau
            pts = [
                (x, base_y + amp * math.sin(freq * math.tau * x / w + ph)) for x in np.linspace(-4, w + 4, 96)
            ]
            pts += [(w + 4, h + 4), (-4, h + 4)]
            stamp(
                img,
                (-4, base_y - amp - 2, w + 4, h + 4),
                colors[i],
                0.55 + 0.12 * i,
                lambda d, _s, pts=pts: d.polygon(pts),
            )
    elif comp == "sun":
        cx, cy, rad = w * (0.35 + 0.3 * r("sx")), h * 0.36, s * 0.34
        stamp(
            img,
            (cx - rad, cy - rad, cx + rad, cy + rad),
            p.accent,
            0.95,
            lambda d, _s: d.ellipse((cx - rad, cy - rad, cx + rad, cy + rad)),
        )
        for i in range(6):  # horizon stripes cutting the disc's lower half
            y0 = cy + rad * (0.15 + 0.15 * i)
            hh = rad * (0.03 + 0.012 * i)
            stamp(
                img,
                (0, y0, w, y0 + hh),
                p.background2,
                1.0,
                lambda d, _s, y0=y0, hh=hh: d.rect((0, y0, w, y0 + hh)),
            )
        stamp(
            img,
            (0, h * 0.7, w, h),
            p.accent2,
            0.5,
            lambda d, _s: d.polygon([(0, h * 0.78), (w * 0.5, h * 0.7), (w, h * 0.8), (w, h), (0, h)]),
        )
    elif comp == "blobs":
        for i, (fx, fy, fr, c) in enumerate(
            (
                (0.05, 0.08, 0.42, p.accent),
                (0.95, 0.9, 0.5, p.accent2),
                (0.9, 0.15, 0.22, shade(p.accent, 0.12)),
            )
        ):
            cx, cy, rad = w * fx, h * fy, s * fr
            pts = _blob_points(cx, cy, rad, r, f"blob{i}")
            stamp(
                img,
                (cx - rad * 1.4, cy - rad * 1.4, cx + rad * 1.4, cy + rad * 1.4),
                c,
                0.8,
                lambda d, _s, pts=pts: d.polygon(pts),
            )
    elif comp == "stars":
        for i in range(int(140 * w * h / 2e6)):
            x, y, rad = r(f"sx{i}") * w, r(f"sy{i}") * h * 0.85, 1 + r(f"sr{i}") * 2.6
            stamp(
                img,
                (x - rad, y - rad, x + rad, y + rad),
                p.accent,
                0.35 + 0.6 * r(f"sa{i}"),
                lambda d, _s, x=x, y=y, rad=rad: d.ellipse((x - rad, y - rad, x + rad, y + rad)),
            )
        cx, cy, rad = w * 0.74, h * 0.18, s * 0.11
        stamp(
            img,
            (cx - rad, cy - rad, cx + rad, cy + rad),
            p.accent2,
            0.95,
            lambda d, _s: d.ellipse((cx - rad, cy - rad, cx + rad, cy + rad)),
        )
        ox = rad * 0.45
        stamp(
            img,
            (cx - rad + ox, cy - rad - ox * 0.4, cx + rad + ox, cy + rad - ox * 0.4),
            p.background,
            1.0,
            lambda d, _s: d.ellipse((cx - rad + ox, cy - rad - ox * 0.4, cx + rad + ox, cy + rad - ox * 0.4)),
        )
    elif comp == "grid":
        step = s / 14
        dot = max(1.5, s / 500)
        for gx in np.arange(step / 2, w, step):
            for gy in np.arange(step / 2, h, step):
                stamp(
                    img,
                    (gx - dot, gy - dot, gx + dot, gy + dot),
                    p.muted,
                    0.35,
                    lambda d, _s, gx=gx, gy=gy: d.ellipse((gx - dot, gy - dot, gx + dot, gy + dot)),
                )
        y = h * (0.18 + 0.05 * r("gy"))
        stamp(img, (0, y, w, y + s / 200 + 1), p.accent, 0.8, lambda d, _s: d.rect((0, y, w, y + s / 200)))
        x = w * (0.8 + 0.1 * r("gx"))
        stamp(img, (x, 0, x + s / 200 + 1, h), p.accent2, 0.6, lambda d, _s: d.rect((x, 0, x + s / 200, h)))
    elif comp == "frame":
        for inset, width in ((0.045, 0.006), (0.062, 0.002)):
            m = s * inset
            stamp(
                img,
                (m - 2, m - 2, w - m + 2, h - m + 2),
                p.accent,
                1.0,
                lambda d, _s, m=m, width=width: d.rect((m, m, w - m, h - m), width=s * width),
            )
        for cx, cy in (
            (s * 0.062, s * 0.062),
            (w - s * 0.062, s * 0.062),
            (s * 0.062, h - s * 0.062),
            (w - s * 0.062, h - s * 0.062),
        ):
            q = s * 0.018
            stamp(
                img,
                (cx - q, cy - q, cx + q, cy + q),
                p.accent,
                1.0,
                lambda d, _s, cx=cx, cy=cy, q=q: d.polygon(
                    [(cx, cy - q), (cx + q, cy), (cx, cy + q), (cx - q, cy)]
                ),
            )
    elif comp == "diagonal":
        for i, (c, off, thick) in enumerate(
            ((p.accent, 0.55, 0.16), (p.accent2, 0.78, 0.07), (shade(p.background, -0.12), 0.2, 0.1))
        ):
            x0 = w * (off + 0.1 * r(f"dg{i}"))
            t = s * thick
            pts = [(x0, -10), (x0 + t, -10), (x0 + t - h * 0.6, h + 10), (x0 - h * 0.6, h + 10)]
            xs = [q[0] for q in pts]
            stamp(img, (min(xs), -10, max(xs), h + 10), c, 0.92, lambda d, _s, pts=pts: d.polygon(pts))
    elif comp == "rings":
        cx, cy = w * (0.85 if r("rx") < 0.5 else 0.15), h * 0.12
        for i in range(7):
            rad = s * (0.12 + 0.11 * i)
            stamp(
                img,
                (cx - rad, cy - rad, cx + rad, cy + rad),
                p.accent if i % 2 == 0 else p.accent2,
                0.55 - 0.05 * i,
                lambda d, _s, rad=rad: d.ellipse((cx - rad, cy - rad, cx + rad, cy + rad), width=s * 0.012),
            )
    elif comp == "confetti":
        pass  # all of it floats: see floaters()
    elif comp == "minimal":
        y = h * 0.3
        stamp(
            img,
            (w * 0.08, y, w * 0.08 + s * 0.12, y + s * 0.012),
            p.accent2,
            1.0,
            lambda d, _s: d.rect((w * 0.08, y, w * 0.08 + s * 0.12, y + s * 0.012)),
        )
    return img


def floaters(design: Design, size: tuple[int, int]) -> list[Sprite]:
    """The composition's moving shapes, at their places in a frame of `size` (they drift in the video)."""
    p, r = design.palette, design.rand
    w, h = size
    s = min(w, h)
    out: list[Sprite] = []
    comp = design.composition
    colors = [p.accent, p.accent2, shade(p.accent, 0.2), shade(p.accent2, -0.1)]

    def add(img: Image.Image, fx: float, fy: float, i: int, speed: float = 1.0) -> None:
        ang = r(f"fd{i}") * math.tau
        out.append(
            Sprite(
                img,
                w * fx - img.width / 2,
                h * fy - img.height / 2,
                drift=(math.cos(ang) * s * 0.08 * speed, math.sin(ang) * s * 0.08 * speed),
                bob=s * 0.012 * (0.5 + r(f"fb{i}")),
                period_s=4 + 4 * r(f"fp{i}"),
                phase=r(f"fph{i}") * math.tau,
            )
        )

    if comp == "confetti":
        for i in range(18):
            c = colors[i % len(colors)]
            sz = s * (0.018 + 0.03 * r(f"cs{i}"))
            if r(f"ct{i}") < 0.5:
                img = _shape_sprite(sz, sz, c, 0.9, lambda d, sz=sz: d.ellipse((0, 0, sz, sz)))
            else:
                rot = r(f"cr{i}") * 180
                piece = _shape_sprite(
                    sz * 1.6, sz * 0.6, c, 0.9, lambda d, sz=sz: d.rect((0, 0, sz * 1.6, sz * 0.6), sz * 0.1)
                )
                img = piece.rotate(rot, expand=True, resample=Image.Resampling.BICUBIC)
            fy = r(f"cy{i}")
            fy = fy * 0.25 + (0.0 if i % 2 else 0.72)  # keep the middle (the text's) clear
            add(img, 0.04 + 0.92 * r(f"cx{i}"), 0.04 + fy, i, 1.6)
    elif comp in ("stars", "frame", "grid"):
        for i in range(6):
            sz = s * (0.015 + 0.025 * r(f"ss{i}"))
            c = p.accent if comp != "grid" else colors[i % 2]
            if comp == "grid":
                img = _shape_sprite(sz, sz, c, 0.85, lambda d, sz=sz: d.rect((0, 0, sz, sz), sz * 0.2))
            else:
                q = sz / 2
                img = _shape_sprite(
                    sz,
                    sz,
                    c,
                    0.9,
                    lambda d, q=q: d.polygon(
                        [
                            (q, 0),
                            (q * 1.22, q * 0.78),
                            (2 * q, q),
                            (q * 1.22, q * 1.22),
                            (q, 2 * q),
                            (q * 0.78, q * 1.22),
                            (0, q),
                            (q * 0.78, q * 0.78),
                        ]
                    ),
                )
            add(
                img,
                0.08 + 0.84 * r(f"sx{i}"),
                (0.06 + 0.2 * r(f"sy{i}")) if i % 2 else (0.74 + 0.2 * r(f"sy{i}")),
                i,
            )
    else:
        n = 1 if comp == "minimal" else 3
        for i in range(n):
            sz = s * (0.06 + 0.07 * r(f"os{i}"))
            ring = comp in ("rings", "waves") and i % 2 == 0
            img = _shape_sprite(
                sz,
                sz,
                colors[i % len(colors)],
                0.75 if not ring else 0.9,
                lambda d, sz=sz, ring=ring: d.ellipse((1, 1, sz - 1, sz - 1), width=sz * 0.09 if ring else 0),
            )
            fy = 0.08 + 0.14 * r(f"oy{i}") if i % 2 == 0 else 0.7 + 0.15 * r(f"oy{i}")
            add(img, 0.1 + 0.8 * r(f"ox{i}"), fy, i)
    return out


def _wrap(text: str, fnt, max_w: float) -> list[str]:  # type: ignore[no-untyped-def]  # fnt: any Pillow font (FreeTypeFont or the bitmap default)
    lines: list[str] = []
    for para in text.split("\n"):
        cur = ""
        for word in para.split():
            cand = f"{cur} {word}".strip()
            if not cur or fnt.getlength(cand) <= max_w:
                cur = cand
            else:
                lines.append(cur)
                cur = word
        if cur:
            lines.append(cur)
    return lines


def text_block(
    design: Design,
    text: str,
    box: tuple[int, int],
    *,
    role: str,
    align: str,
    color: RGB | None = None,
    font_dir: str | None = None,
) -> Image.Image:
    """`text` set in the design's typeface, as large as fits `box` (w, h): an RGBA picture as wide as the box and
    as tall as the text. role: 'headline' (large, the design's weight and case, an accent rule below) or 'line'."""
    p = design.palette
    bw, bh = box
    body = text.upper() if design.uppercase and role == "headline" else text
    bold = design.bold if role == "headline" else False
    size = int(bh * (0.34 if role == "headline" else 0.3))
    max_lines = 5 if role == "headline" else 4
    min_size = 22
    while True:
        fnt = font(design.typeface, bold, size, font_dir)
        lines = _wrap(body, fnt, bw)
        asc, desc = fnt.getmetrics()
        lh = int((asc + desc) * (1.08 if role == "headline" else 1.2))
        widest = max((fnt.getlength(line) for line in lines), default=0)
        if (len(lines) <= max_lines and lh * len(lines) <= bh and widest <= bw) or size <= min_size:
            break
        size = max(min_size, int(size * 0.92))
    rule = role == "headline" and design.composition not in ("frame",)
    rule_h = max(4, size // 12) if rule else 0
    total_h = lh * len(lines) + (rule_h + size // 3 if rule else 0)
    img = Image.new("RGBA", (bw, max(2, total_h)), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    fill = (color or (p.text if role == "headline" else p.muted)) + (255,)
    for i, line in enumerate(lines):
        lw = fnt.getlength(line)
        x = {"left": 0, "center": (bw - lw) / 2, "right": bw - lw}[align]
        d.text((x, i * lh), line, font=fnt, fill=fill)
    if rule:
        rw = min(bw, max(size * 2, bw // 4))
        x = {"left": 0, "center": (bw - rw) / 2, "right": bw - rw}[align]
        y = lh * len(lines) + size // 4
        d.rectangle((x, y, x + rw, y + rule_h), fill=p.accent + (255,))
    return img


def logo_image(data: bytes | None, max_h: int) -> Image.Image | None:
    """The brand's logo (any format Pillow reads), RGBA, scaled to `max_h` tall; None when absent or unreadable."""
    if not data:
        return None
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.width * im.height > 40_000_000:
                return None
            im.thumbnail((max_h * 6, max_h), Image.Resampling.LANCZOS)
            return im.convert("RGBA")
    except Exception:  # noqa: BLE001  (an unusable logo is left out, never a failure of the generation)
        return None


def brand_block(
    design: Design,
    logo: Image.Image | None,
    width: int,
    height: int,
    *,
    align: str,
    color: RGB | None = None,
    font_dir: str | None = None,
) -> Image.Image | None:
    """Logo and brand name side by side (or either alone), RGBA, `height` tall at most; None without either. The
    name in `color` (default: the palette's text colour)."""
    name = design.brand_name
    if not name and logo is None:
        return None
    fnt = font(design.typeface, True, max(18, int(height * 0.46)), font_dir)
    gap = height // 3
    name_w = int(fnt.getlength(name)) if name else 0
    logo_w = logo.width if logo is not None else 0
    total = min(width, logo_w + (gap if logo is not None and name else 0) + name_w)
    img = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    x = {"left": 0, "center": (width - total) // 2, "right": width - total}[align]
    if logo is not None:
        img.alpha_composite(logo, (x, (height - logo.height) // 2))
        x += logo.width + gap
    if name:
        asc, desc = fnt.getmetrics()
        ImageDraw.Draw(img).text(
            (x, (height - asc - desc) // 2), name, font=fnt, fill=(color or design.palette.text) + (255,)
        )
    return img


@dataclass(frozen=True)
class Layout:
    """Where the text goes in a frame of a given size."""

    align: str
    text_x: int
    text_w: int
    headline_y: int  # top of the headline block's box
    headline_h: int
    line_h: int  # the supporting line's box height
    brand_y: int
    brand_h: int


def layout(design: Design, size: tuple[int, int]) -> Layout:
    w, h = size
    s = min(w, h)
    align = "center" if design.composition in ("frame", "minimal", "sun", "rings") else "left"
    if w > h:  # 16:9: text on the left 60 %
        tx, tw = int(w * 0.07), int(w * 0.56)
        return Layout(
            align if align == "left" else "left",
            tx,
            tw,
            int(h * 0.2),
            int(h * 0.42),
            int(h * 0.2),
            int(h * 0.8),
            int(s * 0.1),
        )
    if h > w:  # 9:16: between the top 12 % and the bottom 20 %
        tx = int(w * 0.08)
        return Layout(
            align, tx, w - 2 * tx, int(h * 0.3), int(h * 0.26), int(h * 0.12), int(h * 0.72), int(s * 0.1)
        )
    tx = int(w * 0.09)
    return Layout(
        align, tx, w - 2 * tx, int(h * 0.22), int(h * 0.36), int(h * 0.16), int(h * 0.8), int(s * 0.09)
    )
