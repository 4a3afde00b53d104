"""The per-key budget is exact across processes (issue 34: the rate limit's statement made cheaper, still exact):
each request of a window is counted once, whatever process serves it, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from backend.services import ratelimit
from backend.store.models import RateCounter

ROOT = Path(__file__).resolve().parents[2]
HITTER = """
import sys
from backend.config import Settings
from backend.services import ratelimit
from backend.store.db import init_database
init_database(Settings(data_dir=sys.argv[1]), run_migrations=False)
print("ready", flush=True)
sys.stdin.readline()  # start together
for _ in range(int(sys.argv[2])):
    d = ratelimit.hit("key:shared", 1000)
    print(d.reset_s, d.limit - d.remaining, flush=True)
"""


def test_two_processes_hitting_one_budget_count_every_request_once(settings) -> None:  # type: ignore[no-untyped-def]
    n = 150
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", HITTER, str(settings.data_dir), str(n)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=120)[0].split("\n") for p in procs]
    assert all(p.returncode == 0 for p in procs)
    counts = [int(line.split()[1]) for out in outs for line in out if line.strip()]
    assert len(counts) == 2 * n
    stored = {(r.window, r.count) for r in RateCounter.select().where(RateCounter.bucket == "key:shared")}
    assert sum(c for _w, c in stored) == 2 * n  # every request counted, once
    # each request saw its own count: within a window the counts seen are 1..n without a repeat (a window may turn
    # during the run: then the counts of each window are told apart by the stored rows' sizes)
    by_value: dict[int, int] = defaultdict(int)
    for c in counts:
        by_value[c] += 1
    windows = sorted(c for _w, c in stored)
    expected: dict[int, int] = defaultdict(int)
    for size in windows:
        for c in range(1, size + 1):
            expected[c] += 1
    assert by_value == expected


def test_the_first_request_of_a_window_makes_its_counter(settings) -> None:  # type: ignore[no-untyped-def]
    first = ratelimit.hit("key:new", 2)
    second = ratelimit.hit("key:new", 2)
    third = ratelimit.hit("key:new", 2)
    assert (first.allowed, first.remaining) == (True, 1)
    assert (second.allowed, second.remaining) == (True, 0)
    assert (third.allowed, third.remaining) == (False, 0)
    assert [r.count for r in RateCounter.select().where(RateCounter.bucket == "key:new")] == [3]
