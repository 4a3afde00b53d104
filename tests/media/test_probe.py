"""backend.media.probe: videos are probed at ingestion (PyAV), never accepted on their magic bytes alone."""

from __future__ import annotations

import time

import pytest

from backend.errors import ApiError
from backend.media import probe
from backend.media.probe import probe_video
from tests.media import corpus


@pytest.mark.parametrize(
    ("container", "codec", "name"),
    [("mp4", "h264", "mov,mp4"), ("mov", "h264", "mov,mp4"), ("webm", "vp8", "matroska,webm")],
)
def test_a_video_is_read_whole(container, codec, name):
    info = probe_video(corpus.video(container))
    assert info.container.startswith(name)
    assert (info.width, info.height, info.video_codec) == (360, 640, codec)
    assert info.duration_s == pytest.approx(3.0, abs=0.05) and info.frame_rate == pytest.approx(24)
    assert info.audio_codec is None and info.streams == 1


def test_audio_and_a_path_are_read_too(tmp_path):
    path = tmp_path / "clip.mp4"
    path.write_bytes(corpus.vertical_video(seconds=3, width=540, height=960))
    info = probe_video(path)
    assert (info.width, info.height, info.audio_codec, info.streams) == (540, 960, "aac", 2)


@pytest.mark.parametrize("case", list(corpus.broken_videos()))
def test_a_file_that_does_not_decode_is_not_a_video(case):
    data = corpus.broken_videos()[case]
    with pytest.raises(ApiError) as err:
        probe_video(data)
    assert (err.value.status, err.value.code) == (400, "not_a_video")
    assert "cannot be decoded" in err.value.message and err.value.details[0]["reason"]


def test_a_cut_file_says_how_much_is_missing():
    with pytest.raises(ApiError, match=r"cut short: \d+ of its 72 frames"):
        probe_video(corpus.broken_videos()["cut in half, index first"])


def test_probing_is_bounded_in_time():
    started = time.monotonic()
    with pytest.raises(ApiError, match="longer than the time allowed"):
        probe_video(corpus.video("mp4"), deadline_s=0.000001)
    assert time.monotonic() - started < 5


def test_a_frame_over_the_pixel_bound_is_refused_before_decoding(monkeypatch):
    monkeypatch.setattr(probe, "MAX_VIDEO_PIXELS", 360 * 639)
    with pytest.raises(ApiError) as err:
        probe_video(corpus.video("mp4"))
    assert err.value.code == "media_too_large" and err.value.details[0]["limit"] == "pixels"
