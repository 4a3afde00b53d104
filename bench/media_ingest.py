"""Benchmark: the image pipeline against the naive Pillow pipeline, and memory while ingesting a video by URL.

1. A 12-megapixel JPEG photo (4000 x 3000, EXIF orientation 6) and a 4000 x 3000 PNG go through our
   pipeline (backend.media.images.process_image) and through the naive one (full decode, exif_transpose,
   thumbnail with LANCZOS, save q90), alternately, in the same run. Reported: the median time of each and
   the median ratio naive / ours. Goal: at least 3x on the JPEG.
2. A 128 MB video (a real MP4 whose `mdat` is padded) is ingested by URL (backend.services.media.ingest_url: SSRF
   checks, streaming to a temporary file, the PyAV probe, local storage, row in a throwaway SQLite store) from a server on 127.0.0.1 running in
   this process, while the ingestion runs in a child process whose peak RSS growth is measured.
   Goal: growth at most 32 MB.

Run: `python bench/media_ingest.py` (also part of `make bench`). Results: bench/results/media_ingest.json.
"""

from __future__ import annotations

import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results" / "media_ingest.json"
RUNS = 7
VIDEO_BYTES = 128 * 1024 * 1024
MB = 1024 * 1024


def photo_like(width: int, height: int):  # type: ignore[no-untyped-def]
    """Smooth gradients with fine noise and hard edges: compresses like a photo, unlike pure noise."""
    from PIL import Image, ImageDraw, ImageFilter

    base = Image.linear_gradient("L").resize((width, height))
    noise = Image.effect_noise((width, height), 30)
    r = Image.blend(base, noise, 0.25)
    g = Image.blend(base.rotate(90, expand=False).resize((width, height)), noise, 0.2)
    b = Image.effect_mandelbrot((width, height), (-2.0, -1.2, 0.8, 1.2), 60)
    im = Image.merge("RGB", (r, g, b)).filter(ImageFilter.GaussianBlur(1))
    draw = ImageDraw.Draw(im)
    for i in range(0, width, 250):
        draw.line([(i, 0), (width - i, height)], fill=(240, 240, 240), width=6)
    return im


def make_inputs() -> dict[str, tuple[str, bytes]]:
    from PIL import Image

    im = photo_like(4000, 3000)
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x010F] = "BenchCam"
    jpg = io.BytesIO()
    im.save(jpg, "JPEG", quality=92, exif=exif.tobytes())
    png = io.BytesIO()
    im.save(png, "PNG", compress_level=6)
    return {"jpeg_12mp": ("jpeg", jpg.getvalue()), "png_4000x3000": ("png", png.getvalue())}


def bench_images() -> dict[str, object]:
    from backend.media.images import process_image
    from tests.support.images import naive_pipeline

    out: dict[str, object] = {}
    for name, (fmt, data) in make_inputs().items():
        ours: list[float] = []
        naive: list[float] = []
        ratios: list[float] = []
        process_image(data, fmt)  # warm-up (codecs, caches)
        naive_pipeline(data)
        for _ in range(RUNS):
            t0 = time.perf_counter()
            result = process_image(data, fmt)
            t1 = time.perf_counter()
            naive_pipeline(data)
            t2 = time.perf_counter()
            ours.append(t1 - t0)
            naive.append(t2 - t1)
            ratios.append((t2 - t1) / (t1 - t0))
        out[name] = {
            "input_bytes": len(data),
            "output": [result.width, result.height],
            "ours_median_s": round(statistics.median(ours), 4),
            "naive_median_s": round(statistics.median(naive), 4),
            "median_ratio": round(statistics.median(ratios), 2),
            "runs": RUNS,
            "ratio_per_run": [round(r, 2) for r in ratios],
            "ours_per_run_s": [round(t, 4) for t in ours],
            "naive_per_run_s": [round(t, 4) for t in naive],
        }
        print(
            f"{name:>14}: ours {statistics.median(ours) * 1000:7.1f} ms, naive {statistics.median(naive) * 1000:7.1f} ms,"
            f" median ratio {statistics.median(ratios):.2f}x"
        )
    return out


# ---------------------------------------------------------------- video by URL, peak RSS in a child process


