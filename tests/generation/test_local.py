"""The local provider's files, checked by decoding them: sizes, durations, codecs, determinism, brand, sources."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image, ImageDraw

from backend.generation.local import LocalProvider, LocalSettings
from backend.generation.provider import SIZES, Brand, GenerationRequest, Produced, ProviderRefused

PROMPT = "Announce our autumn workshop: learn to bake sourdough at home. Saturday at ten, all welcome."


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider(LocalSettings())


def _image_bytes(
    color: tuple[int, int, int],
    accent: tuple[int, int, int],
    size: tuple[int, int] = (1200, 900),
    fmt: str = "JPEG",
) -> bytes:
    im = Image.new("RGB", size, color)
    d = ImageDraw.Draw(im)
    w, h = size
    d.rectangle((w // 4, h // 4, 3 * w // 4, 3 * h // 4), fill=accent)
    d.ellipse((w // 2 - 80, h // 2 - 80, w // 2 + 80, h // 2 + 80), fill=(250, 250, 250))
    buf = io.BytesIO()
    im.save(buf, fmt, quality=95)
    return buf.getvalue()


def _cover(data: bytes, size: tuple[int, int]) -> np.ndarray:
    """What the start/end image looks like covering a frame of `size` (centre crop), as float RGB."""
    im = Image.open(io.BytesIO(data)).convert("RGB")
    w, h = size
    scale = max(w / im.width, h / im.height)
    im = im.resize((round(im.width * scale), round(im.height * scale)), Image.Resampling.BICUBIC)
    left, top = (im.width - w) // 2, (im.height - h) // 2
    return np.asarray(im.crop((left, top, left + w, top + h)), np.float32)


def _gen(provider: LocalProvider, out: Path, **kw) -> Produced:  # type: ignore[no-untyped-def]
    request = GenerationRequest(
        **{"type": "image", "prompt": PROMPT, "aspect_ratio": "9:16", "duration_sec": None, **kw}
    )
    return provider.generate(request, out)


# ---- images -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ratio", ["9:16", "1:1", "16:9"])
def test_image_has_the_size_of_its_aspect_ratio(provider: LocalProvider, tmp_path: Path, ratio: str) -> None:
    produced = _gen(provider, tmp_path, aspect_ratio=ratio)
    assert produced.path.parent == tmp_path and produced.mime_type == "image/jpeg"
    with Image.open(produced.path) as im:
        assert im.format == "JPEG"
        assert im.size == SIZES[ratio] == (produced.width, produced.height)
        arr = np.asarray(im.convert("L"), np.float32)
    assert arr.std() > 8  # a picture, not a blank


def test_image_is_deterministic_for_a_prompt_and_seed(provider: LocalProvider, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = _gen(provider, tmp_path / "a", seed=3)
    b = _gen(provider, tmp_path / "b", seed=3)
    assert a.path.read_bytes() == b.path.read_bytes()


def test_a_different_prompt_or_seed_gives_a_different_image(provider: LocalProvider, tmp_path: Path) -> None:
    base = np.asarray(Image.open(_gen(provider, tmp_path, seed=1).path), np.float32)
    other_prompt = np.asarray(
        Image.open(_gen(provider, tmp_path, prompt="A calm night of stars over the sea", seed=1).path),
        np.float32,
    )
    assert np.abs(base - other_prompt).mean() > 10


def _share_near(arr: np.ndarray, color: tuple[int, int, int], tol: float = 30) -> float:
    return float((np.abs(arr.astype(np.int16) - np.array(color, np.int16)).max(axis=2) <= tol).mean())


def test_brand_colour_dominates_and_logo_is_drawn(provider: LocalProvider, tmp_path: Path) -> None:
    logo = Image.new("RGBA", (300, 300), (0, 0, 0, 0))
    ImageDraw.Draw(logo).rectangle((0, 0, 299, 299), fill=(255, 0, 255, 255))  # pure magenta: in no palette
    buf = io.BytesIO()
    logo.save(buf, "PNG")
    brand = Brand(name="Green Oven", colors=("#0a7d4f",), logo=buf.getvalue())
    produced = _gen(provider, tmp_path, prompt="Our weekly update", brand=brand, aspect_ratio="1:1")
    arr = np.asarray(Image.open(produced.path).convert("RGB"))
    assert _share_near(arr, (0x0A, 0x7D, 0x4F), tol=40) > 0.3  # the brand colour is the background
    assert _share_near(arr, (255, 0, 255), tol=40) > 0.002  # the logo
    without = np.asarray(
        Image.open(_gen(provider, tmp_path, prompt="Our weekly update", aspect_ratio="1:1").path).convert(
            "RGB"
        )
    )
    assert _share_near(without, (255, 0, 255), tol=40) == 0


def test_colours_named_in_the_prompt_lead_the_palette(provider: LocalProvider, tmp_path: Path) -> None:
    produced = _gen(provider, tmp_path, prompt="A navy poster for our quarterly report")
    arr = np.asarray(Image.open(produced.path).convert("RGB"))
    assert _share_near(arr, (0x14, 0x21, 0x3D), tol=40) > 0.3


# ---- videos -----------------------------------------------------------------------------------------------


def _probe(path: Path) -> dict:  # type: ignore[type-arg]
    with av.open(str(path)) as c:
        assert "mp4" in c.format.name
        vs, aus = c.streams.video[0], c.streams.audio[0]
        info = {
            "vcodec": vs.codec_context.name,
            "acodec": aus.codec_context.name,
            "w": vs.width,
            "h": vs.height,
            "fps": float(vs.average_rate),
            "vdur": float(vs.duration * vs.time_base),
            "adur": float(aus.duration * aus.time_base),
            "rate": aus.rate,
            "channels": aus.channels,
            "pix_fmt": vs.codec_context.pix_fmt,
        }
        frames = []
        for f in c.decode(vs):
            frames.append(f)
        info["frames"] = len(frames)
        info["first"] = frames[0].to_ndarray(format="rgb24").astype(np.float32)
        info["last"] = frames[-1].to_ndarray(format="rgb24").astype(np.float32)
        info["mid"] = frames[len(frames) // 2].to_ndarray(format="rgb24").astype(np.float32)
        c.seek(0)
        samples = [f.to_ndarray() for f in c.decode(c.streams.audio[0])]
        info["audio_rms"] = float(np.sqrt(np.mean(np.concatenate(samples, axis=1) ** 2)))
    return info


START = _image_bytes((20, 60, 200), (240, 200, 30))
END = _image_bytes((200, 30, 60), (30, 200, 120), size=(900, 1400), fmt="PNG")


@pytest.fixture(scope="module")
def videos(provider: LocalProvider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple]]:
    out = tmp_path_factory.mktemp("videos")
    made: dict[str, tuple] = {}
    cases = {
        "prompt-9:16-5": dict(aspect_ratio="9:16", duration_sec=5, brand=Brand(name="Acme")),
        "start+end-16:9-10": dict(aspect_ratio="16:9", duration_sec=10, sources=(START, END)),
        "start-1:1-15": dict(aspect_ratio="1:1", duration_sec=15, sources=(START,)),
    }
    for name, kw in cases.items():
        d = out / name
        d.mkdir()
        seen: list[float] = []
        request = GenerationRequest(type="video", prompt=PROMPT, **kw)  # type: ignore[arg-type]
        produced = provider.generate(request, d, progress=seen.append)
        made[name] = (request, produced, _probe(produced.path), seen)
    yield made


@pytest.mark.parametrize("name", ["prompt-9:16-5", "start+end-16:9-10", "start-1:1-15"])
def test_video_is_h264_aac_mp4_of_the_exact_size_and_duration(videos: dict, name: str) -> None:  # type: ignore[type-arg]
    request, produced, info, _ = videos[name]
    w, h = SIZES[request.aspect_ratio]
    duration = request.duration_sec
    assert produced.mime_type == "video/mp4" and produced.path.suffix == ".mp4"
    assert (info["vcodec"], info["acodec"]) == ("h264", "aac")
    assert (info["w"], info["h"]) == (w, h) == (produced.width, produced.height)
    assert info["pix_fmt"] == "yuv420p"
    assert 24 <= info["fps"] <= 30  # TikTok: 23-60 fps
    frame = 1 / info["fps"]
    assert abs(info["vdur"] - duration) <= frame
    assert abs(info["frames"] / info["fps"] - duration) <= frame
    assert produced.duration_sec is not None and abs(produced.duration_sec - duration) <= frame
    # a soundtrack as long as the picture, and not silence
    assert info["rate"] == 48000 and info["channels"] == 2
    assert abs(info["adur"] - duration) <= frame
    assert info["audio_rms"] > 0.01


def test_video_reports_progress_up_to_done(videos: dict) -> None:  # type: ignore[type-arg]
    seen = videos["prompt-9:16-5"][3]
    assert seen[0] == 0.0 and seen[-1] == 1.0 and len(seen) > 5
    assert seen == sorted(seen)


def test_prompt_video_moves(videos: dict) -> None:  # type: ignore[type-arg]
    info = videos["prompt-9:16-5"][2]
    assert np.abs(info["first"] - info["mid"]).mean() > 3  # the text has come in, the background has moved
    assert info["mid"].std() > 8


def test_start_and_end_frames_open_and_close_the_video(videos: dict) -> None:  # type: ignore[type-arg]
    request, _, info, _ = videos["start+end-16:9-10"]
    size = SIZES[request.aspect_ratio]
    start, end = _cover(START, size), _cover(END, size)
    assert np.abs(info["first"] - start).mean() < 10
    assert np.abs(info["last"] - end).mean() < 10
    assert np.abs(info["first"] - end).mean() > 40  # and they are not the same picture


def test_a_start_frame_alone_opens_the_video(videos: dict) -> None:  # type: ignore[type-arg]
    request, _, info, _ = videos["start-1:1-15"]
    assert np.abs(info["first"] - _cover(START, SIZES[request.aspect_ratio])).mean() < 10


def test_video_is_deterministic(provider: LocalProvider, videos: dict, tmp_path: Path) -> None:  # type: ignore[type-arg]
    request, produced, _, _ = videos["prompt-9:16-5"]
    again = provider.generate(request, tmp_path)
    assert again.path.read_bytes() == produced.path.read_bytes()


def test_an_unreadable_source_is_refused(provider: LocalProvider, tmp_path: Path) -> None:
    request = GenerationRequest(
        type="video",
        prompt=PROMPT,
        aspect_ratio="9:16",
        duration_sec=5,
        sources=(b"this is not an image at all",),
    )
    with pytest.raises(ProviderRefused) as err:
        provider.generate(request, tmp_path)
    assert "start image" in err.value.user_message
    assert not list(tmp_path.iterdir())
