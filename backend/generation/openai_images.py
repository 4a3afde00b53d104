"""`openai`: any OpenAI-compatible images API (`POST {base}/images/generations`), for images.

Request `{model, prompt, n: 1, size, response_format: "b64_json"}` (gpt-image models always answer base64 and take
no response_format: set SOCIALPUB_GENERATION_OPENAI_RESPONSE_FORMAT to empty for them); answer
`{data: [{b64_json}]}`. The picture is covered onto the contract's size (1080 × 1920, 1080 × 1080, 1920 × 1080)
and saved as JPEG, what the networks accept. A refusal by the service's content policy (error code
`content_policy_violation`, or a 400 of type `image_generation_user_error`) raises ProviderRefused with a message
for the user; other 4xx are refused with the service's message; 401/403 are an operator's problem (bad key) and
raise ProviderUnavailable; transient errors are retried (remote.py). Videos: refused (an images API).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from PIL import Image
from pydantic import Field
from pydantic_settings import SettingsConfigDict

from backend.generation.provider import (
    GenerationRequest,
    Produced,
    Progress,
    ProviderRefused,
    ProviderUnavailable,
)
from backend.generation.remote import Caller, RemoteSettings, error_of

REFUSAL_CODES = {"content_policy_violation", "moderation_blocked", "safety_violation"}


class OpenAIImagesSettings(RemoteSettings):
    """SOCIALPUB_GENERATION_OPENAI_…"""

    model_config = SettingsConfigDict(env_prefix="SOCIALPUB_GENERATION_OPENAI_", extra="ignore")

    base_url: str = "https://api.openai.com/v1"
    model: str = "dall-e-3"
    response_format: str = "b64_json"
    sizes: dict[str, str] = Field(
        default_factory=lambda: {"9:16": "1024x1792", "1:1": "1024x1024", "16:9": "1792x1024"}
    )


def cover(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    w, h = size
    scale = max(w / img.width, h / img.height)
    img = img.resize(
        (max(w, round(img.width * scale)), max(h, round(img.height * scale))), Image.Resampling.LANCZOS
    )
    left, top = (img.width - w) // 2, (img.height - h) // 2
    return img.crop((left, top, left + w, top + h))


class OpenAIImagesProvider:
    name = "openai"

    def __init__(
        self,
        settings: OpenAIImagesSettings | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings or OpenAIImagesSettings()
        self.caller = Caller(self.settings, "image generation", transport=transport, sleep=sleep)

    def generate(
        self, request: GenerationRequest, out_dir: Path, progress: Progress | None = None
    ) -> Produced:
        if request.type != "image":
            raise ProviderRefused("This generation service makes images only; ask for an image.")
        if request.background is not None:
            raise ProviderRefused(
                "This generation service paints a picture from the prompt: it does not set text over your own "
                "photo (backgroundUrl). The local design renderer does: SOCIALPUB_GENERATION_PROVIDER=local."
            )
        body: dict[str, object] = {
            "model": self.settings.model,
            "prompt": request.prompt,
            "n": 1,
            "size": self.settings.sizes.get(request.aspect_ratio, "1024x1024"),
        }
        if self.settings.response_format:
            body["response_format"] = self.settings.response_format
        response = self.caller.request("POST", "images/generations", json=body)
        if response.status_code >= 400:
            message, kind, code = error_of(response)
            if (
                code in REFUSAL_CODES
                or kind == "image_generation_user_error"
                or "safety system" in message.lower()
            ):
                raise ProviderRefused(
                    "The image service refused this prompt under its content policy: "
                    + (message or "no reason given")
                )
            if response.status_code in (401, 403):
                raise ProviderUnavailable(
                    "The image service refused our credentials; the operator must check the API key."
                )
            raise ProviderRefused(f"The image service refused the request: {message or response.status_code}")
        try:
            item = response.json()["data"][0]
            data = base64.b64decode(item["b64_json"], validate=True)
            img = Image.open(io.BytesIO(data))
            if img.width * img.height > 50_000_000:
                raise ValueError("image too large")
            img.load()
        except (ValueError, KeyError, IndexError, TypeError, binascii.Error, OSError) as exc:
            raise ProviderUnavailable(
                "The image service sent an answer that is not an image; try again."
            ) from exc
        w, h = request.size
        out = cover(img.convert("RGB"), (w, h))
        path = out_dir / f"openai-{hashlib.sha256(data).hexdigest()[:16]}.jpg"
        out.save(path, "JPEG", quality=92)
        if progress is not None:
            progress(1.0)
        return Produced(path=path, mime_type="image/jpeg", width=w, height=h)
