"""The HTTP providers against local fakes of their APIs (httpx.MockTransport): no real host is ever called."""

from __future__ import annotations

import base64
import io
import json
import logging
from pathlib import Path

import av
import httpx
import numpy as np
import pytest
from PIL import Image

from backend.generation.openai_images import OpenAIImagesProvider, OpenAIImagesSettings
from backend.generation.provider import GenerationRequest, ProviderRefused, ProviderUnavailable
from backend.generation.runway import RunwayProvider, RunwaySettings

KEY = "sk-test-SECRET-0123456789"
IMAGE = GenerationRequest(type="image", prompt="a lighthouse at dawn", aspect_ratio="9:16", duration_sec=None)


def _png(size: tuple[int, int] = (1024, 1792)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (10, 120, 200)).save(buf, "PNG")
    return buf.getvalue()


class Fake:
    """A scripted API: each request pops the next answer (a Response, or an exception to raise)."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        assert isinstance(answer, httpx.Response)
        return answer


def _openai(fake: Fake, sleeps: list[float], **over: object) -> OpenAIImagesProvider:
    settings = OpenAIImagesSettings(
        base_url="https://images.test/v1", api_key=KEY, model="img-model", max_attempts=3, **over
    )
    return OpenAIImagesProvider(settings, transport=httpx.MockTransport(fake), sleep=sleeps.append)


def _ok_image() -> httpx.Response:
    return httpx.Response(200, json={"created": 1, "data": [{"b64_json": base64.b64encode(_png()).decode()}]})


def test_openai_success_sends_the_documented_request_and_writes_a_jpeg(tmp_path: Path) -> None:
    fake, sleeps = Fake(_ok_image()), []
    produced = _openai(fake, sleeps).generate(IMAGE, tmp_path)
    (req,) = fake.requests
    assert req.method == "POST" and str(req.url) == "https://images.test/v1/images/generations"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(req.content) == {
        "model": "img-model",
        "prompt": "a lighthouse at dawn",
        "n": 1,
        "size": "1024x1792",
        "response_format": "b64_json",
    }
    with Image.open(produced.path) as im:
        assert im.format == "JPEG" and im.size == (1080, 1920) == (produced.width, produced.height)
        assert np.abs(np.asarray(im, np.float32) - (10, 120, 200)).mean() < 6
    assert produced.mime_type == "image/jpeg" and sleeps == []


def test_openai_content_policy_refusal_is_provider_refused(tmp_path: Path) -> None:
    body = {
        "error": {
            "message": "Your request was rejected as a result of our safety system.",
            "type": "invalid_request_error",
            "code": "content_policy_violation",
        }
    }
    fake = Fake(httpx.Response(400, json=body))
    with pytest.raises(ProviderRefused) as err:
        _openai(fake, []).generate(IMAGE, tmp_path)
    assert "content policy" in err.value.user_message and "safety system" in err.value.user_message
    assert len(fake.requests) == 1  # never retried


def test_openai_retries_429_and_5xx_honouring_retry_after_then_succeeds(tmp_path: Path) -> None:
    sleeps: list[float] = []
    fake = Fake(
        httpx.Response(429, headers={"retry-after": "7"}, json={"error": {"message": "slow down"}}),
        httpx.Response(503, text="unavailable"),
        _ok_image(),
    )
    produced = _openai(fake, sleeps, backoff_s=0.5).generate(IMAGE, tmp_path)
    assert produced.path.exists() and len(fake.requests) == 3
    assert sleeps == [7.0, 1.0]  # Retry-After, then the backoff of the 2nd attempt (0.5 * 2)


def test_openai_persistent_5xx_is_unavailable_after_the_attempts(tmp_path: Path) -> None:
    fake = Fake(
        *[httpx.Response(502, text="bad gateway") for _ in range(2)],
        httpx.Response(429, headers={"retry-after": "30"}),
    )
    with pytest.raises(ProviderUnavailable) as err:
        _openai(fake, []).generate(IMAGE, tmp_path)
    assert len(fake.requests) == 3 and err.value.retry_after_s == 30.0
    assert "429" in err.value.user_message


def test_openai_timeouts_are_retried_then_unavailable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake = Fake(*[httpx.ReadTimeout("slow") for _ in range(3)])
    with pytest.raises(ProviderUnavailable, match="timed out"):
        _openai(fake, []).generate(IMAGE, tmp_path)
    assert len(fake.requests) == 3
    assert KEY not in caplog.text  # the key never reaches a log line
    assert KEY not in repr(OpenAIImagesSettings(api_key=KEY))


def test_openai_bad_key_is_unavailable_and_videos_are_refused(tmp_path: Path) -> None:
    fake = Fake(
        httpx.Response(401, json={"error": {"message": "Incorrect API key", "code": "invalid_api_key"}})
    )
    with pytest.raises(ProviderUnavailable, match="credentials"):
        _openai(fake, []).generate(IMAGE, tmp_path)
    video = GenerationRequest(type="video", prompt="x y z", aspect_ratio="9:16", duration_sec=5)
    with pytest.raises(ProviderRefused, match="images only"):
        _openai(Fake(), []).generate(video, tmp_path)


# ---- runway --------------------------------------------------------------------------------------------------


def _mp4(w: int = 128, h: int = 224, frames: int = 24) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        s = out.add_stream("libx264", rate=24)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        for i in range(frames):
            f = av.VideoFrame.from_image(Image.new("RGB", (w, h), (i * 8, 80, 160)))
            f.pts = i
            for p in s.encode(f):
                out.mux(p)
        for p in s.encode(None):
            out.mux(p)
    return buf.getvalue()


START = _png((640, 960))
VIDEO = GenerationRequest(
    type="video",
    prompt="the lighthouse beam sweeps",
    aspect_ratio="9:16",
    duration_sec=5,
    sources=(START,),
    seed=9,
)


def _runway(fake: Fake, sleeps: list[float]) -> RunwayProvider:
    settings = RunwaySettings(base_url="https://video.test/v1", api_key=KEY, max_attempts=2, poll_s=2)
    return RunwayProvider(settings, transport=httpx.MockTransport(fake), sleep=sleeps.append)


def test_runway_success_polls_the_task_and_downloads_without_the_key(tmp_path: Path) -> None:
    sleeps: list[float] = []
    fake = Fake(
        httpx.Response(200, json={"id": "task-1"}),
        httpx.Response(200, json={"id": "task-1", "status": "PENDING"}),
        httpx.Response(200, json={"id": "task-1", "status": "RUNNING", "progress": 0.5}),
        httpx.Response(
            200,
            json={"id": "task-1", "status": "SUCCEEDED", "output": ["https://cdn.test/out/v.mp4?sig=abc"]},
        ),
        httpx.Response(200, content=_mp4()),
    )
    seen: list[float] = []
    produced = _runway(fake, sleeps).generate(VIDEO, tmp_path, progress=seen.append)
    start, *polls, download = fake.requests
    assert str(start.url) == "https://video.test/v1/image_to_video"
    assert (
        start.headers["x-runway-version"] == "2024-11-06"
        and start.headers["authorization"] == f"Bearer {KEY}"
    )
    body = json.loads(start.content)
    assert body["ratio"] == "720:1280" and body["duration"] == 5 and body["promptText"] == VIDEO.prompt
    assert body["promptImage"][0]["position"] == "first"
    assert base64.b64decode(body["promptImage"][0]["uri"].split(",", 1)[1]) == START
    assert [str(p.url) for p in polls] == ["https://video.test/v1/tasks/task-1"] * 3
    assert str(download.url).startswith("https://cdn.test/") and "authorization" not in download.headers
    assert sleeps == [2, 2] and seen[-1] == 1.0
    assert (produced.width, produced.height, produced.mime_type) == (128, 224, "video/mp4")
    assert produced.duration_sec == pytest.approx(1.0, abs=0.05)


def test_runway_safety_failure_is_refused(tmp_path: Path) -> None:
    fake = Fake(
        httpx.Response(200, json={"id": "t"}),
        httpx.Response(
            200,
            json={"id": "t", "status": "FAILED", "failure": "moderation", "failureCode": "SAFETY.INPUT.TEXT"},
        ),
    )
    with pytest.raises(ProviderRefused, match="content policy"):
        _runway(fake, []).generate(VIDEO, tmp_path)


def test_runway_internal_failure_and_5xx_are_unavailable(tmp_path: Path) -> None:
    fake = Fake(
        httpx.Response(200, json={"id": "t"}),
        httpx.Response(200, json={"id": "t", "status": "FAILED", "failureCode": "INTERNAL.BAD_OUTPUT"}),
    )
    with pytest.raises(ProviderUnavailable):
        _runway(fake, []).generate(VIDEO, tmp_path)
    sleeps: list[float] = []
    fake = Fake(httpx.Response(500), httpx.Response(503, headers={"retry-after": "3"}))
    with pytest.raises(ProviderUnavailable) as err:
        _runway(fake, sleeps).generate(VIDEO, tmp_path)
    assert len(fake.requests) == 2 and err.value.retry_after_s == 3.0


def test_runway_refuses_what_it_cannot_make(tmp_path: Path) -> None:
    provider = _runway(Fake(), [])
    with pytest.raises(ProviderRefused, match="start image"):
        provider.generate(
            GenerationRequest(type="video", prompt="abc", aspect_ratio="1:1", duration_sec=5), tmp_path
        )
    with pytest.raises(ProviderRefused, match="5 or 10"):
        provider.generate(
            GenerationRequest(
                type="video", prompt="abc", aspect_ratio="1:1", duration_sec=15, sources=(START,)
            ),
            tmp_path,
        )
    with pytest.raises(ProviderRefused, match="videos only"):
        provider.generate(IMAGE, tmp_path)
