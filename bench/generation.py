"""The local generation provider (issue 15): a 15 s video at 1080 x 1920, wall time as a fraction of its duration.

Each run is a full `LocalProvider.generate` in this process (design, layers, frames, soundtrack, H.264 + AAC
encoding, MP4 on disk) of the same prompt and brand; the figure quoted is the median of the runs' wall time over
the video's 15 s. CPU time (this process and its encoder threads) and the load average around each run are
recorded beside it, since the machine is shared. One more pass times the parts: the scene's layers, their
conversion to Y'CbCr planes, drawing every frame (no encoding), the soundtrack; encoding is the rest. Also measured,
for context: the same video from a start and an end frame (zoom and transition: the costlier path), and a still
image at 1080 x 1920.

    .venv/bin/python bench/generation.py [--runs 5] [--preset superfast] [--fps 25]

Goal: <= 0.5x real time (7.5 s for the 15 s video) on the shared 2-core machine. Results:
bench/results/generation.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results" / "generation.json"
GOAL_RATIO = 0.5
DURATION = 15
PROMPT = (
    "Announce our summer sale: 30% off all sneakers until Sunday. Free shipping on every order. "
    "Find your next pair in store or online."
)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _logo() -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGBA", (256, 256), (0, 0, 0, 0))
    ImageDraw.Draw(im).ellipse((16, 16, 240, 240), fill=(255, 255, 255, 255))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def _photo(seed: int) -> bytes:
    """A 1600 x 1200 JPEG with detail (Pillow's Mandelbrot), like a photo to encode."""
    from PIL import Image

    im = Image.effect_mandelbrot((1600, 1200), (-2.0 + seed * 0.3, -1.2, 1.0, 1.2), 60).convert("RGB")
    im = Image.merge(
        "RGB",
        (
            im.getchannel(0),
            im.getchannel(0).point(lambda v: (v * 3 + seed * 80) % 256),
            im.getchannel(0).point(lambda v: 255 - v),
        ),
    )
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=90)
    return buf.getvalue()


def timed(provider: Any, request: Any, out_dir: Path) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    cpu0, t0 = _cpu(), time.perf_counter()
    produced = provider.generate(request, out_dir)
    wall = time.perf_counter() - t0
    cpu = _cpu() - cpu0
    out = {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "bytes": produced.path.stat().st_size,
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    if produced.duration_sec:
        out["ratio"] = round(wall / produced.duration_sec, 3)
    produced.path.unlink()
    return out


def parts(request: Any, settings: Any) -> dict[str, float]:
    """Where one generation's time goes (wall seconds), measured part by part."""
    from backend.generation.local import scene as scenes
    from backend.generation.local import sound, video
    from backend.generation.local.design import design_for

    out: dict[str, float] = {}
    t = time.perf_counter()
    design = design_for(request.prompt, request.brand, request.seed)
    scene = scenes.build(design, request.brand, request.size)
    out["design_and_layers_s"] = time.perf_counter() - t
    t = time.perf_counter()
    draw = video.scene_drawer(scene, DURATION)
    out["layers_to_yuv_s"] = time.perf_counter() - t
    frame = video.Frame(*request.size)
    n = DURATION * settings.fps
    t = time.perf_counter()
    for i in range(n):
        draw(frame, i / settings.fps)
    out["draw_frames_s"] = time.perf_counter() - t
    t = time.perf_counter()
    sound.soundtrack(design, DURATION)
    out["soundtrack_s"] = time.perf_counter() - t
    return {k: round(v, 3) for k, v in out.items()}


def main() -> int:
    from backend.generation.local import LocalProvider, LocalSettings
    from backend.generation.provider import Brand, GenerationRequest
    from bench.support.engine import machine

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--preset", default=None, help="x264 preset (default: the provider's setting)")
    ap.add_argument("--fps", type=int, default=None)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    over = {k: v for k, v in (("preset", args.preset), ("fps", args.fps)) if v is not None}
    settings = LocalSettings(**over)
    provider = LocalProvider(settings)
    brand = Brand(
        name="Acme Sneakers", colors=("#d7263d", "#ffd23f"), logo=_logo(), extra={"tagline": "Run further"}
    )
    video_req = GenerationRequest(
        type="video", prompt=PROMPT, aspect_ratio="9:16", duration_sec=DURATION, brand=brand, seed=7
    )
    sources_req = GenerationRequest(
        type="video",
        prompt="Before and after: our new store front",
        aspect_ratio="9:16",
        duration_sec=DURATION,
        sources=(_photo(0), _photo(1)),
        brand=brand,
        seed=7,
    )
    image_req = GenerationRequest(
        type="image", prompt=PROMPT, aspect_ratio="9:16", duration_sec=None, brand=brand, seed=7
    )
    start_machine = machine()
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        timed(provider, video_req, out_dir)  # warm-up: imports, fonts, caches
        runs = []
        for i in range(args.runs):
            runs.append(timed(provider, video_req, out_dir))
            print(f"run {i + 1}: {runs[-1]}", flush=True)
        source_runs = [timed(provider, sources_req, out_dir) for _ in range(max(1, args.runs // 2))]
        print(f"start+end frames: {source_runs}", flush=True)
        image_runs = [timed(provider, image_req, out_dir) for _ in range(args.runs)]
        where = parts(video_req, settings)
    median_wall = statistics.median(r["wall_s"] for r in runs)
    median_ratio = round(median_wall / DURATION, 3)
    where["encode_and_mux_s_by_difference"] = round(median_wall - sum(where.values()), 3)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    out = {
        "benchmark": "generation",
        "commit": sha,
        "machine": start_machine,
        "loadavg_at_end": list(os.getloadavg()),
        "settings": settings.model_dump(mode="json"),
        "video": {
            "size": "1080x1920",
            "duration_s": DURATION,
            "runs": runs,
            "median_wall_s": median_wall,
            "median_ratio": median_ratio,
            "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
        },
        "video_from_start_and_end_frames": {
            "runs": source_runs,
            "median_ratio": statistics.median(r["ratio"] for r in source_runs),
        },
        "image_1080x1920": {
            "runs": image_runs,
            "median_wall_s": statistics.median(r["wall_s"] for r in image_runs),
        },
        "parts_one_run": where,
        "goal_ratio": GOAL_RATIO,
        "goal_met": median_ratio <= GOAL_RATIO,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"parts: {where}")
    print(
        f"generation: 15 s 1080x1920 video in median {median_wall:.2f} s = {median_ratio:.2f}x real time "
        f"(CPU {out['video']['median_cpu_s']:.2f} s; load {start_machine['loadavg_at_start'][0]:.2f} at start) "
        f"— goal <= {GOAL_RATIO}x: {'met' if out['goal_met'] else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
