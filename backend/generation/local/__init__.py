"""The local provider: an embedded design and motion-graphics renderer. No model, no download, no network.

It is not an image model and is not presented as one: it sets the prompt's words and the workspace brand in a
composition chosen from the prompt (design.py), draws it with Pillow (layers.py, scene.py), animates it or the
supplied start and end frames (video.py) with a synthesized soundtrack (sound.py), and encodes H.264 + AAC in MP4
with PyAV. Same prompt, brand, sources and seed: the same file.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Literal

from PIL import Image
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from backend.errors import ApiError
from backend.generation.local import scene as scenes
from backend.generation.local import video
from backend.generation.local.design import design_for
from backend.generation.provider import (
    VIDEO_DURATIONS,
    GenerationRequest,
    Produced,
    Progress,
    ProviderRefused,
)
from backend.media import detect, images

JPEG_QUALITY = 92


class LocalSettings(BaseSettings):
    """SOCIALPUB_GENERATION_LOCAL_… (docs/configuration.md, "Generation providers")."""

    model_config = SettingsConfigDict(env_prefix="SOCIALPUB_GENERATION_LOCAL_", extra="ignore")

    fps: int = Field(default=25, ge=24, le=30)
    preset: Literal["ultrafast", "superfast", "veryfast", "faster", "fast", "medium"] = "superfast"
    crf: int = Field(default=21, ge=14, le=32)
    threads: int = Field(default=0, ge=0, le=64)  # x264 threads; 0: as many as it sees fit for the cores
    font_dir: Path | None = None  # searched first for .ttf/.otf files (fonts.py)


class LocalProvider:
    name = "local"

    def __init__(self, settings: LocalSettings | None = None) -> None:
        self.settings = settings or LocalSettings()

    def generate(
        self, request: GenerationRequest, out_dir: Path, progress: Progress | None = None
    ) -> Produced:
        font_dir = str(self.settings.font_dir) if self.settings.font_dir else None
        design = design_for(request.prompt, request.brand, request.seed)
        w, h = request.size
        if progress is not None:
            progress(0.0)
        photo = (
            _source(request.background, "background")
            if request.background and request.type == "image"
            else None
        )
        scene = scenes.build(design, request.brand, (w, h), font_dir, photo=photo)
        digest = design.digest + (
            hashlib.sha256(request.background).digest() if photo is not None and request.background else b""
        )
        stem = "local-" + hashlib.sha256(digest + request.type.encode()).hexdigest()[:16]
        if request.type == "image":
            path = out_dir / f"{stem}.jpg"
            scenes.still(scene).save(path, "JPEG", quality=JPEG_QUALITY, optimize=True)
            if progress is not None:
                progress(1.0)
            return Produced(path=path, mime_type="image/jpeg", width=w, height=h)
        duration = request.duration_sec or VIDEO_DURATIONS[0]
        if duration not in VIDEO_DURATIONS:
            raise ProviderRefused(f"A video lasts 5, 10 or 15 seconds, not {duration}.")
        sources = [_source(data, "start" if i == 0 else "end") for i, data in enumerate(request.sources[:2])]
        enc = video.Encoding(
            fps=self.settings.fps,
            preset=self.settings.preset,
            crf=self.settings.crf,
            threads=self.settings.threads,
        )
        path = out_dir / f"{stem}.mp4"
        if sources:
            exact = video.animate_sources(scene, sources, duration, enc, path, progress)
        else:
            exact = video.animate_scene(scene, duration, enc, path, progress)
        if progress is not None:
            progress(1.0)
        return Produced(path=path, mime_type="video/mp4", width=w, height=h, duration_sec=exact)


def _source(data: bytes, which: str) -> Image.Image:
    """A supplied picture (the `start` or `end` frame, the `background` photo) through the product's image
    pipeline (allowlisted decoder, bomb guard, orientation, sRGB), kept up to 1920 px on its longer side."""
    found = detect.detect_or_none(data[:64])
    if found is None or found.kind != "image":
        raise ProviderRefused(f"The {which} image is not an image this service can read.")
    try:
        processed = images.process_image(data, found.format, max_side=1920)
    except ApiError as exc:
        raise ProviderRefused(f"The {which} image cannot be used: {exc.message}") from exc
    return Image.open(io.BytesIO(processed.data)).convert("RGB")
