"""`socialpub --help` start-up time: median wall time of N fresh processes. Goal: <= 250 ms.

    .venv/bin/python bench/cli_startup.py [--runs 15]

Writes bench/results/cli_startup.json: the commit it ran on, every run's figure and the median (the figure
quoted). Also times `socialpub posts --help` (loads one command module), `socialpub init --help` (loads the
backend's operator group) and `python -c pass` (the interpreter's own floor) for context.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MS = 250.0


def measure(cmd: list[str], runs: int) -> dict[str, float]:
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        samples.append((time.perf_counter() - t) * 1000)
    return {
        "median_ms": round(statistics.median(samples), 1),
        "min_ms": round(min(samples), 1),
        "max_ms": round(max(samples), 1),
        "runs_ms": [round(x, 1) for x in samples],
    }


def commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("socialpub"))
    results = {
        "socialpub --help": measure([exe, "--help"], args.runs),
        "socialpub posts --help": measure([exe, "posts", "--help"], args.runs),
        "socialpub init --help": measure([exe, "init", "--help"], args.runs),
        "python -c pass": measure([sys.executable, "-c", "pass"], args.runs),
    }
    median = results["socialpub --help"]["median_ms"]
    out = {
        "benchmark": "cli_startup",
        "commit": commit(),
        "runs": args.runs,
        "goal_ms": GOAL_MS,
        "ok": median <= GOAL_MS,
        "results": results,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = ROOT / "bench" / "results" / "cli_startup.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    for name, r in results.items():
        print(f"{name:<26} median {r['median_ms']:7.1f} ms  (min {r['min_ms']}, max {r['max_ms']})")
    print(f"goal <= {GOAL_MS:.0f} ms: {'met' if out['ok'] else 'NOT met'}  -> {path.relative_to(ROOT)}")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
