"""`runway`: Runway's image-to-video API, for videos from a start image (and optionally an end image).

`POST {base}/image_to_video` with headers `Authorization: Bearer <key>` and `X-Runway-Version`, body
`{model, promptText, promptImage: [{uri, position: "first"|"last"}], ratio, duration, seed}` (images sent as data
URIs) → `{id}`; then `GET {base}/tasks/{id}` until `status` is `SUCCEEDED` (`output: [url]`), `FAILED`
(`failure`, `failureCode`) or `CANCELLED`; `PENDING`, `THROTTLED` and `RUNNING` (with `progress`) mean wait. The
video is then downloaded from its URL without our key. A `failureCode` starting with `SAFETY` (content moderation)
raises ProviderRefused; other failures ProviderUnavailable. Runway makes 5 or 10 s clips and needs a start image:
a 15 s video, a video without a start image or an image request is refused with a message saying so. The file is
kept as Runway encodes it (H.264 MP4 at the ratio's size, e.g. 720 × 1280); its real size and duration are
reported.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable
from pathlib import Path

import av
import httpx
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
from backend.media import detect


class RunwaySettings(RemoteSettings):
    """SOCIALPUB_GENERATION_RUNWAY_…"""

    model_config = SettingsConfigDict(env_prefix="SOCIALPUB_GENERATION_RUNWAY_", extra="ignore")

    base_url: str = "https://api.dev.runwayml.com/v1"
    model: str = "gen4_turbo"
    api_version: str = "2024-11-06"
    ratios: dict[str, str] = Field(
        default_factory=lambda: {"9:16": "720:1280", "1:1": "960:960", "16:9": "1280:720"}
    )
    poll_s: float = Field(default=5.0, ge=0)
    max_wait_s: float = Field(default=900.0, gt=0)
    max_video_bytes: int = 512 * 1024 * 1024


class RunwayProvider:
    name = "runway"

    def __init__(
        self,
        settings: RunwaySettings | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings or RunwaySettings()
        self.sleep, self.clock = sleep, clock
        self.api = Caller(
            self.settings,
            "video generation",
            transport=transport,
            sleep=sleep,
            headers={"X-Runway-Version": self.settings.api_version},
        )
        self.download = Caller(
            self.settings, "video generation", transport=transport, sleep=sleep, send_key=False
        )

    def generate(
        self, request: GenerationRequest, out_dir: Path, progress: Progress | None = None
    ) -> Produced:
        if request.type != "video":
            raise ProviderRefused("This generation service makes videos only; ask for a video.")
        if not request.sources:
            raise ProviderRefused("This video service animates a start image: add one to the request.")
        if request.duration_sec not in (5, 10):
            raise ProviderRefused("This video service makes clips of 5 or 10 seconds.")
        images = []
        for data, position in zip(request.sources[:2], ("first", "last"), strict=False):
            found = detect.detect_or_none(data[:64])
            if found is None or found.kind != "image":
                raise ProviderRefused(
                    f"The {'start' if position == 'first' else 'end'} image is not an image "
                    "this service can read."
                )
            uri = f"data:{found.mime_type};base64,{base64.b64encode(data).decode()}"
            images.append({"uri": uri, "position": position})
        body = {
            "model": self.settings.model,
            "promptText": request.prompt[:1000],
            "promptImage": images,
            "ratio": self.settings.ratios.get(request.aspect_ratio, "720:1280"),
            "duration": request.duration_sec,
            "seed": request.seed % 4294967295,
        }
        response = self.api.request("POST", "image_to_video", json=body)
        self._check(response)
        task_id = str(response.json().get("id") or "")
        if not task_id:
            raise ProviderUnavailable("The video service did not start the task; try again.")
        deadline = self.clock() + self.settings.max_wait_s
        while True:
            response = self.api.request("GET", f"tasks/{task_id}")
            self._check(response)
            task = response.json()
            status = task.get("status")
            if status == "SUCCEEDED":
                break
            if status in ("FAILED", "CANCELLED"):
                code = str(task.get("failureCode") or "")
                if code.upper().startswith("SAFETY"):
                    raise ProviderRefused(
                        "The video service refused this prompt or image under its content policy."
                    )
                raise ProviderUnavailable(
                    f"The video service could not make this video ({task.get('failure') or status}); "
                    "try again later."
                )
            if progress is not None and isinstance(task.get("progress"), int | float):
                progress(min(0.9, float(task["progress"]) * 0.9))
            if self.clock() >= deadline:
                raise ProviderUnavailable("The video service took too long; try again later.")
            self.sleep(self.settings.poll_s)
        outputs = task.get("output") or []
        if not outputs:
            raise ProviderUnavailable("The video service finished without a video; try again.")
        video = self.download.request("GET", str(outputs[0]))
        if video.status_code != 200 or len(video.content) > self.settings.max_video_bytes:
            raise ProviderUnavailable("The finished video could not be downloaded; try again.")
        path = out_dir / f"runway-{hashlib.sha256(video.content).hexdigest()[:16]}.mp4"
        path.write_bytes(video.content)
        try:
            with av.open(str(path)) as c:
                vs = c.streams.video[0]
                width, height = vs.width, vs.height
                duration = (
                    float(c.duration / av.time_base) if c.duration else float(request.duration_sec or 0)
                )
        except (av.error.FFmpegError, IndexError) as exc:
            path.unlink(missing_ok=True)
            raise ProviderUnavailable(
                "The video service sent a file that is not a video; try again."
            ) from exc
        if progress is not None:
            progress(1.0)
        return Produced(path=path, mime_type="video/mp4", width=width, height=height, duration_sec=duration)

    @staticmethod
    def _check(response: httpx.Response) -> None:
        if response.status_code < 400:
            return
        message, _kind, code = error_of(response)
        if "SAFETY" in code.upper() or "moderation" in message.lower():
            raise ProviderRefused("The video service refused this prompt or image under its content policy.")
        if response.status_code in (401, 403):
            raise ProviderUnavailable(
                "The video service refused our credentials; the operator must check the API key."
            )
        raise ProviderRefused(f"The video service refused the request: {message or response.status_code}")
