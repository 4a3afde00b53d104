"""Benchmark: `socialpub tui`'s launch as a user sees it, in a real terminal (tmux), on 100,000 posts (issue 13).

bench/tui.py measures the app in Textual's headless pilot. A user runs `socialpub tui` in a terminal, where
more happens before the first paint: textual-image asks the terminal which graphics protocol it speaks and how
big a cell is (escape sequences answered, or not, within its 0.1 s timeouts), Textual takes the terminal over
and writes real frames. This bench starts the real command in a tmux pane (its own tmux server, a 100x30
window) and polls the pane's text every 20 ms until the posts table shows at least ten posts: from the command
starting to the user seeing posts. Baseline, beside each run: a bare Textual app (header, 30-row DataTable,
footer) started the same way, until it shows ten rows — the floor of any Textual app in that terminal at that
moment (the machine's speed drifts).

    .venv/bin/python bench/tui_terminal.py [--runs 7] [--posts 100000] [--compare DIR]

`--compare DIR` starts another checkout's `socialpub tui` (this venv, DIR first on PYTHONPATH) in the same runs.

Writes bench/results/tui_terminal.json: the commit, the machine and its load, every run and the medians. The
poll's own cost (a `tmux capture-pane` every 20 ms) is paid by both sides; its resolution is ~20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from tui import SOCIALPUB, bare_app, commit, env_for, prepare  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "tui_terminal.json"
SOCKET = f"socialpub-bench-{os.getpid()}"
SIZE = (100, 30)
POLL_S = 0.02
GOAL_MS = 1000.0
POST_ROW = re.compile(r"#\d+ ")  # bulk posts' texts: "#n …"
BARE_ROW = re.compile(r"Post number \d+ of the bare app")


def commit_of(checkout: Path) -> str:
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=checkout
    ).stdout.strip()


def tmux(*args: str, check: bool = True) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=check).stdout


def launch(command: list[str], row: re.Pattern[str], env: dict[str, str], timeout_s: float = 60.0) -> float:
    """Start `command` in a fresh tmux window; ms until the pane shows ten lines matching `row`."""
    env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
    started = time.perf_counter()
    tmux("new-window", "-d", "-t", "bench", "-n", "run", *env_args, " ".join(command))
    deadline = started + timeout_s
    while True:
        shown = tmux("capture-pane", "-p", "-t", "bench:run", check=False)
        if sum(1 for line in shown.splitlines() if row.search(line)) >= 10:
            elapsed = (time.perf_counter() - started) * 1000
            break
        if time.perf_counter() > deadline:
            raise SystemExit(f"nothing painted within {timeout_s:.0f} s:\n{shown}")
        time.sleep(POLL_S)
    tmux("send-keys", "-t", "bench:run", "C-q")
    for _ in range(300):  # the app quits (the embedded backend stops its worker): at most 30 s
        if "run" not in tmux("list-windows", "-t", "bench", "-F", "#{window_name}", check=False).split():
            break
        time.sleep(0.1)
    else:
        tmux("kill-window", "-t", "bench:run", check=False)
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--posts", type=int, default=100_000)
    ap.add_argument("--compare", type=Path, help="another checkout, run beside this one in the same runs")
    ap.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bare:
        bare_app().run()
        return 0
    if shutil.which("tmux") is None:
        print("tmux is not installed: skipped")
        return 0

    load_before = os.getloadavg()
    ours: list[float] = []
    bare: list[float] = []
    other: list[float] = []
    with tempfile.TemporaryDirectory(prefix="socialpub-bench-tui-term-") as tmp:
        data_dir = Path(tmp) / "data"
        t = time.perf_counter()
        prepare(data_dir, args.posts)
        print(f"  {args.posts:,} posts in the store ({time.perf_counter() - t:.0f} s)", flush=True)
        env = {k: v for k, v in env_for(data_dir).items() if k.startswith("SOCIALPUB_") or k == "PYTHONPATH"}
        env |= {"TERM": "xterm-256color", "COLORTERM": "truecolor", "TZ": "UTC"}
        tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "bench",
            "-x",
            str(SIZE[0]),
            "-y",
            str(SIZE[1]),
            "sleep 86400",
        )
        try:
            ours_cmd = [SOCIALPUB, "tui", "--data-dir", str(data_dir)]
            bare_cmd = [sys.executable, str(Path(__file__).resolve()), "--bare"]
            launch(ours_cmd, POST_ROW, env)  # warm-up: the OS's file cache, the store's first open
            launch(bare_cmd, BARE_ROW, env)
            other_env = env | {"PYTHONPATH": str(args.compare.resolve())} if args.compare else env
            for i in range(args.runs):
                if args.compare:
                    other.append(launch(ours_cmd, POST_ROW, other_env))
                ours.append(launch(ours_cmd, POST_ROW, env))
                bare.append(launch(bare_cmd, BARE_ROW, env))
                print(
                    f"  run {i + 1}: socialpub tui {ours[-1]:.0f} ms, bare Textual app {bare[-1]:.0f} ms"
                    + (f", {args.compare} {other[-1]:.0f} ms" if other else ""),
                    flush=True,
                )
        finally:
            tmux("kill-server", check=False)
    med, med_bare = statistics.median(ours), statistics.median(bare)
    out: dict[str, Any] = {
        "benchmark": "tui_terminal",
        "commit": commit(),
        "uncommitted_changes": bool(
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
                cwd=ROOT,
            ).stdout.strip()
        ),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "what": "`socialpub tui --data-dir D` started in a tmux pane (100x30) until ten posts show in it, beside a "
        "bare Textual app started the same way until ten rows show",
        "posts": args.posts,
        "poll_s": POLL_S,
        "goal_ms": GOAL_MS,
        "tmux": subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip(),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "runs_ms": [round(x, 1) for x in ours],
        "median_ms": round(med, 1),
        "baseline_runs_ms": [round(x, 1) for x in bare],
        "baseline_median_ms": round(med_bare, 1),
        "ratio": round(med / med_bare, 2),
        "met": med <= GOAL_MS,
    }
    if other:
        out["compare"] = {
            "dir": str(args.compare),
            "commit": commit_of(args.compare),
            "runs_ms": [round(x, 1) for x in other],
            "median_ms": round(statistics.median(other), 1),
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(
        f"{args.posts:,} posts, median of {args.runs} runs in tmux: socialpub tui {med:.0f} ms to the posts shown, "
        f"a bare Textual app {med_bare:.0f} ms ({med / med_bare:.2f} x)   goal <= {GOAL_MS:.0f}: "
        f"{'met' if med <= GOAL_MS else 'NOT met'}"
    )
    if other:
        print(f"  {args.compare} in the same runs: {statistics.median(other):.0f} ms")
    print(f"  -> {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
