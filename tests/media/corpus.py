"""The test corpus, built in the tests themselves with Pillow and PyAV (no binary fixtures in the repo)."""

from __future__ import annotations

import functools
import io
import struct
import zlib
from fractions import Fraction

from PIL import Image

RED = (220, 20, 20)
BLUE = (20, 20, 220)

# Stored -> displayed transform is the orientation's; these undo it to build the stored pixels.
_INVERSE = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}


def canonical(width: int = 60, height: int = 40) -> Image.Image:
    """Blue with a red top-left quadrant: any wrong rotation or flip moves the red corner."""
    im = Image.new("RGB", (width, height), BLUE)
    im.paste(RED, (0, 0, width // 2, height // 2))
    return im


def encode(im: Image.Image, fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def jpeg(
    width: int = 60,
    height: int = 40,
    *,
    orientation: int | None = None,
    gps: bool = False,
    quality: int = 92,
    noise: bool = False,
) -> bytes:
    im = canonical(width, height) if not noise else Image.effect_noise((width, height), 40).convert("RGB")
    exif = Image.Exif()
    if orientation is not None:
        inverse = _INVERSE[orientation]
        if inverse is not None:
            im = im.transpose(inverse)
        exif[0x0112] = orientation
    if gps:
        exif[0x010F] = "TestCam"  # Make
        gps_ifd = exif.get_ifd(0x8825)
        gps_ifd[1] = "N"
        gps_ifd[2] = (48.0, 51.0, 29.0)
        gps_ifd[3] = "E"
        gps_ifd[4] = (2.0, 17.0, 40.0)
    return encode(im, "JPEG", quality=quality, exif=exif.tobytes())


def png_alpha(width: int = 40, height: int = 30) -> bytes:
    """Fully transparent left half, opaque red right half."""
    im = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    im.paste((255, 0, 0, 255), (width // 2, 0, width, height))
    return encode(im, "PNG")


def gif_two_frames() -> bytes:
    first = canonical()
    second = Image.new("RGB", first.size, BLUE)
    return encode(first, "GIF", save_all=True, append_images=[second], duration=100, loop=0)


def each_format() -> dict[str, bytes]:
    im = canonical()
    return {
        "jpeg": encode(im, "JPEG", quality=92),
        "png": encode(im, "PNG"),
        "webp": encode(im, "WEBP", quality=95),
        "gif": gif_two_frames(),
        "heif": encode(im, "HEIF", quality=95),
        "avif": encode(im, "AVIF", quality=95),
        "tiff": encode(im, "TIFF"),
    }


def truncated_jpeg() -> bytes:
    data = jpeg(400, 300, noise=True)
    return data[: len(data) // 2]


def bomb_png(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG whose header claims width x height pixels, with a tiny (invalid) body."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


@functools.cache
def video(container: str) -> bytes:
    """A small real video every network's video rules take (backend/networks/rules, VideoLimits): 'mp4' (H.264),
    'mov' (H.264 in QuickTime) or 'webm' (VP8); 360×640 (vertical: a YouTube Short), 24 frames a second, 3 s
    (Reels and LinkedIn want 3 s or more). A few kB: flat colours. Made once per container."""
    import av

    codec = {"mp4": "libx264", "mov": "libx264", "webm": "libvpx"}[container]
    fmt = {"mp4": "mp4", "mov": "mov", "webm": "webm"}[container]
    width, height, fps, frames = 360, 640, 24, 72
    buf = io.BytesIO()
    with av.open(buf, mode="w", format=fmt) as out:
        fast = {"deadline": "realtime", "cpu-used": "8"} if codec == "libvpx" else {"preset": "ultrafast"}
        stream = out.add_stream(codec, rate=fps, options=fast)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = Fraction(1, fps)
        for i in range(frames):
            shade = (i * 3, 100, 200 - i * 2)
            frame = av.VideoFrame.from_image(Image.new("RGB", (width, height), shade))
            frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buf.getvalue()


def tiny_video() -> bytes:
    """64×48, 10 frames a second, 0.6 s of H.264 in MP4: a real video no network's rules take (too small, too
    short, too slow)."""
    import av

    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.time_base = Fraction(1, 10)
        for i in range(6):
            frame = av.VideoFrame.from_image(Image.new("RGB", (64, 48), (i * 40, 100, 200 - i * 30)))
            frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buf.getvalue()


def vertical_video(seconds: int = 4, width: int = 540, height: int = 960, fps: int = 24) -> bytes:
    """A real vertical clip every network takes: H.264 + AAC stereo in MP4, `seconds` long (Reels and Shorts
    want 3 s or more), a moving block over a colour ramp and a 440 Hz tone."""
    import av
    import numpy as np

    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        v = out.add_stream("libx264", rate=fps)
        v.width, v.height, v.pix_fmt = width, height, "yuv420p"
        a = out.add_stream("aac", rate=44100)
        a.layout = "stereo"
        for i in range(fps * seconds):
            im = Image.new("RGB", (width, height), (20 + 2 * i % 200, 60, 140))
            im.paste((250, 200, 40), (80, 80 + 6 * i % (height - 200), 280, 280 + 6 * i % (height - 200)))
            frame = av.VideoFrame.from_image(im)
            frame.pts, frame.time_base = i, Fraction(1, fps)
            for packet in v.encode(frame):
                out.mux(packet)
        for packet in v.encode(None):
            out.mux(packet)
        n = 1024
        for k in range(44100 * seconds // n):
            t = (np.arange(n) + k * n) / 44100
            tone = (0.2 * np.sin(2 * np.pi * 440 * t)).astype("float32")
            af = av.AudioFrame.from_ndarray(np.stack([tone, tone]), format="fltp", layout="stereo")
            af.sample_rate, af.pts = 44100, k * n
            for packet in a.encode(af):
                out.mux(packet)
        for packet in a.encode(None):
            out.mux(packet)
    return buf.getvalue()


def faststart(data: bytes) -> bytes:
    """The same MP4 (video stream only) with its index (`moov`) first, as a streaming-ready export writes it."""
    import tempfile
    from pathlib import Path

    import av

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fast.mp4"
        with (
            av.open(io.BytesIO(data)) as src,
            av.open(str(path), "w", format="mp4", options={"movflags": "faststart"}) as out,
        ):
            ins = src.streams.video[0]
            copy = out.add_stream_from_template(ins)
            for packet in src.demux(ins):
                if packet.dts is None:
                    continue
                packet.stream = copy
                out.mux(packet)
        return path.read_bytes()


@functools.cache
def broken_videos() -> dict[str, bytes]:
    """MP4s that start right and do not decode (issue 30 item 4): each accepted as video/mp4 before probing."""
    good = video("mp4")
    fast = faststart(good)
    mdat = fast.index(b"mdat") + 4
    return {
        "truncated to 1000 bytes": good[:1000],
        "cut in half": good[: len(good) // 2],
        "cut in half, index first": fast[: len(fast) // 2],
        "moov renamed": good.replace(b"moov", b"moox"),
        "header + 1 MB of zeros": good[:64] + bytes(1 << 20),
        "index + zeros for the frames": fast[:mdat] + bytes(len(fast) - mdat),
    }
