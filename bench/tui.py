"""Benchmark: the TUI's posts screen on 100,000 posts (issue 13), driven by Textual's pilot.

A sandbox data dir (`socialpub init --sandbox`) gets N posts in bulk (tests/support/bulk_posts.py: 10 %
scheduled, the rest final, 1-3 targets each). Each run is a fresh process: the app exactly as `socialpub tui`
builds it (the embedded backend with its worker, SQLite), 100x30, headless, and measures

- launch: from the process's start (interpreter, imports, the embedded backend, the app) to the first posts
  painted — and the same from the app's construction only;
- filter: a status filter, a network filter, a text search matching many posts and one matching almost none
  (every text read): from the change (after the search's 250 ms typing debounce) to its first page painted;
- scroll: ten screen pages down (`pagedown`, 24 rows; the next page of posts is read ahead) and ten times
  `end` at the last row read (each reads the next 100 posts: one request), from the move to every row on
  screen painted;
- baseline: beside each embedded run, a bare Textual app (header, 30-row DataTable, footer) in the same pilot at
  the same size, from its process's start to painted: the floor of any Textual app on this machine at that
  moment (its speed drifts), and our launch as a ratio of it;
- memory: resident set size after launch and after ~3,000 rows scrolled through, at 10,000 and at 100,000
  posts; the rows the list holds.

The pilot's key delivery (~70 ms a key, a trivial Textual app included) is not the app's: the actions the keys
run are called instead. `--latency-ms` adds a round trip to every API request (a remote server); the default
is the embedded backend, in-process. Goals: launch ≤ 1 s, a filter ≤ 200 ms, ≤ 100 ms a page, memory
independent of the number of posts.

    .venv/bin/python bench/tui.py [--runs 5] [--posts 100000] [--small 10000] [--latency-ms 0]

Writes bench/results/tui.json: the commit, the machine and its load, every run's figures and the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
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
RESULTS = ROOT / "bench" / "results" / "tui.json"
SOCIALPUB = str(Path(sys.executable).with_name("socialpub"))
SIZE = (100, 30)
GOALS = {"launch_ms": 1000.0, "filter_ms": 200.0, "page_ms": 100.0}


def commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def env_for(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    return env | {
        "SOCIALPUB_DATA_DIR": str(data_dir),
        "SOCIALPUB_CONFIG": str(data_dir.parent / "config.yaml"),
        "SOCIALPUB_LOG_LEVEL": "WARNING",
        "SOCIALPUB_SANDBOX_DELAY_S": "0",
        "PYTHONPATH": str(ROOT),
    }


# ---- set-up -------------------------------------------------------------------------------------------------


def prepare(data_dir: Path, posts: int) -> str:
    """`socialpub init --sandbox`, then `posts` posts in bulk. Returns the workspace's API key."""
    init = subprocess.run(
        [SOCIALPUB, "init", "--sandbox", "--json", "--password", "bench-password"],
        env=env_for(data_dir),
        check=True,
        capture_output=True,
        text=True,
    )
    code = (
        "import sys; from pathlib import Path; from backend.config import Settings; "
        "from backend.store.db import init_database; from backend.store.models import Workspace; "
        "from tests.support.bulk_posts import insert_posts; "
        "init_database(Settings(data_dir=Path(sys.argv[1]))); "
        "insert_posts(Workspace.select().get().id, int(sys.argv[2]))"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(data_dir), str(posts)], env=env_for(data_dir), check=True, cwd=ROOT
    )
    return str(json.loads(init.stdout)["apiKey"])


