"""The generation provider contract (issue 15): what the worker asks a provider for, and what it gets back.

A provider turns a `GenerationRequest` into a file. It knows no store, no service and no credits: the worker's
generation job loads the request, calls `provider.generate`, and records the outcome (writes through the
services). Providers are registered under the Python entry-point group `ENTRY_POINT_GROUP` — the built-in ones
exactly like a plugin's (pyproject.toml `[project.entry-points."socialpub.generation_providers"]`) — and chosen
by `SOCIALPUB_GENERATION_PROVIDER` (`local` by default); each reads its own settings from
`SOCIALPUB_GENERATION_<NAME>_…` variables.

Failures a provider raises:
- `ProviderRefused`: the provider (or its own content policy) refuses this prompt or source; not retried.
- `ProviderUnavailable`: temporary (timeout, 5xx, rate limit); the job may retry within its budget, then fails.
Either way the generation ends `failed` with the exception's `user_message` and a full refund.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

ENTRY_POINT_GROUP = "socialpub.generation_providers"

AspectRatio = Literal["9:16", "1:1", "16:9"]
GenerationType = Literal["image", "video"]

SIZES: dict[str, tuple[int, int]] = {"9:16": (1080, 1920), "1:1": (1080, 1080), "16:9": (1920, 1080)}
"""Output size (width, height) per aspect ratio, for images and videos alike."""
VIDEO_DURATIONS = (5, 10, 15)


@dataclass(frozen=True)
class Brand:
    """The workspace's brand profile as far as a renderer uses it (spec 2.2 `brand`): all optional."""

    name: str | None = None
    colors: tuple[str, ...] = ()  # "#RRGGBB", most important first
    logo: bytes | None = None  # an image file's bytes (any format Pillow reads)
    extra: dict[str, str] = field(default_factory=dict)  # other brand fields as text (tone, tagline, ...)


@dataclass(frozen=True)
class GenerationRequest:
    type: GenerationType
    prompt: str  # 3 to 1,800 characters, already past the content guard
    aspect_ratio: AspectRatio
    duration_sec: int | None  # 5, 10 or 15 for a video; None for an image
    sources: tuple[bytes, ...] = ()  # video only: a start image, or start and end images (files' bytes)
    background: bytes | None = None  # image only: a photo to set the design over (an image file's bytes)
    brand: Brand = field(default_factory=Brand)
    seed: int = 0  # same prompt + seed + inputs: the same output (the local provider is deterministic)

    @property
    def size(self) -> tuple[int, int]:
        return SIZES[self.aspect_ratio]


@dataclass(frozen=True)
class Produced:
    """A finished file, written by the provider under the `out_dir` it was given."""

    path: Path
    mime_type: str  # image/jpeg, image/png or video/mp4
    width: int
    height: int
    duration_sec: float | None = None  # a video's exact duration


class ProviderRefused(Exception):
    """The provider refuses this request (its content policy, an unusable source image). Not retried."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message


class ProviderUnavailable(Exception):
    """A temporary failure (timeout, 5xx, rate limit, provider down). May be retried."""

    def __init__(self, user_message: str, retry_after_s: float | None = None) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.retry_after_s = retry_after_s


Progress = Callable[[float], None]
"""Called with the fraction done (0.0 to 1.0) as production advances; may be called from the same thread."""


@runtime_checkable
class Provider(Protocol):
    name: str

    def generate(
        self, request: GenerationRequest, out_dir: Path, progress: Progress | None = None
    ) -> Produced:
        """Produce the file for `request` under `out_dir` (which exists). Blocking; raise ProviderRefused or
        ProviderUnavailable on failure."""
        ...


ProviderFactory = Callable[[], Provider]
"""What an entry point of ENTRY_POINT_GROUP loads: a callable (usually the provider class) that builds the
provider, reading its own `SOCIALPUB_GENERATION_<NAME>_…` settings."""
