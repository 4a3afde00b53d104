"""Crash safety of the publishing engine (issue 12, item 9), measured with real processes and `kill -9`.

Each run: a fresh data dir (SQLite), N posts x 5 sandbox networks (each with a small H.264 video on our own
media host, so every network's full path runs), every emulated network call taking SOCIALPUB_SANDBOX_DELAY_S
(0.2 s), the sandbox caps off (a cap's wait would be hours, not a crash). The posts are queued at once, due
evenly over --spread seconds (60: a steady stream of 5 posts a second), then real processes publish them:
`socialpub serve` (API + worker in one process) in runs 1, 3, 5, two separate `socialpub worker` processes in
runs 2, 4. One process is killed with SIGKILL as soon as at least --min-in-flight (10) publishing calls are
under way (attempts recorded in `publish_attempt` whose outcome is not recorded yet: the crash windows the
engine must survive; after 15 s of waiting, any), plus a random 0-0.3 s, and restarted at once; the next kill
comes once every target in flight at the previous one is final; three times per run. Then the run drains.
Each kill records how many of the killed process's calls it caught in flight.

Every post has ONE caption (the hard case of a reconciliation, which can only match a listing by text: two
targets of one account in the same minutes cannot be told apart by it; `--unique-captions` gives each post its
own, as before recon10). What is reported, per network, comparing the publications the emulator holds (the
sandbox package's public listing, `list_published`, by their ids) with the ids the targets hold:
- duplicates: publications that no target holds, beyond one for each failed target (which may own one);
- false failures: failed targets that may own a publication no target holds (at most: with one caption a
  publication cannot be traced to its post; with --unique-captions, by marker, exactly);
- missing: targets `succeeded` whose publication the network does not have, or holds for another target too (a
  reconciliation that took another target's publication: a lost post; never expected);
- stuck: targets in flight at a kill that were not final 20 s after the restart, plus targets never final;
- restart_to_final_s: per kill, from the restart to every target that was in flight at the kill being final;
- calls_in_flight: per kill, the attempts whose outcome the killed process never recorded (0: the kill caught
  no call: it did not land in flight).
Goals: 0 duplicates, 0 false failures, 0 stuck, every in-flight target final within 20 s of its restart.

    .venv/bin/python bench/crash.py [--posts 300] [--runs 5] [--kills 3] [--delay 0.2] [--spread 60]
                                    [--min-in-flight 10] [--env KEY=VALUE ...]

Pause mode (issue 30, item 1: `--pause 30`): two `socialpub worker` processes in every run; instead of a kill, one
of them is frozen with SIGSTOP once at least --min-in-flight of ITS publishing calls are under way, for --pause
seconds (past the 10 s lease: the other worker takes its jobs over), then resumed with SIGCONT; the next pause
comes once every target in flight at the previous one is final. Each pause records the frozen worker's calls in
flight and the time from SIGCONT to every such target final.

Backlog mode (issue 30, item 2b: `--posts 2000 --spread 0 --kill-gap 40`): the posts all fall due at once, so
the kills come while a large backlog drains (one every --kill-gap s: the in-flight targets' retries wait their
turn behind the backlog, so only a target never final is stuck) and the re-attempts page through long
listings.

A kill of `socialpub serve` kills its process group: the server and its worker process (serve runs its worker
in a process of its own).

Results: bench/results/crash.json, one entry per mode under "modes" (kill, pause, backlog): the commit, every
run's figures, the median of each figure across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.schemas.statuses import TARGET_FINAL  # noqa: E402
from bench.support.engine import (  # noqa: E402
    PLATFORMS,
    ROOT,
    bench_settings,
    dies_with_this_process,
    machine,
    prepare_workspace,
    published_rows,
    queue_posts,
)

RESULTS = ROOT / "bench" / "results" / "crash.json"
FINAL_WITHIN_S = 20.0
START_LEAD_S = 3.0  # the first post falls due this long after queueing (the processes start meanwhile)
MARK = re.compile(r"crashbench(\d{6})x")


def marker(i: int) -> str:
    return f"crashbench{i:06d}x"


def socialpub_command() -> list[str]:
    """The `socialpub` console script of this interpreter's environment (PYTHONPATH points it at this tree)."""
    script = Path(sys.executable).with_name("socialpub")
    if script.exists():
        return [str(script)]
    found = shutil.which("socialpub")
    if found:
        return [found]
    return [sys.executable, "-c", "from socialpub_tui.cli.main import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proc:
    """One real process (`socialpub serve` or `socialpub worker`), its stderr kept in a log file."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: Path) -> None:
        self.argv, self.env, self.log_path = argv, env, log_path
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.popen = subprocess.Popen(
            self.argv,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
            start_new_session=True,  # kill9 signals its group: serve and serve's worker
            preexec_fn=dies_with_this_process,  # and it dies with the bench, whatever stops the bench
        )
        log.close()

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def kill9(self) -> None:
        """SIGKILL to the process and its children (serve's worker process): its own session's group."""
        assert self.popen is not None
        os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(30)

    def signal(self, sig: int) -> None:
        assert self.popen is not None
        os.killpg(self.popen.pid, sig)

    def pids(self) -> list[int]:
        """The process and the others of its group (serve's worker process)."""
        assert self.popen is not None
        return group_pids(self.popen.pid)

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGCONT)
            self.popen.terminate()
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(15)


def group_pids(pgid: int) -> list[int]:
    """The processes of a process group (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(entry.name))
    return out


def in_flight_ids() -> set[str]:
    from backend.store.models import PostTarget

    return {t.id for t in PostTarget.select(PostTarget.id).where(PostTarget.status == "publishing")}


def calls_in_flight(pid: int | list[int] | None = None) -> int:
    """Publishing calls under way: attempts recorded before their call whose outcome is not recorded yet; with
    `pid` (or a list of them), only those of the jobs those processes held (worker ids are `name:host:pid:…`)."""
    from backend.store.models import Job, PublishAttempt

    q = PublishAttempt.select().where(PublishAttempt.finished_at.is_null())
    pids = [pid] if isinstance(pid, int) else list(pid or [])
    if pid is not None:
        held = [
            j.dedupe_key.split(":", 1)[1]
            for j in Job.select(Job.dedupe_key, Job.locked_by).where(
                (Job.status == "running") & Job.kind.in_(["target.publish", "target.track"])
            )
            if j.dedupe_key and (j.locked_by or "").split(":")[2:3] in [[str(p)] for p in pids]
        ]
        if not held:
            return 0
        q = q.where(PublishAttempt.target.in_(held))
    return q.count()


def open_among(ids: set[str]) -> int:
    from backend.store.models import PostTarget

    if not ids:
        return 0
    return (
        PostTarget.select()
        .where(PostTarget.id.in_(list(ids)) & PostTarget.status.not_in(TARGET_FINAL))
        .count()
    )


def all_open() -> int:
    from backend.store.models import PostTarget

    return PostTarget.select().where(PostTarget.status.not_in(TARGET_FINAL)).count()


def run_once(index: int, args: argparse.Namespace, rng: random.Random) -> dict[str, Any]:
    from peewee import fn

    from backend.store.db import database, init_database
    from backend.store.models import Post, PostTarget

    mode = "worker" if args.pause or index % 2 == 1 else "serve"
    tmp = Path(tempfile.mkdtemp(prefix="socialpub-crash-"))
    data_dir = tmp / "data"
    # code that reads the process's settings (the sandbox registering its accounts) must see this run's data dir
    from backend.config import get_settings

    os.environ["SOCIALPUB_DATA_DIR"] = str(data_dir)
    os.environ.pop("SOCIALPUB_DATABASE_URL", None)
    get_settings.cache_clear()
    settings = bench_settings(data_dir, sandbox_limits=args.limits)
    ws = prepare_workspace(settings, with_video=True)
    contents = [
        f"Crash bench {marker(i if args.unique_captions else 0)}\nfrom the socialpub crash benchmark"
        for i in range(args.posts)
    ]
    # a steady stream: the posts fall due evenly over --spread seconds (from START_LEAD_S on, once the processes
    # are up), so publishing calls are under way whenever a kill comes, and a kill's in-flight targets recover
    # beside the stream, not behind a backlog of the whole run
    from backend import clock

    first = clock.now() + timedelta(seconds=START_LEAD_S)
    step = args.spread / max(1, args.posts)
    run_ats = (
        [first + timedelta(seconds=i * step) for i in range(args.posts)]
        if args.spread > 0
        else [None] * args.posts
    )
    post_ids = queue_posts(settings, ws, run_ats, platforms=PLATFORMS, contents=contents)
    index_of = {pid: i for i, pid in enumerate(post_ids)}
    database.close()

    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SOCIALPUB_DATA_DIR": str(data_dir),
        "SOCIALPUB_SANDBOX_DELAY_S": str(args.delay),
        "SOCIALPUB_SANDBOX_LIMITS": "true" if args.limits else "false",
        "SOCIALPUB_LOG_LEVEL": "INFO",
        "SOCIALPUB_BASE_URL": "http://bench.local",
    }
    env.pop("SOCIALPUB_DATABASE_URL", None)
    for item in args.env:
        key, _, value = item.partition("=")
        env[key] = value
    cmd = socialpub_command()
    if mode == "serve":
        procs = [Proc([*cmd, "serve", "--port", str(free_port())], env, tmp / "serve.log")]
    else:
        extra = ["--concurrency", str(args.concurrency)] if args.concurrency else []
        procs = [Proc([*cmd, "worker", *extra], env, tmp / f"worker{i}.log") for i in range(2)]
    init_database(settings)
    t0 = time.monotonic()
    for p in procs:
        p.start()
    kills: list[dict[str, Any]] = []
    restarts: list[tuple[Any, set[str]]] = []  # (when, targets in flight) of each kill, with --kill-gap
    stuck_ids: set[str] = set()
    deadline = t0 + args.timeout
    try:
        for k in range(args.kills):
            # wait until enough publishing calls are under way (after 15 s of waiting, any), then a moment later
            victim = rng.choice(procs)
            waiting_since = time.monotonic()
            while time.monotonic() < deadline and all_open():
                # pauses: the calls of the process to be frozen (its jobs are the ones taken over)
                calls = calls_in_flight(victim.pids() if args.pause else None)
                if calls >= args.min_in_flight or (calls and time.monotonic() - waiting_since > 15.0):
                    break
                time.sleep(0.02)
            if not all_open() or time.monotonic() >= deadline:
                break
            time.sleep(rng.uniform(0.0, args.kill_window))
            pids = victim.pids()
            if args.pause:
                victim.signal(signal.SIGSTOP)
                time.sleep(0.05)  # stopped (the signal is asynchronous)
                calls = calls_in_flight(pids)  # the frozen process's calls under way
                for _ in range(
                    200
                ):  # frozen with fewer than asked (calls ended meanwhile): resume, try again
                    if calls >= args.min_in_flight:
                        break
                    victim.signal(signal.SIGCONT)
                    time.sleep(0.02)
                    victim.signal(signal.SIGSTOP)
                    time.sleep(0.05)
                    calls = calls_in_flight(pids)
                killed_at = time.monotonic()
                flying = in_flight_ids()
                time.sleep(args.pause)
                victim.signal(signal.SIGCONT)
            else:
                victim.kill9()
                killed_at = time.monotonic()
                calls = calls_in_flight(pids)  # the dead process's calls whose outcome it never recorded
                flying = in_flight_ids()  # what the dead process (or another) had started and not finished
                victim.start()
            restarted = time.monotonic()
            final_s: float | None = None
            late: set[str] | None = None  # in flight at the kill and still open 20 s after the restart
            if args.kill_gap > 0:  # a backlog: the next kill comes a fixed time later (the in-flight targets
                # wait their turn behind the backlog; how long they took is read at the end)
                restarts.append((clock.now(), flying))
                time.sleep(max(0.0, min(args.kill_gap, deadline - time.monotonic())))
            while args.kill_gap <= 0 and time.monotonic() < deadline:
                still = {t for t in flying if open_among({t})} if flying else set()
                if not still:
                    final_s = time.monotonic() - restarted
                    break
                if late is None and time.monotonic() - restarted >= FINAL_WITHIN_S:
                    late = still
                time.sleep(0.1)
            stuck_ids |= late or set()
            kills.append(
                {
                    "kill": k + 1,
                    "event": f"SIGSTOP for {args.pause:g} s, then SIGCONT"
                    if args.pause
                    else "kill -9, restart",
                    "process": mode,
                    "at_s": round(killed_at - t0, 2),
                    "calls_in_flight": calls,
                    "in_flight": len(flying),
                    "stuck_at_20s": len(late or ()),
                    "restart_to_final_s": round(final_s, 2) if final_s is not None else None,
                }
            )
            when = (
                "read at the end"
                if args.kill_gap > 0
                else (f"after {final_s:.1f} s" if final_s is not None else "NOT within the run")
            )
            print(
                f"    {'pause' if args.pause else 'kill'} {k + 1}: {mode} at {killed_at - t0:.1f} s, {calls} calls "
                f"and {len(flying)} targets in flight, final {when} (from the {'SIGCONT' if args.pause else 'restart'})",
                flush=True,
            )
        while time.monotonic() < deadline and all_open():
            time.sleep(0.25)
        drained_s = time.monotonic() - t0
    finally:
        for p in procs:
            p.stop()
    never_final = {
        t.id for t in PostTarget.select(PostTarget.id).where(PostTarget.status.not_in(TARGET_FINAL))
    }
    for kill, (at, ids) in zip(kills, restarts, strict=False):  # --kill-gap: from the targets' completed_at
        done = [
            t.completed_at
            for t in PostTarget.select(PostTarget.completed_at).where(PostTarget.id.in_(list(ids)))
            if t.completed_at is not None
        ]
        if ids and len(done) == len(ids):
            kill["restart_to_final_s"] = round((max(done) - at).total_seconds(), 2)
    stuck_ids |= never_final

    # what each network received, against the targets
    targets = list(
        PostTarget.select(
            PostTarget.id,
            PostTarget.post,
            PostTarget.platform,
            PostTarget.status,
            PostTarget.fail_reason,
            PostTarget.external_post_id,
        )
    )
    per_network: dict[str, dict[str, Any]] = {}
    for platform in PLATFORMS:
        rows = published_rows(settings, platform)
        counts: dict[int, int] = {}  # --unique-captions: the publications of each post, by its marker
        for row in rows:
            m = MARK.search(f"{row.get('text') or ''} {row.get('title') or ''}")
            if m is not None:
                counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + 1
        at_network = [str(row.get("external_id")) for row in rows]
        mine = [t for t in targets if t.platform == platform]
        holders: dict[str, int] = {}  # each publication id a target holds: how many targets hold it
        for t in mine:
            if t.external_post_id:
                holders[t.external_post_id] = holders.get(t.external_post_id, 0) + 1
        succeeded = [t for t in mine if t.status in ("succeeded", "inbox_delivered")]
        failed = [t for t in mine if t.status == "failed"]
        unheld = sum(1 for x in at_network if x not in holders)  # publications no target holds
        if args.unique_captions:
            duplicates = sum(n - 1 for n in counts.values() if n > 1)
            false_failures = sum(1 for t in failed if counts.get(index_of[t.post_id], 0) > 0)
        else:
            duplicates = max(0, unheld - len(failed))
            false_failures = min(len(failed), unheld)
        network_ids = set(at_network)
        per_network[platform] = {
            "targets": len(mine),
            "succeeded": len(succeeded),
            "failed": len(failed),
            "emulator_received": len(at_network),
            "held_by_no_target": unheld,
            "duplicates": duplicates,
            "false_failures": false_failures,
            # succeeded without their publication at the network, or sharing it with other targets (all but one
            # of them were never published)
            "missing": sum(1 for t in succeeded if (t.external_post_id or "") not in network_ids)
            + sum(n - 1 for x, n in holders.items() if n > 1 and x in network_ids),
            "stuck": sum(1 for t in mine if t.id in stuck_ids),
            "fail_reasons": sorted({(t.fail_reason or "")[:160] for t in failed})[:5],
        }
    logs = "".join(p.log_path.read_text(errors="replace") for p in procs if p.log_path.exists())
    posts = {
        r.status: r.n for r in Post.select(Post.status, fn.COUNT(Post.id).alias("n")).group_by(Post.status)
    }
    database.close()
    times = [k["restart_to_final_s"] for k in kills if k.get("restart_to_final_s") is not None]
    result = {
        "run": index + 1,
        "processes": f"socialpub {mode}" + (" x2" if mode == "worker" else ""),
        "posts": args.posts,
        "targets": len(targets),
        "kills": kills,
        "drained_s": round(drained_s, 1),
        "duplicates": sum(n["duplicates"] for n in per_network.values()),
        "false_failures": sum(n["false_failures"] for n in per_network.values()),
        "missing": sum(n["missing"] for n in per_network.values()),
        "stuck": len(stuck_ids),
        "max_restart_to_final_s": max(times) if times else None,
        # with --kill-gap (a backlog) the in-flight targets wait their turn: only "never final" is stuck
        "all_final_within_20s": len(times) == len(kills)
        and (args.kill_gap > 0 or all(t <= FINAL_WITHIN_S for t in times)),
        "target_statuses": target_statuses_from(targets),
        "post_statuses": posts,
        "per_network": per_network,
        "kills_landed_in_flight": sum(1 for k in kills if k["calls_in_flight"] > 0),
        "log_lines": {
            "reconciled": logs.count("reconciled:"),
            "re-attempt": logs.count("re-attempt:"),
            "waited for the listing": logs.count("which it may not list yet"),
            "may have been published": logs.count("cannot be checked"),
            "errors": logs.count(" ERROR "),
        },
    }
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        result["data_dir"] = str(tmp)
    return result


def target_statuses_from(targets: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in targets:
        out[t.status] = out.get(t.status, 0) + 1
    return out


def commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def median(values: list[float | int | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posts", type=int, default=300, help="posts per run (each with 5 targets)")
    ap.add_argument(
        "--runs", type=int, default=5, help="runs (even: socialpub serve; odd: 2 socialpub workers)"
    )
    ap.add_argument("--kills", type=int, default=3, help="kill -9 per run")
    ap.add_argument(
        "--delay", type=float, default=0.2, help="SOCIALPUB_SANDBOX_DELAY_S: each emulated call, s"
    )
    ap.add_argument(
        "--spread",
        type=float,
        default=60.0,
        help="the posts fall due evenly over this many s (0: all at once)",
    )
    ap.add_argument(
        "--min-in-flight",
        type=int,
        default=10,
        help="kill once at least this many publishing calls are under way (after 15 s of waiting, any)",
    )
    ap.add_argument(
        "--kill-window", type=float, default=0.3, help="... plus a random moment up to this many s"
    )
    ap.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="pause mode: SIGSTOP one of two workers for this many s (past the lease), then SIGCONT, "
        "instead of kill -9",
    )
    ap.add_argument(
        "--kill-gap",
        type=float,
        default=0.0,
        help="a kill every this many s after the restart instead of once the in-flight targets are final "
        "(a backlog: they wait their turn behind it); stuck then means never final",
    )
    ap.add_argument("--limits", action="store_true", help="keep the sandbox caps on (off by default)")
    ap.add_argument(
        "--unique-captions",
        action="store_true",
        help="each post its own caption (runs before recon10); default: one caption for every post",
    )
    ap.add_argument("--concurrency", type=int, help="--concurrency of the worker processes (default: theirs)")
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra environment of the processes (repeatable)",
    )
    ap.add_argument("--timeout", type=float, default=900.0, help="bound on each run, s")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true", help="keep each run's data dir and logs")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()

    rng = random.Random(args.seed)
    print(
        f"crash: {args.posts} posts x {len(PLATFORMS)} networks, {args.runs} runs x {args.kills} kill -9, "
        f"{args.delay:.2f} s per emulated call",
        flush=True,
    )
    runs = []
    for i in range(args.runs):
        print(
            f"  run {i + 1}/{args.runs} ({'serve' if i % 2 == 0 and not args.pause else '2 workers'})",
            flush=True,
        )
        r = run_once(i, args, rng)
        runs.append(r)
        print(
            f"    kills landed in flight: {r['kills_landed_in_flight']} of {len(r['kills'])}; log lines "
            f"{r['log_lines']}",
            flush=True,
        )
        print(
            f"    targets {r['target_statuses']}; duplicates {r['duplicates']}, false failures {r['false_failures']}, stuck {r['stuck']}, "
            f"missing {r['missing']}, max restart->final {r['max_restart_to_final_s']} s, drained in "
            f"{r['drained_s']} s",
            flush=True,
        )
    keys = ("duplicates", "false_failures", "missing", "stuck", "max_restart_to_final_s", "drained_s")
    med = {k: median([r[k] for r in runs]) for k in keys}
    goals = {
        "duplicates": 0,
        "false_failures": 0,
        "stuck": 0,
        "all_final_within_s": FINAL_WITHIN_S,
        # a run whose targets did not publish (e.g. the emulators never knew the accounts) proves nothing
        "met": all(
            r["duplicates"] == 0
            and r["false_failures"] == 0
            and r["stuck"] == 0
            and r["all_final_within_20s"]
            and r["target_statuses"].get("succeeded", 0) == r["targets"]
            for r in runs
        ),
        "kills_planned": args.runs * args.kills,
        "kills_landed_in_flight": sum(r["kills_landed_in_flight"] for r in runs),
    }
    out = {
        "benchmark": "crash",
        "commit": commit(),
        "what": (
            f"SIGSTOP of one of two socialpub workers for {args.pause:g} s (past the lease), then SIGCONT"
            if args.pause
            else "kill -9 of real socialpub processes while targets publish, then a restart"
        )
        + "; what each sandbox network received against the targets' final states",
        "config": {
            "posts": args.posts,
            "runs": args.runs,
            "kills_per_run": args.kills,
            "spread_s": args.spread,
            "min_calls_in_flight": args.min_in_flight,
            "kill_window_s": args.kill_window,
            "sandbox_delay_s": args.delay,
            "sandbox_limits": args.limits,
            "pause_s": args.pause,
            "kill_gap_s": args.kill_gap,
            "env": args.env,
            "worker_concurrency": args.concurrency or "default",
        },
        "goal": goals,
        "median": med,
        "runs": runs,
        "machine": machine(),
    }
    mode = "pause" if args.pause else ("backlog" if args.spread == 0 else "kill")
    out["mode"] = mode
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        recorded = {}
    if "modes" not in recorded:  # the file of one mode (before pauses): it was the kill mode's
        recorded = {"benchmark": "crash", "modes": {"kill": recorded} if recorded else {}}
    recorded["modes"][mode] = out
    path.write_text(json.dumps(recorded, indent=2, default=str) + "\n")
    print(
        f"goals (0 duplicates, 0 false failures, 0 stuck, final within {FINAL_WITHIN_S:.0f} s): "
        f"{'MET' if goals['met'] else 'NOT MET'}; median {med}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
