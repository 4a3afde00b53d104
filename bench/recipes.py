"""Recipes (issue 14): plan and apply 1,000 entries sharing 20 media files; watch's reaction to a file write.

    .venv/bin/python bench/recipes.py [--entries 1000] [--media 20] [--runs 3] [--writes 20]

A fresh embedded data dir (SQLite, sandbox accounts, a paid plan so the free publications do not stop it) in a
temp dir, and a recipe folder of 10 files: 8 of single posts (`at`) and 2 daily series, 1,000 occurrences in all,
each with one of 20 JPEG files (1,200 x 900) and two targets. Every figure is the wall time of the real
`socialpub` command in a fresh process (what a user or cron waits on: start-up, the embedded backend's start,
reading the folder, the API calls), and the phases are timed in-process for the breakdown:

- plan, nothing applied yet (1,000 to create)            goal <= 2 s
- apply on a fresh data dir (20 uploads, 1,000 creates)  goal <= 20 s
- plan and apply again, nothing changed (1,000 unchanged)
- watch: `socialpub recipes watch` on the applied folder; 20 times a new YAML file with one post and an image
  is written (10 naming an image already uploaded, 10 a new image written just before), and the reaction is the
  time from the write to the watcher's log line saying the post was created (the line is printed once
  POST /v1/posts has answered)                            goal p95 <= 1 s

Results: bench/results/recipes.json (the commit, every run, the medians, the load average before and after).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.support.engine import machine, percentile  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "recipes.json"
SOCIALPUB = str(Path(sys.executable).with_name("socialpub"))
GOALS = {"plan_s": 2.0, "apply_s": 20.0, "reaction_p95_s": 1.0}


def jpeg(n: int, size: tuple[int, int] = (1200, 900)) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", size, ((n * 37) % 256, (n * 91) % 256, (n * 53) % 256))
    draw = ImageDraw.Draw(im)
    for i in range(0, size[0], 40):
        draw.line([(i, 0), (size[0] - i, size[1])], fill=((i + n * 7) % 256, 80, 160), width=3)
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=85)
    return buf.getvalue()


def make_folder(folder: Path, entries: int, media: int) -> None:
    (folder / "media").mkdir(parents=True)
    for n in range(media):
        (folder / "media" / f"img{n:02d}.jpg").write_bytes(jpeg(n))
    per_file = entries // 10
    made = 0
    for f in range(10):
        lines = ["timezone: Europe/Paris", "defaults:", "  targets: [facebook, linkedin]", "posts:"]
        if f < 8:
            for i in range(per_file):
                n = made + i
                day, minute = divmod(n, 48)
                lines += [
                    f"  - id: post-{n:04d}",
                    f'    content: "Bench post {n}: {{weekday}} news from file {f}"',
                    f"    media: media/img{n % media:02d}.jpg",
                    f'    at: "2027-{1 + day // 28:02d}-{1 + day % 28:02d} {8 + minute // 4:02d}:{(minute % 4) * 15:02d}"',
                ]
        else:
            lines += [
                f"  - id: daily-{f}",
                f'    content: "Daily tip {{n}} of series {f}"',
                f"    media: media/img{f:02d}.jpg",
                "    repeat:",
                "      every: day",
                f'      times: ["{7 + f}:30"]',
                '      start: "2027-01-01"',
                f"      count: {per_file}",
            ]
        made += per_file
        (folder / f"file{f}.yaml").write_text("\n".join(lines) + "\n")


def env_for(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env |= {
        "SOCIALPUB_DATA_DIR": str(tmp / "data"),
        "SOCIALPUB_CONFIG": str(tmp / "cfg" / "config.yaml"),
        "SOCIALPUB_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        "TZ": "Europe/Paris",
    }
    return env


def run(
    env: dict[str, str], *args: str, check: bool = True
) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    done = subprocess.run([SOCIALPUB, *args], env=env, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - t
    if check and done.returncode != 0:
        raise SystemExit(f"socialpub {' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return took, done


def init(env: dict[str, str]) -> None:
    run(env, "init", "--sandbox", "--password", "bench password 123")
    run(env, "admin", "plan", "GROWTH", "--status", "active", "--period-end", "2030-01-01T00:00:00Z")


def phases(env: dict[str, str], folder: Path) -> dict[str, float]:
    """load, list the set's posts, plan: timed in a child process (the embedded backend's own process)."""
    code = r"""
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from recipes.load import load
from recipes.media import Hasher, MediaState, MediaStore, state_path
from recipes.plan import plan, Scope
from recipes.runner import set_posts
from socialpub_tui.client import connect
from socialpub_tui.client.config import resolve_profile
from datetime import UTC, datetime
t1 = time.perf_counter()
client = connect(worker=False)
t2 = time.perf_counter()
loaded = load(Path(sys.argv[1]))
t3 = time.perf_counter()
posts = set_posts(client, loaded.set_name)
t4 = time.perf_counter()
store = MediaStore(client, MediaState.load(state_path(resolve_profile())), Hasher())
p = plan(loaded, posts, datetime.now(UTC), media_hash=store.hasher, url_hash=store.state.url_hashes())
t5 = time.perf_counter()
client.close()
print(json.dumps({"imports_s": t1 - t0, "backend_start_s": t2 - t1, "load_s": t3 - t2, "list_posts_s": t4 - t3,
                  "plan_s": t5 - t4, "posts": len(posts), "create": len(p.create), "unchanged": len(p.unchanged)}))
