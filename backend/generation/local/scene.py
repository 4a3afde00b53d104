"""A scene: the layers of one design at one frame size, drawn once, and the still image made of them.

The video (video.py) takes the same layers and moves them; the still image is the video's settled state: the
background, the floating shapes where they rest, the headline, the first supporting line (or the brand's
tagline), and the brand block (logo and name).
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image

from backend.generation.local import layers
from backend.generation.local.design import Design
from backend.generation.provider import Brand


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


def build(design: Design, brand: Brand, size: tuple[int, int], font_dir: str | None = None) -> Scene:
    lay = layers.layout(design, size)
    headline = layers.text_block(
        design,
        design.headline,
        (lay.text_w, lay.headline_h),
        role="headline",
        align=lay.align,
        font_dir=font_dir,
    )
    texts = list(design.lines)
    if design.tagline and design.tagline not in texts:
        texts.append(design.tagline)
    lines = [
        layers.text_block(
            design, t, (lay.text_w, lay.line_h), role="line", align=lay.align, font_dir=font_dir
        )
        for t in texts
    ]
    beats = [
        layers.text_block(
            design,
            t,
            (lay.text_w, int(lay.headline_h * 0.8)),
            role="headline",
            align=lay.align,
            font_dir=font_dir,
        )
        for t in texts
    ]
    logo = layers.logo_image(brand.logo, lay.brand_h)
    brand_img = layers.brand_block(design, logo, lay.text_w, lay.brand_h, align=lay.align, font_dir=font_dir)
    return Scene(design, size, lay, layers.floaters(design, size), headline, lines, beats, brand_img)


def still(scene: Scene) -> Image.Image:
    """The still image of the scene, RGB."""
    img = layers.background(scene.design, scene.size).convert("RGBA")
    for sp in scene.floaters:
        img.alpha_composite(sp.image, (round(sp.x), round(sp.y))) if sp.x >= 0 and sp.y >= 0 else img.paste(
            sp.image, (round(sp.x), round(sp.y)), sp.image
        )
    img.alpha_composite(scene.headline, scene.headline_pos())
    if scene.lines:
        x, y = scene.line_pos(scene.lines[0], below_headline=True)
        if y + scene.lines[0].height <= scene.layout.brand_y:
            img.alpha_composite(scene.lines[0], (x, y))
    if scene.brand is not None:
        img.alpha_composite(scene.brand, scene.brand_pos())
    return img.convert("RGB")
