"""The local provider: an embedded design and motion-graphics renderer (no model, no download, no network)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from backend.generation.provider import GenerationRequest, Produced, Progress, ProviderUnavailable


class LocalSettings(BaseSettings):
    """SOCIALPUB_GENERATION_LOCAL_…"""

    model_config = SettingsConfigDict(env_prefix="SOCIALPUB_GENERATION_LOCAL_", extra="ignore")

    fps: int = Field(default=25, ge=24, le=30)


class LocalProvider:
    name = "local"

    def __init__(self, settings: LocalSettings | None = None) -> None:
        self.settings = settings or LocalSettings()

    def generate(self, request: GenerationRequest, out_dir: Path, progress: Progress | None = None) -> Produced:
        raise ProviderUnavailable("The local renderer is not built yet.")  # replaced by the renderer next
