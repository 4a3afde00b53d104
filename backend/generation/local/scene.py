"""A scene: the layers of one design at one frame size, drawn once, and the still image made of them.

The video (video.py) takes the same layers and moves them; the still image is the video's settled state: the
background (the design's, or the user's photo), the floating shapes where they rest, the headline, the first
supporting line (or the brand's tagline), and the brand block (logo and name).

Every text is legible (legible.py): its colour is chosen against the pixels actually behind it in the still image
(the background and the shapes, measured), and where no colour alone reaches WCAG AA a panel goes behind it. The
checks made are kept (`Scene.checks`), so that a test measures the same regions again on the rendered image.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw, ImageOps

from backend.generation.local import layers, legible
from backend.generation.local.design import RGB, Design
from backend.generation.provider import Brand


@dataclass(frozen=True)
class Panel:
    """What goes behind a text that no colour alone makes legible: an RGBA picture placed at the text's position
    plus (dx, dy)."""

    image: Image.Image
    dx: int
    dy: int


@dataclass(frozen=True)
class TextCheck:
    """A text of the still image and the region behind it (x0, y0, x1, y1, frame coordinates) that its colour was
    chosen against: every pixel there (the panel blended in, if any) contrasts with `colour` by `required`."""

    name: str
    box: tuple[int, int, int, int]
    colour: RGB
    required: float


@dataclass
class Scene:
    design: Design
    size: tuple[int, int]
    layout: layers.Layout
    floaters: list[layers.Sprite]
    headline: Image.Image
    lines: list[Image.Image]  # the supporting lines, then the tagline, as text blocks (under the headline)
    beats: list[Image.Image]  # the same texts set large, each the text of a video beat after the headline
    brand: Image.Image | None
    photo: Image.Image | None = None  # the user's background photo, covering the frame (RGB)
    panels: dict[str, Panel] = field(default_factory=dict)  # by text: headline, line0, brand, beat0, …
    checks: list[TextCheck] = field(default_factory=list)

    def headline_pos(self) -> tuple[int, int]:
        lay = self.layout
        return lay.text_x, lay.headline_y + max(0, (lay.headline_h - self.headline.height) // 2)

    def line_pos(self, block: Image.Image, below_headline: bool) -> tuple[int, int]:
        lay = self.layout
        if below_headline:
            return lay.text_x, self.headline_pos()[1] + self.headline.height + lay.line_h // 5
        return lay.text_x, lay.headline_y + max(0, (lay.headline_h - block.height) // 2)

    def brand_pos(self) -> tuple[int, int]:
        return self.layout.text_x, self.layout.brand_y

    def first_line_fits(self) -> bool:
        if not self.lines:
            return False
        _, y = self.line_pos(self.lines[0], below_headline=True)
        return y + self.lines[0].height <= self.layout.brand_y

    def backdrop(self) -> Image.Image:
        """What is behind the texts, RGB: the photo, or the design's background and its shapes where they rest."""
        if self.photo is not None:
            return self.photo.copy()
        img = layers.background(self.design, self.size).convert("RGBA")
        for sp in self.floaters:
            if sp.x >= 0 and sp.y >= 0:
                img.alpha_composite(sp.image, (round(sp.x), round(sp.y)))
            else:
                img.paste(sp.image, (round(sp.x), round(sp.y)), sp.image)
        return img.convert("RGB")

    def framed(
        self, name: str, block: Image.Image, pos: tuple[int, int]
    ) -> tuple[Image.Image, tuple[int, int]]:
        """A text block on its panel (one picture, moving as one in the video) and where it goes; the block as it
        is when it needs none."""
        panel = self.panels.get(name)
        if panel is None:
            return block, pos
        out = panel.image.copy()
        out.alpha_composite(block, (-panel.dx, -panel.dy))
        return out, (pos[0] + panel.dx, pos[1] + panel.dy)

    def placed(self) -> list[tuple[str, Image.Image, tuple[int, int]]]:
        """The still image's texts: (name, block, position)."""
        out = [("headline", self.headline, self.headline_pos())]
        if self.first_line_fits():
            out.append(("line0", self.lines[0], self.line_pos(self.lines[0], below_headline=True)))
        if self.brand is not None:
            out.append(("brand", self.brand, self.brand_pos()))
        return out


