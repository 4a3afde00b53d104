"""A small generation provider for the tests, registered like any provider: an entry point of the group
`socialpub.generation_providers` (name `test`), declared by a `*.dist-info` directory put on the path
(`register(dir)`), so the registry finds it exactly as it finds a plugin — in this process and in a `socialpub
worker` subprocess alike (PYTHONPATH).

It writes real files: a small JPEG for an image, a small H.264 MP4 for a video (the request's aspect ratio, scaled
down). The prompt steers it, as a remote service's answers would:

    [refuse]            ProviderRefused (its own content policy)
    [unavailable]       ProviderUnavailable every time
    [unavailable xN]    ProviderUnavailable the first N times for this prompt (in this process)
    [crash]             RuntimeError (a bug: the worker retries, then buries the job)
    [slow]              sleeps SOCIALPUB_TEST_PROVIDER_SLOW_S seconds (default 60) before writing

When SOCIALPUB_TEST_PROVIDER_MARKER names a file, a line `<prompt>` is appended to it as production starts (a test
in another process learns that production is under way).
"""

from __future__ import annotations

import io
import os
import re
import threading
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

from backend.generation.provider import (
    ENTRY_POINT_GROUP,
    GenerationRequest,
    Produced,
    Progress,
    ProviderRefused,
    ProviderUnavailable,
)

_lock = threading.Lock()
CALLS: list[GenerationRequest] = []
_failures: Counter[str] = Counter()
_running = {"now": 0, "peak": 0}  # productions under way in this process, and the most at once


def peak() -> int:
    return _running["peak"]


def reset() -> None:
    with _lock:
        CALLS.clear()
        _failures.clear()
        _running.update(now=0, peak=0)


class TestProvider:
    name = "test"
    __test__ = False  # not a pytest test class

    def generate(
        self, request: GenerationRequest, out_dir: Path, progress: Progress | None = None
    ) -> Produced:
        with _lock:
            _running["now"] += 1
            _running["peak"] = max(_running["peak"], _running["now"])
        try:
            return self._generate(request, out_dir, progress)
        finally:
            with _lock:
                _running["now"] -= 1

    def _generate(self, request: GenerationRequest, out_dir: Path, progress: Progress | None) -> Produced:
        prompt = request.prompt
        with _lock:
            CALLS.append(request)
        marker = os.environ.get("SOCIALPUB_TEST_PROVIDER_MARKER")
        if marker:
            with open(marker, "a", encoding="utf-8") as fh:
                fh.write(prompt.replace("\n", " ") + "\n")
        if "[refuse]" in prompt:
            raise ProviderRefused(
                "the provider's own policy refuses this prompt: describe the scene differently"
            )
        if "[unavailable]" in prompt:
            raise ProviderUnavailable("the generation service is overloaded right now", retry_after_s=0.01)
        m = re.search(r"\[unavailable x(\d+)\]", prompt)
        if m:
            with _lock:
                _failures[prompt] += 1
                n = _failures[prompt]
            if n <= int(m.group(1)):
                raise ProviderUnavailable(
                    "the generation service is overloaded right now", retry_after_s=0.01
                )
        if "[crash]" in prompt:
            raise RuntimeError("test provider crashed")
        if "[slow]" in prompt:
            time.sleep(float(os.environ.get("SOCIALPUB_TEST_PROVIDER_SLOW_S", "60")))
        w, h = request.size
        w, h = max(16, w // 10 // 2 * 2), max(16, h // 10 // 2 * 2)
        if progress:
            progress(0.5)
        if request.type == "image":
            path = out_dir / "image.jpg"
            path.write_bytes(jpeg(w, h))
            produced = Produced(path=path, mime_type="image/jpeg", width=w, height=h)
        else:
            path = out_dir / "video.mp4"
            seconds = request.duration_sec or 5
            path.write_bytes(mp4(w, h, seconds))
            produced = Produced(
                path=path, mime_type="video/mp4", width=w, height=h, duration_sec=float(seconds)
            )
        if progress:
            progress(1.0)
        return produced


def jpeg(width: int, height: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 120, 40)).save(buf, "JPEG", quality=80)
    return buf.getvalue()


def mp4(width: int, height: int, seconds: int, fps: int = 2) -> bytes:
    import av
    from PIL import Image

    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = Fraction(1, fps)
        for i in range(seconds * fps):
            frame = av.VideoFrame.from_image(Image.new("RGB", (width, height), (i * 7 % 255, 90, 160)))
            frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buf.getvalue()


def register(directory: Path) -> Path:
    """Write the distribution metadata declaring the entry point `test` under `directory` (to be put on sys.path
    or PYTHONPATH). Returns `directory`."""
    info = directory / "socialpub_test_provider-0.0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: socialpub-test-provider\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ntest = tests.support.gen_provider:TestProvider\n"
    )
    return directory