class Server:
    """`socialpub serve --no-worker` on the data dir, on loopback (the per-key rate limit lifted: the bench
    reads faster than 30 requests a minute)."""

    def __init__(self, data_dir: Path) -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        env = env_for(data_dir) | {"SOCIALPUB_RATE_LIMIT_PER_MINUTE": "1000000"}
        self.proc = subprocess.Popen(
            [SOCIALPUB, "serve", "--no-worker", "--port", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        import httpx

        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(self.url + "/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("socialpub serve did not answer")
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


# ---- one run (a child process) ------------------------------------------------------------------------------


async def measure(
    data_dir: Path, spawned_at: float, latency_ms: float, remote: tuple[str, str] | None = None
) -> dict[str, Any]:
    t_app = time.perf_counter()
    import httpx
    import textual_image.widget  # noqa: F401  (as `socialpub tui` does before the app: it probes the terminal)
    from textual.widgets import Input, Select

    from socialpub_tui.app import SocialpubApp
    from socialpub_tui.client.aio import AsyncClient
    from socialpub_tui.client.embedded import client_kwargs
    from socialpub_tui.screens.posts import PostsScreen
    from socialpub_tui.times import DisplayZone
    from socialpub_tui.widgets.post_list import PostList

    if remote is not None:  # a server in another process: this process holds the TUI only
        kwargs: dict[str, Any] = {
            "base_url": remote[0],
            "api_key": remote[1],
            "transport": httpx.AsyncHTTPTransport(),
        }
    else:
        kwargs = client_kwargs(data_dir, asynchronous=True)
    if latency_ms:
        inner: httpx.AsyncBaseTransport = kwargs["transport"]

        class Remote(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                await asyncio.sleep(latency_ms / 1000)
                return await inner.handle_async_request(request)

        kwargs["transport"] = Remote()
    app = SocialpubApp(AsyncClient(**kwargs), zone=DisplayZone("Europe/Paris"))
    loaded = asyncio.Event()

    def hook(message: Any) -> None:
        if isinstance(message, PostList.PageLoaded):
            loaded.set()

    async def until(condition: Any, step: float = 0.001) -> None:
        while True:
            if condition():
                return
            await asyncio.sleep(step)

    out: dict[str, Any] = {}
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await until(
            lambda: (
                isinstance(app.screen, PostsScreen)
                and app.screen.query(PostList)
                and app.screen.query_one(PostList).window.known
            )
        )
        await pilot.pause(0)  # the screen drawn (not waiting for the app to go idle)
        out["launch_process_ms"] = (time.time() - spawned_at) * 1000
        out["launch_app_ms"] = (time.perf_counter() - t_app) * 1000
        screen = app.screen
        post_list = screen.query_one(PostList)
        await until(lambda: not post_list.reading)  # the prefetch of the next page ends
        out["rss_after_launch_mb"] = rss_mb()

        def all_in_view() -> bool:
            first, last = post_list.view_rows()
            last = min(last, post_list.window.known - 1)
            return all(post_list.window.row(i) is not None for i in range(first, last + 1))

        async def painted_all_in_view() -> None:
            await until(all_in_view)
            await pilot.pause(0)  # the screen drawn (not waiting for the app to go idle)

        async def filtered(change: Any) -> float:
            loaded.clear()
            t = time.perf_counter()
            change()
            await loaded.wait()
            while post_list.loading:
                loaded.clear()
                await loaded.wait()
            await pilot.pause(0)  # the screen drawn (not waiting for the app to go idle)
            elapsed = (time.perf_counter() - t) * 1000
            await until(lambda: not post_list.reading)
            return elapsed

        status = screen.query_one("#posts-status", Select)
        network = screen.query_one("#posts-network", Select)
        search = screen.query_one("#posts-search", Input)

        def search_for(text: str) -> Any:
            def change() -> None:
                with screen.prevent(Input.Changed):
                    search.value = text
                screen._apply_filters()  # what the debounce calls, 250 ms after the last key

            return change

        out["filter_status_ms"] = await filtered(lambda: setattr(status, "value", "failed"))
        out["filter_clear_ms"] = await filtered(status.clear)
        out["filter_network_ms"] = await filtered(lambda: setattr(network, "value", "tiktok"))
        await filtered(network.clear)
        out["search_common_ms"] = await filtered(search_for("café"))
        out["search_rare_ms"] = await filtered(search_for("#77777 "))
        await filtered(search_for(""))

        pages = []
        for _ in range(10):
            t = time.perf_counter()
            post_list.action_page(1)
            await painted_all_in_view()
            pages.append((time.perf_counter() - t) * 1000)
        out["screen_pages_ms"] = pages
        out["screen_page_rows"] = post_list.view_rows()[1] - post_list.view_rows()[0] + 1
        await until(lambda: not post_list.reading)
        api_pages = []
        for i in range(30):  # `end`, to the last row read: the next page of posts is read and shown below it
            if post_list.window.complete:
                break
            known = post_list.window.known
            t = time.perf_counter()
            post_list.action_last()
            await until(lambda known=known: post_list.window.known > known and not post_list.reading)
            await painted_all_in_view()
            if i < 10:
                api_pages.append((time.perf_counter() - t) * 1000)
        out["post_pages_ms"] = api_pages
        out["rows_down"] = post_list.cursor_row
        out["rss_after_scroll_mb"] = rss_mb()
        out["rss_peak_mb"] = rss_mb("VmHWM")
        out["resident_rows"] = post_list.window.resident_rows
        out["bookmarks"] = len(post_list.window.pages)
        await pilot.press("ctrl+q")
    return out


def bare_app() -> Any:
    """The baseline app (bench/tui_terminal.py runs it in a terminal): a header, a 30-row DataTable of text
    ("Post number N of the bare app"), a footer. Textual is imported here, as the measured process's start."""
    from textual.app import App, ComposeResult
    from textual.widgets import DataTable, Footer, Header

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            yield DataTable()
            yield Footer()

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("when", "status", "targets", "text")
            for i in range(30):
                table.add_row(
                    f"24 Nov {i:02d}:00", "scheduled", "fb li yt", f"Post number {i} of the bare app"
                )

    return Bare()


async def measure_baseline(spawned_at: float) -> dict[str, Any]:
    """The floor of any Textual app here, measured beside each run (the machine's speed drifts): a bare app — a
    header, a 30-row DataTable of text, a footer — in the same headless pilot at the same size, from the
    process's start to the table painted. No backend, no data to read, no CSS of ours."""
    t_app = time.perf_counter()
    app = bare_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0)
        return {
            "launch_process_ms": (time.time() - spawned_at) * 1000,
            "launch_app_ms": (time.perf_counter() - t_app) * 1000,
        }


def child(args: argparse.Namespace) -> int:
    if args.child == "baseline":
        print(json.dumps(asyncio.run(measure_baseline(args.spawned_at))))
        return 0
    remote = (args.api_url, os.environ["BENCH_API_KEY"]) if args.api_url else None
    result = asyncio.run(measure(Path(args.child), args.spawned_at, args.latency_ms, remote))
    print(json.dumps(result))
    return 0


def run_child(
    data_dir: Path | str, latency_ms: float, server: Server | None = None, api_key: str = ""
) -> dict[str, Any]:
    """One measuring process (data_dir "baseline": the bare Textual app)."""
    spawned = time.time()
    extra = ["--api-url", server.url] if server else []
    r = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            str(data_dir),
            "--spawned-at",
            repr(spawned),
            "--latency-ms",
            str(latency_ms),
            *extra,
        ],
        env=env_for(Path(data_dir)) | {"BENCH_API_KEY": api_key},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    if r.returncode != 0:
        raise SystemExit(f"a run failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---- the whole benchmark ------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [
        "launch_process_ms",
        "launch_app_ms",
        "filter_status_ms",
        "filter_clear_ms",
        "filter_network_ms",
        "search_common_ms",
        "search_rare_ms",
        "rss_after_launch_mb",
        "rss_after_scroll_mb",
        "rss_peak_mb",
    ]
    out: dict[str, Any] = {k: median([r[k] for r in runs]) for k in keys}
    out["screen_page_ms"] = median([p for r in runs for p in r["screen_pages_ms"]])
    out["screen_page_ms_max"] = round(max(p for r in runs for p in r["screen_pages_ms"]), 1)
    out["post_page_ms"] = median([p for r in runs for p in r["post_pages_ms"]])
    out["post_page_ms_max"] = round(max(p for r in runs for p in r["post_pages_ms"]), 1)
    out["resident_rows_max"] = max(r["resident_rows"] for r in runs)
    return out


def show(label: str, r: dict[str, Any]) -> None:
    print(
        f"  {label}: launch {r['launch_process_ms']:.0f} ms (app {r['launch_app_ms']:.0f}), status filter "
        f"{r['filter_status_ms']:.0f} ms, search (rare) {r['search_rare_ms']:.0f} ms, page "
        f"{statistics.median(r['screen_pages_ms']):.0f} / {statistics.median(r['post_pages_ms']):.0f} ms, "
        f"RSS {r['rss_after_scroll_mb']:.0f} MB",
        flush=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--posts", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=10_000, help="the smaller store, for the memory comparison")
    ap.add_argument(
        "--latency-ms", type=float, default=0.0, help="added to every API request (a remote server)"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--spawned-at", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--api-url", help=argparse.SUPPRESS)
    ap.add_argument(
        "--remote-runs",
        type=int,
        default=3,
        help="runs against `socialpub serve` in another process (the TUI's own memory)",
    )
    args = ap.parse_args()
    if args.child:
        return child(args)

    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    baseline: list[float] = []  # the bare Textual app's launch, one run beside each embedded run
    with tempfile.TemporaryDirectory(prefix="socialpub-bench-tui-") as tmp:
        for n in (args.small, args.posts):
            data_dir = Path(tmp) / f"d{n}" / "data"
            t = time.perf_counter()
            api_key = prepare(data_dir, n)
            print(f"  {n:,} posts in the store ({time.perf_counter() - t:.0f} s)", flush=True)
            runs = []
            for i in range(args.runs):
                runs.append(run_child(data_dir, args.latency_ms))
                show(f"embedded, run {i + 1}", runs[-1])
                baseline.append(run_child("baseline", 0.0)["launch_process_ms"])
                print(f"  bare Textual app, run {len(baseline)}: launch {baseline[-1]:.0f} ms", flush=True)
            remote = []
            server = Server(data_dir)
            try:
                for i in range(args.remote_runs):
                    remote.append(run_child(data_dir, args.latency_ms, server, api_key))
                    show(f"server,   run {i + 1}", remote[-1])
            finally:
                server.stop()
            results[str(n)] = {
                "posts": n,
                "runs": runs,
                "median": summarise(runs),
                "server_runs": remote,
                "server_median": summarise(remote) if remote else None,
            }
    big, small = results[str(args.posts)]["median"], results[str(args.small)]["median"]
    big_tui, small_tui = results[str(args.posts)]["server_median"], results[str(args.small)]["server_median"]
    filters = [
        big[k] for k in ("filter_status_ms", "filter_network_ms", "search_common_ms", "search_rare_ms")
    ]
    verdict = {
        "launch": big["launch_process_ms"] <= GOALS["launch_ms"],
        "filter": max(filters) <= GOALS["filter_ms"],
        "page": max(big["screen_page_ms"], big["post_page_ms"]) <= GOALS["page_ms"],
        # the TUI's own memory: the process holding the app alone (the server in another one)
        "memory": bool(
            big_tui
            and small_tui
            and abs(big_tui["rss_after_scroll_mb"] - small_tui["rss_after_scroll_mb"]) <= 5
        ),
    }
    out = {
        "benchmark": "tui",
        "commit": commit(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "latency_ms": args.latency_ms,
        "terminal": list(SIZE),
        "goals": GOALS,
        "met": verdict,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "results": results,
        "baseline": {
            "what": "a bare Textual app (header, 30-row DataTable, footer), same pilot and size, from "
            "its process's start to painted: one run beside each embedded run",
            "launch_process_ms_runs": [round(x, 1) for x in baseline],
            "launch_process_ms": median(baseline),
            "launch_ratio": round(big["launch_process_ms"] / median(baseline), 2),
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"{args.posts:,} posts (median of {args.runs} runs; latency {args.latency_ms:g} ms):")
    print(
        f"  launch to posts painted  {big['launch_process_ms']:7.1f} ms (process), {big['launch_app_ms']:.1f} ms "
        f"(app)   goal <= {GOALS['launch_ms']:.0f}: {'met' if verdict['launch'] else 'NOT met'}"
    )
    print(
        f"  a bare Textual app in the same run: {median(baseline):.1f} ms (ours: "
        f"{big['launch_process_ms'] / median(baseline):.2f} x)"
    )
    print(
        f"  filter: status {big['filter_status_ms']:.1f}, network {big['filter_network_ms']:.1f}, search "
        f"{big['search_common_ms']:.1f} / rare {big['search_rare_ms']:.1f} ms (+250 ms typing debounce)   "
        f"goal <= {GOALS['filter_ms']:.0f}: {'met' if verdict['filter'] else 'NOT met'}"
    )
    print(
        f"  a screen page {big['screen_page_ms']:.1f} ms (max {big['screen_page_ms_max']}), a page of 100 posts "
        f"{big['post_page_ms']:.1f} ms (max {big['post_page_ms_max']})   goal <= {GOALS['page_ms']:.0f}: "
        f"{'met' if verdict['page'] else 'NOT met'}"
    )
    if big_tui and small_tui:
        print(
            f"  RSS after ~3,000 rows, the TUI alone (server in another process): "
            f"{small_tui['rss_after_scroll_mb']:.1f} MB at {args.small:,} posts, "
            f"{big_tui['rss_after_scroll_mb']:.1f} MB at {args.posts:,}; rows held <= "
            f"{big['resident_rows_max']}   independent: {'met' if verdict['memory'] else 'NOT met'}"
        )
    print(
        f"  RSS after ~3,000 rows, embedded (TUI + backend + SQLite page cache): "
        f"{small['rss_after_scroll_mb']:.1f} MB at {args.small:,} posts, {big['rss_after_scroll_mb']:.1f} MB at "
        f"{args.posts:,}"
    )
    if big_tui:
        print(
            f"  against the server: launch {big_tui['launch_process_ms']:.1f} ms, status filter "
            f"{big_tui['filter_status_ms']:.1f} ms, search rare {big_tui['search_rare_ms']:.1f} ms, a screen page "
            f"{big_tui['screen_page_ms']:.1f} ms, a page of posts {big_tui['post_page_ms']:.1f} ms"
        )
    print(f"  -> {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