def small_mp4() -> bytes:
    """A real 3 s H.264 MP4 (360 x 640, 24 fps), as every network takes: ingestion probes videos (PyAV)."""
    from fractions import Fraction

    import av
    from PIL import Image

    buf = io.BytesIO()
    with av.open(buf, mode="w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=24, options={"preset": "ultrafast"})
        stream.width, stream.height, stream.pix_fmt = 360, 640, "yuv420p"
        stream.time_base = Fraction(1, 24)
        for i in range(72):
            frame = av.VideoFrame.from_image(Image.new("RGB", (360, 640), (i * 3, 90, 200)))
            frame.pts = i
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buf.getvalue()


def padded_mp4(total: int) -> tuple[bytes, int, bytes]:
    """A real MP4 of `total` bytes, as (head, zeros, tail): small_mp4() whose `mdat` box carries zeros after its
    samples (the index points at the samples only, so the file decodes whole), then its `moov` index."""
    data = small_mp4()
    at = data.index(b"mdat") - 4
    size = int.from_bytes(data[at : at + 4], "big")
    padding = total - len(data)
    head = data[:at] + (size + padding).to_bytes(4, "big") + data[at + 4 : at + size]
    return head, padding, data[at + size :]


class _VideoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    parts: tuple[bytes, int, bytes] = (b"", 0, b"")

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        head, padding, tail = self.parts
        self.send_response(200)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Content-Length", str(len(head) + padding + len(tail)))
        self.end_headers()
        chunk = bytes(MB)
        try:
            self.wfile.write(head)
            sent = 0
            while sent < padding:
                n = min(len(chunk), padding - sent)
                self.wfile.write(chunk[:n])
                sent += n
            self.wfile.write(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child(url: str, data_dir: str) -> None:
    """Ingest `url` and print JSON with the RSS growth (run in a fresh process)."""
    from backend.config import Settings
    from backend.services import bootstrap, security
    from backend.services import media as media_service
    from backend.store.db import init_database

    settings = Settings(data_dir=Path(data_dir), allow_private_urls=True, fetch_total_timeout_s=300)
    init_database(settings)
    security.ensure_secret(settings)
    ws = bootstrap.create_workspace(
        settings, "bench", "bench@example.test", "correct horse battery"
    ).workspace_id
    media_service.ingest_bytes(settings, ws, small_mp4())  # warm-up: the video pipeline (PyAV) loaded
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the peak (VmHWM) to the current RSS
        reset = True
    except OSError:
        reset = False
    before = _rss_kb("VmRSS")
    t0 = time.perf_counter()
    media = media_service.ingest_url(settings, ws, url)
    elapsed = time.perf_counter() - t0
    peak = _rss_kb("VmHWM")
    print(
        json.dumps(
            {
                "rss_before_kb": before,
                "peak_kb": peak,
                "growth_mb": round((peak - before) / 1024, 1),
                "peak_reset": reset,
                "bytes": media.bytes,
                "seconds": round(elapsed, 2),
            }
        )
    )


def bench_video() -> dict[str, object]:
    _VideoHandler.parts = padded_mp4(VIDEO_BYTES)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _VideoHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"http://127.0.0.1:{httpd.server_address[1]}/video.mp4"
            env = {**os.environ, "SOCIALPUB_LOG_LEVEL": "WARNING"}
            proc = subprocess.run(
                [sys.executable, __file__, "--child", url, tmp],
                capture_output=True,
                text=True,
                env=env,
                timeout=600,
                check=False,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"child failed: {proc.stderr[-2000:]}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        httpd.shutdown()
        httpd.server_close()
    print(
        f"  video by URL: {result['bytes'] / MB:.0f} MB in {result['seconds']} s, peak RSS growth "
        f"{result['growth_mb']} MB"
    )
    return result


def main() -> int:
    print("media_ingest: image pipeline vs naive Pillow, and RSS while ingesting a 128 MB video by URL")
    images = bench_images()
    video = bench_video()
    jpeg_ratio = images["jpeg_12mp"]["median_ratio"]  # type: ignore[index]
    goals = {
        "jpeg_at_least_3x": jpeg_ratio >= 3.0,
        "video_rss_growth_at_most_32mb": video["growth_mb"] <= 32,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    from PIL import __version__ as pillow_version

    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "media_ingest",
                "commit": subprocess.run(
                    ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
                ).stdout.strip(),
                "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "machine": {
                    "python": platform.python_version(),
                    "pillow": pillow_version,
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                },
                "images": images,
                "video_by_url": video,
                "goals": goals,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"results written to {RESULTS.relative_to(ROOT)}; goals: {goals}")
    return 0 if all(goals.values()) else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