"""
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder)], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in json.loads(done.stdout).items()}


def bench_plan_apply(entries: int, media: int, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "plan_fresh_s": [],
        "apply_s": [],
        "plan_applied_s": [],
        "apply_again_s": [],
        "phases_fresh": [],
        "phases_applied": [],
        "apply_summary": None,
    }
    for r in range(runs):
        with tempfile.TemporaryDirectory() as tmp_:
            tmp = Path(tmp_)
            env = env_for(tmp)
            folder = tmp / "content"
            make_folder(folder, entries, media)
            init(env)
            took, done = run(env, "recipes", "plan", str(folder), "--json")
            plan = json.loads(done.stdout)
            assert len(plan["create"]) == entries, len(plan["create"])
            out["plan_fresh_s"].append(round(took, 3))
            out["phases_fresh"].append(phases(env, folder))
            took, done = run(env, "recipes", "apply", str(folder), "--json")
            summary = json.loads(done.stdout)["summary"]
            assert summary["created"] == entries and summary["mediaUploaded"] == media, summary
            out["apply_s"].append(round(took, 3))
            out["apply_summary"] = summary
            took, done = run(env, "recipes", "plan", str(folder), "--json")
            assert len(json.loads(done.stdout)["unchanged"]) == entries
            out["plan_applied_s"].append(round(took, 3))
            out["phases_applied"].append(phases(env, folder))
            took, done = run(env, "recipes", "apply", str(folder), "--json")
            again = json.loads(done.stdout)["summary"]
            assert again["created"] == 0 and again["mediaUploaded"] == 0, again
            out["apply_again_s"].append(round(took, 3))
            print(
                f"run {r + 1}: plan {out['plan_fresh_s'][-1]} s, apply {out['apply_s'][-1]} s, plan (applied) "
                f"{out['plan_applied_s'][-1]} s, apply again {out['apply_again_s'][-1]} s",
                flush=True,
            )
    for key in ("plan_fresh_s", "apply_s", "plan_applied_s", "apply_again_s"):
        out[key.replace("_s", "_median_s")] = round(statistics.median(out[key]), 3)
    return out


def bench_watch(entries: int, media: int, writes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        env = env_for(tmp)
        folder = tmp / "content"
        make_folder(folder, entries, media)
        init(env)
        run(env, "recipes", "apply", str(folder))
        proc = subprocess.Popen(
            [SOCIALPUB, "recipes", "watch", str(folder)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        lines: queue.Queue[tuple[float, str]] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put((time.perf_counter(), line.rstrip("\n")))

        threading.Thread(target=pump, daemon=True).start()

        def wait_for(text: str, timeout: float = 60.0) -> tuple[float, str]:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                try:
                    at, line = lines.get(timeout=0.5)
                except queue.Empty:
                    continue
                if text in line:
                    return at, line
                if "Error" in line or "FAILED" in line or "invalid" in line:
                    print("watch:", line, flush=True)
            raise SystemExit(f"watch never printed {text!r}")

        reactions: list[dict[str, Any]] = []
        try:
            wait_for("watching ")
            time.sleep(1.0)
            for n in range(writes):
                fresh = n % 2 == 1
                image = f"media/new{n:02d}.jpg" if fresh else f"media/img{n % media:02d}.jpg"
                text = (
                    "timezone: Europe/Paris\nposts:\n"
                    f'  - id: dropped-{n}\n    content: "Dropped in #{n}"\n    media: {image}\n'
                    f'    targets: [facebook, linkedin]\n    at: "2027-03-{1 + n:02d} 10:00"\n'
                )
                picture = jpeg(100 + n, (1080, 1080)) if fresh else b""
                t0 = time.perf_counter()
                if fresh:
                    (folder / image).write_bytes(picture)
                (folder / f"dropped-{n}.yaml").write_text(text)
                at, line = wait_for(f"created dropped-{n}.yaml#dropped-{n}")
                reactions.append({"write": n, "new_image": fresh, "reaction_s": round(at - t0, 3)})
                print(
                    f"write {n}: {reactions[-1]['reaction_s']} s{' (new image)' if fresh else ''}", flush=True
                )
                time.sleep(0.5)
        finally:
            proc.send_signal(2)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        values = [r["reaction_s"] for r in reactions]
        return {
            "writes": reactions,
            "reaction_median_s": round(statistics.median(values), 3),
            "reaction_p95_s": round(percentile(values, 95), 3),
            "reaction_max_s": round(max(values), 3),
            "reaction_shared_image_median_s": round(
                statistics.median([r["reaction_s"] for r in reactions if not r["new_image"]]), 3
            ),
            "reaction_new_image_median_s": round(
                statistics.median([r["reaction_s"] for r in reactions if r["new_image"]]), 3
            ),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--media", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--writes", type=int, default=20)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    info = machine()
    plan_apply = bench_plan_apply(args.entries, args.media, args.runs)
    watch = bench_watch(args.entries, args.media, args.writes)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    figures = {
        "plan_s": plan_apply["plan_fresh_median_s"],
        "apply_s": plan_apply["apply_median_s"],
        "reaction_p95_s": watch["reaction_p95_s"],
    }
    met = {k: figures[k] <= GOALS[k] for k in GOALS}
    out = {
        "benchmark": "recipes",
        "commit": sha,
        "machine": info,
        "loadavg_at_end": list(os.getloadavg()),
        "entries": args.entries,
        "media": args.media,
        "goals": GOALS,
        "figures": figures,
        "goal_met": met,
        "plan_apply": plan_apply,
        "watch": watch,
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    for k, v in figures.items():
        print(f"recipes: {k} {v} (goal <= {GOALS[k]:g}: {'met' if met[k] else 'NOT met'})")


if __name__ == "__main__":
    main()