def build(
    design: Design,
    brand: Brand,
    size: tuple[int, int],
    font_dir: str | None = None,
    photo: Image.Image | None = None,
) -> Scene:
    lay = layers.layout(design, size)
    p = design.palette
    texts = list(design.lines)
    if design.tagline and design.tagline not in texts:
        texts.append(design.tagline)
    logo = layers.logo_image(brand.logo, lay.brand_h)

    def headline(colour: RGB | None) -> Image.Image:
        return layers.text_block(
            design,
            design.headline,
            (lay.text_w, lay.headline_h),
            role="headline",
            align=lay.align,
            color=colour,
            font_dir=font_dir,
        )

    def line(text: str) -> Callable[[RGB | None], Image.Image]:
        return lambda colour: layers.text_block(
            design,
            text,
            (lay.text_w, lay.line_h),
            role="line",
            align=lay.align,
            color=colour,
            font_dir=font_dir,
        )

    def beat(text: str) -> Callable[[RGB | None], Image.Image]:
        return lambda colour: layers.text_block(
            design,
            text,
            (lay.text_w, int(lay.headline_h * 0.8)),
            role="headline",
            align=lay.align,
            color=colour,
            font_dir=font_dir,
        )

    def brand_block(colour: RGB | None) -> Image.Image | None:
        return layers.brand_block(
            design, logo, lay.text_w, lay.brand_h, align=lay.align, color=colour, font_dir=font_dir
        )

    scene = Scene(
        design,
        size,
        lay,
        [] if photo is not None else layers.floaters(design, size),
        headline(None),
        [line(t)(None) for t in texts],
        [beat(t)(None) for t in texts],
        brand_block(None),
        photo=_cover(photo, size) if photo is not None else None,
    )
    behind = np.asarray(scene.backdrop())
    pad = max(8, min(size) // 45)

    def settle(
        name: str,
        make: Callable[[RGB | None], Image.Image | None],
        block: Image.Image,
        at: Callable[[Image.Image], tuple[int, int]],
        default: RGB,
    ) -> Image.Image:
        box = _glyph_box(block, at(block), size)
        if box is None:
            return block
        x0, y0, x1, y1 = box
        choice = legible.choose(behind[y0:y1, x0:x1], default, p.background)
        if choice.colour != default:
            remade = make(choice.colour)
            assert remade is not None
            block = remade
        if choice.panel is not None:
            bx, by = at(block)
            px0, py0 = max(0, x0 - pad), max(0, y0 - pad)
            px1, py1 = min(size[0], x1 + pad), min(size[1], y1 + pad)
            img = Image.new("RGBA", (px1 - px0, py1 - py0), choice.panel + (0,))
            ImageDraw.Draw(img).rounded_rectangle(
                (0, 0, img.width - 1, img.height - 1),
                radius=pad,
                fill=choice.panel + (round(choice.opacity * 255),),
            )
            scene.panels[name] = Panel(img, px0 - bx, py0 - by)
        scene.checks.append(TextCheck(name, box, choice.colour, legible.AA_NORMAL))
        return block

    scene.headline = settle("headline", headline, scene.headline, lambda b: scene.headline_pos(), p.text)
    if scene.first_line_fits():
        scene.lines[0] = settle(
            "line0", line(texts[0]), scene.lines[0], lambda b: scene.line_pos(b, below_headline=True), p.muted
        )
    scene.beats = [
        settle(f"beat{i}", beat(t), b, lambda b: scene.line_pos(b, below_headline=False), p.text)
        for i, (t, b) in enumerate(zip(texts, scene.beats, strict=True))
    ]
    scene.checks = [c for c in scene.checks if not c.name.startswith("beat")]  # the video's: not in the still
    if scene.brand is not None and design.brand_name:
        scene.brand = settle("brand", brand_block, scene.brand, lambda b: scene.brand_pos(), p.text)
    return scene


def _glyph_box(
    block: Image.Image, pos: tuple[int, int], size: tuple[int, int]
) -> tuple[int, int, int, int] | None:
    """The box of a block's drawn pixels in frame coordinates, inside the frame; None when it draws nothing."""
    bbox = block.getchannel("A").getbbox()
    if bbox is None:
        return None
    x0, y0 = max(0, pos[0] + bbox[0]), max(0, pos[1] + bbox[1])
    x1, y1 = min(size[0], pos[0] + bbox[2]), min(size[1], pos[1] + bbox[3])
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _cover(photo: Image.Image, size: tuple[int, int]) -> Image.Image:
    """The photo cropped to the frame's proportions around its centre and scaled to cover it, RGB."""
    return ImageOps.fit(photo.convert("RGB"), size, Image.Resampling.LANCZOS, centering=(0.5, 0.5))


def still(scene: Scene, *, texts: bool = True) -> Image.Image:
    """The still image of the scene, RGB. `texts=False`: what is behind the texts (panels included), as their
    colours were chosen against — what a test measures."""
    img = scene.backdrop().convert("RGBA")
    for name, block, pos in scene.placed():
        panel = scene.panels.get(name)
        if panel is not None:
            img.alpha_composite(panel.image, (pos[0] + panel.dx, pos[1] + panel.dy))
        if texts:
            img.alpha_composite(block, pos)
    return img.convert("RGB")
