"""Videos are probed at ingestion (PyAV: FFmpeg's libavformat and libavcodec), never accepted on their magic bytes
alone: a file cut short, one whose index (`moov`) is missing or unreadable, or a header followed by zeros was
accepted as `video/mp4` and failed later at the network, after the post was accepted and counted against a cap.

`probe_video(source)` opens the file, reads its container, streams, codecs, duration, dimensions and frame rate,
walks every packet of the video stream (demuxing reads the file, it decodes nothing) and decodes its first frame and
the frame of its last key frame. It answers a `VideoInfo`, or raises 400 `not_a_video` (a video signature whose
content cannot be decoded: the video counterpart of spec 7's `not_an_image`) saying what is wrong:

* no container can be read (truncated to its first bytes, `moov` renamed or lost, header + zeros, cut in half
  when the index comes last);
* no video stream, no duration, no dimensions;
* the index lists more frames than the file holds, or the packets stop well before the declared duration (cut
  short when the index comes first: `faststart`);
* the first frame or the last key frame does not decode (zeros, garbage in the sample data).

Bounded: at most `PROBE_SLOTS` probes at once per process; libavformat's header probing reads at most
`PROBE_BYTES` and analyses at most `ANALYZE_US`; every read is interrupted after the time left (PyAV's `timeout`,
libavformat's interrupt callback) and the whole probe stops at `deadline_s` (`SOCIALPUB_VIDEO_PROBE_TIMEOUT_S`);
a frame larger than `MAX_VIDEO_PIXELS` is refused before anything is decoded; one decoding thread. Callers run it in
a worker thread (the /v1 routes are synchronous: FastAPI runs them in its thread pool), never on an event loop.
"""

from __future__ import annotations

import io
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from backend.errors import ApiError

NOT_A_VIDEO = "not_a_video"
PROBE_SLOTS = 2
PROBE_BYTES = 5_000_000  # libavformat's probesize: bytes read to find the streams
ANALYZE_US = 5_000_000  # libavformat's analyzeduration: media time read to find the streams' parameters
MAX_VIDEO_PIXELS = 7680 * 4320  # 8K UHD: a frame is decoded only up to this size
DURATION_SLACK_S = 0.5  # the packets may end this much before the declared duration (last frame's own length)

_slots = threading.BoundedSemaphore(PROBE_SLOTS)


@dataclass(frozen=True)
class VideoInfo:
    """What a video file holds, as probed."""

    container: str  # libavformat's name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm"
    duration_s: float
    width: int  # as displayed: a rotated stream's sides swapped
    height: int
    video_codec: str  # e.g. h264, hevc, vp8, vp9, av1
    frame_rate: float | None
    audio_codec: str | None
    streams: int

    @property
    def aspect(self) -> float:
        return self.width / self.height


def not_a_video(why: str) -> ApiError:
    return ApiError(
        400,
        NOT_A_VIDEO,
        f"the file looks like a video but cannot be decoded: {why}; export it again (H.264 + AAC in MP4 is "
        "recommended) and upload the whole file",
        [{"reason": why}],
    )


def probe_video(source: Path | bytes, *, deadline_s: float = 30.0) -> VideoInfo:
    """Probe `source` (a file's path, or its bytes). Raises 400 `not_a_video`, or 400 `media_too_large` for a frame
    over MAX_VIDEO_PIXELS."""
    import av  # deferred: PyAV (FFmpeg's libraries) is loaded by the first video, not by every process

    with _slots:
        deadline = time.monotonic() + deadline_s
        opened: Any = str(source) if isinstance(source, Path) else io.BytesIO(source)
        try:
            container = av.open(
                opened,
                mode="r",
                options={"probesize": str(PROBE_BYTES), "analyzeduration": str(ANALYZE_US)},
                timeout=deadline_s,
            )
        except av.FFmpegError as exc:
            raise not_a_video(f"no container could be read ({_reason(exc)})") from None
        try:
            return _read(container, deadline)
        except av.FFmpegError as exc:
            raise not_a_video(f"its data is corrupt ({_reason(exc)})") from None
        finally:
            container.close()


def _reason(exc: Exception) -> str:
    text = getattr(exc, "strerror", None) or str(exc)
    return str(text).strip().rstrip(".").lower()[:200]


def _read(container: Any, deadline: float) -> VideoInfo:
    if not container.streams.video:
        raise not_a_video("it holds no video stream")
    stream = container.streams.video[0]
    codec = stream.codec_context
    width, height = int(codec.width or 0), int(codec.height or 0)
    if width <= 0 or height <= 0:
        raise not_a_video("its video stream has no dimensions")
    if width * height > MAX_VIDEO_PIXELS:
        raise ApiError(
            400,
            "media_too_large",
            f"the video's frames are {width}×{height}: at most {MAX_VIDEO_PIXELS:,} pixels a frame (8K UHD)",
            [{"limit": "pixels", "max": MAX_VIDEO_PIXELS, "width": width, "height": height}],
        )
    duration = _duration(container, stream)
    if duration is None or duration <= 0:
        raise not_a_video("its duration cannot be read")
    rate = stream.average_rate or stream.guessed_rate
    codec.thread_count = 1
    first = last_key = None
    rotation = 0
    count = 0
    end = 0.0
    for packet in container.demux(stream):
        if time.monotonic() > deadline:
            raise not_a_video("reading it took longer than the time allowed")
        if packet.size == 0:
            continue  # the demuxer's flush packet
        count += 1
        if first is None:
            first = packet
            rotation = _decodes(codec, packet, "its first frame")
        if packet.is_keyframe:
            last_key = packet
        if packet.pts is not None and packet.time_base is not None:
            end = max(end, float((packet.pts + (packet.duration or 0)) * packet.time_base))
    if first is None:
        raise not_a_video("it holds no video frame")
    if stream.frames and count < stream.frames:
        raise not_a_video(f"it is cut short: {count} of its {stream.frames} frames are there")
    if end and end + max(DURATION_SLACK_S, duration * 0.05) < duration:
        raise not_a_video(f"it is cut short: its frames end at {end:.1f} s of its {duration:.1f} s")
    if last_key is not None and last_key is not first:
        codec.flush_buffers()
        _decodes(codec, last_key, "its last key frame")
    if rotation % 180 == 90:  # a phone's portrait video is often stored landscape, shown rotated
        width, height = height, width
    audio = container.streams.audio[0].codec_context.name if container.streams.audio else None
    return VideoInfo(
        container=str(container.format.name),
        duration_s=round(duration, 3),
        width=width,
        height=height,
        video_codec=str(codec.name),
        frame_rate=round(float(rate), 3) if isinstance(rate, Fraction) and rate > 0 else None,
        audio_codec=str(audio) if audio else None,
        streams=len(container.streams),
    )


def _duration(container: Any, stream: Any) -> float | None:
    if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
        return float(stream.duration * stream.time_base)
    if container.duration is not None and container.duration > 0:
        return float(container.duration) / 1_000_000  # AV_TIME_BASE
    return None


def _decodes(codec: Any, packet: Any, what: str) -> int:
    """`packet` gives a frame (the decoder drained when it holds frames back); its display rotation in degrees."""
    import av  # deferred: see probe_video

    try:
        frames = list(codec.decode(packet)) or list(codec.decode(None))
    except av.FFmpegError as exc:
        raise not_a_video(f"{what} does not decode ({_reason(exc)})") from None
    if not frames:
        raise not_a_video(f"{what} does not decode")
    return int(getattr(frames[0], "rotation", 0) or 0)
