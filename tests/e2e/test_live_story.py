"""Issue 17's "Done when", as one story with the real commands and real processes, nothing in-process:

each network's emulator runs as a standalone server (`socialpub sandbox serve NETWORK --port P`), `socialpub
serve` runs the API, the media host and the worker on a data dir whose media URL is loopback, and the user:

1. connects one live account per network with `socialpub accounts connect NETWORK --no-browser` — the test is the
   browser: it opens the printed authorize URL and follows the emulator's redirect to the CLI's loopback listener;
2. publishes one post with a video to all five (`posts create --media clip.mp4 --wait`) and sees a link for each;
3. moves the clock past the YouTube token's expiry (`socialpub tick` in a process whose clock is two hours ahead)
   and sees it refreshed: a new expiry, and the network accepting the new token (`accounts check`);
4. revokes the TikTok grant in the emulator (its "connected apps" page: `POST /_sandbox/grants/{id}/revoke`) and
   sees a clear "reconnect" state in `accounts check`, `accounts list` and the TUI (tmux);
5. reconnects it, and the account is active again.

SQLite only (the data dir's own store): the PostgreSQL pass leaves tests/e2e out (Makefile)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.media import corpus
from tests.support.tmux import private_tmux

pytestmark = pytest.mark.usefixtures("audited_tiktok_env")  # TikTok's audit is not what these test

ROOT = Path(__file__).resolve().parents[2]
SOCIALPUB = str(Path(sys.executable).with_name("socialpub"))
NETWORKS = ("tiktok", "facebook", "instagram", "linkedin", "youtube")
BASE_PATH = {
    "tiktok": "",
    "facebook": "",
    "instagram": "",
    "linkedin": "/rest",
    "youtube": "/youtube/v3",
}
TEXT = "One video, five networks #socialpub"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, proc: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            httpx.get(url, timeout=1, trust_env=False)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail(f"{url} never answered:\n{log.read_text()}")


class Story:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[str]] = []
        self.ports = {n: free_port() for n in NETWORKS}
        self.api_port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
        env |= {
            "SOCIALPUB_DATA_DIR": str(tmp / "data"),
            "SOCIALPUB_CONFIG": str(tmp / "cfg" / "config.yaml"),
            "SOCIALPUB_BASE_URL": f"http://127.0.0.1:{self.api_port}",
            "SOCIALPUB_TRACK_POLL_S": "0.5",
            "SOCIALPUB_SANDBOX_DELAY_S": "0",
            "SOCIALPUB_SANDBOX_PROCESSING_S": "0.5",
            "SOCIALPUB_LOG_LEVEL": "WARNING",
            # TikTok's audit is not this story's subject (audited_tiktok_env): the processes get it too
            "SOCIALPUB_TIKTOK_AUDITED": os.environ.get("SOCIALPUB_TIKTOK_AUDITED", ""),
            "SOCIALPUB_SANDBOX_APPS": os.environ.get("SOCIALPUB_SANDBOX_APPS", ""),
            "PYTHONPATH": str(ROOT),
            "TZ": "UTC",
        }
        for n in NETWORKS:
            env[f"SOCIALPUB_{n.upper()}_BASE_URL"] = f"http://127.0.0.1:{self.ports[n]}{BASE_PATH[n]}"
            env[f"SOCIALPUB_{n.upper()}_CLIENT_ID"] = f"app-{n}"
            env[f"SOCIALPUB_{n.upper()}_CLIENT_SECRET"] = f"secret-{n}"
        for n in (
            "facebook",
            "instagram",
            "linkedin",
        ):  # the apps register the CLI's listener (the doctor's fix)
            if n in NETWORKS:
                env[f"SOCIALPUB_{n.upper()}_REDIRECT_PORT"] = str(free_port())
        self.env = env

    def start(self, name: str, *args: str, ready: str) -> None:
        log = self.tmp / f"{name}.log"
        proc = subprocess.Popen(
            [SOCIALPUB, *args], env=self.env, stdout=log.open("w"), stderr=subprocess.STDOUT, text=True
        )
        self.procs.append(proc)
        wait_http(ready, proc, log)

    def run(
        self, *args: str, ok: bool = True, env: dict[str, str] | None = None, argv: list[str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        got = subprocess.run(
            argv or [SOCIALPUB, *args], env=env or self.env, capture_output=True, text=True, timeout=120
        )
        if ok:
            assert got.returncode == 0, f"{args}: {got.stdout}\n{got.stderr}"
        return got

    def json(self, *args: str, ok: bool = True) -> Any:
        return json.loads(self.run(*args, "--json", ok=ok).stdout)

    def connect(self, network: str, *extra: str) -> list[dict[str, Any]]:
        """`accounts connect NETWORK --no-browser`, the browser step played by following the printed URL."""
        cli = subprocess.Popen(
            [
                SOCIALPUB,
                "accounts",
                "connect",
                network,
                "--no-browser",
                "--all",
                "--json",
                "--timeout",
                "60",
                *extra,
            ],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert cli.stderr is not None
        origin = f"http://127.0.0.1:{self.ports[network]}"
        url = None
        for line in cli.stderr:  # "Open this URL in a browser to authorise socialpub:" then the URL
            if line.startswith(origin):
                url = line.strip()
                break
        assert url is not None, f"no authorize URL printed: {cli.communicate()}"
        landed = httpx.get(
            url, follow_redirects=True, timeout=30, trust_env=False
        )  # consent, then the listener
        assert landed.status_code == 200 and landed.url.host == "127.0.0.1" and landed.url.path == "/callback"
        out, err = cli.communicate(timeout=60)
        assert cli.returncode == 0, err
        return list(json.loads(out)["items"])

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


def clip(path: Path) -> Path:
    path.write_bytes(corpus.vertical_video(seconds=4))
    return path


def test_connect_publish_refresh_revoke_reconnect(story: Story, tmp_path: Path) -> None:  # noqa: PLR0915
    # 1. one live account per network, through the OAuth flow
    accounts = {}
    for n in NETWORKS:
        [acc] = story.connect(n)
        assert acc["platform"] == n and acc["kind"] == "live" and acc["status"] == "active"
        accounts[n] = acc
    assert (
        accounts["youtube"]["name"] != f"YouTube channel {accounts['youtube']['id']}"
    )  # the channel's title

    # 2. a video to all five from a loopback media host (uploaded as bytes: every one of the five takes a video's
    #    bytes — Instagram's Reel by its resumable upload; an Instagram image would be refused, test_first_post_story)
    post = story.json(
        "posts",
        "create",
        TEXT,
        *[a for n in NETWORKS for a in ("--to", n)],
        "--media",
        str(clip(tmp_path / "clip.mp4")),
        "--tiktok-privacy",
        "PUBLIC_TO_EVERYONE",  # the creator's choice: TikTok's UX rules leave it to them, never pre-selected
        "--wait",
    )
    assert post["status"] == "completed", post
    links = {t["platform"]: t["postUrl"] for t in post["targets"]}
    assert set(links) == set(NETWORKS) and all(str(u).startswith("https://") for u in links.values()), links
    assert "/reel/" in links["instagram"] and "youtu" in links["youtube"] and "/video/" in links["tiktok"]
    warned = {t["platform"]: [w["code"] for w in t["warnings"]] for t in post["targets"]}
    assert warned["youtube"] == ["youtube_private_lock"]  # a new Google project: posted, locked private

    # 3. the clock two hours on (past the YouTube token's hour): the worker refreshes it
    def token_of(network: str) -> dict[str, Any]:
        listed = story.json("accounts", "list")["items"]
        return next(a for a in listed if a["platform"] == network)

    before = token_of("youtube")
    ahead = (
        "import datetime as d, time_machine; time_machine.travel(d.datetime.now(d.UTC) + d.timedelta(hours=2),"
        " tick=True).start(); from socialpub_tui.cli.main import main; main()"
    )
    tick = story.run(
        argv=[sys.executable, "-c", ahead, "tick", "--max-seconds", "60", "--settle", "1", "--json"]
    )
    assert json.loads(tick.stdout)["jobsRun"] >= 1
    after = token_of("youtube")
    # refreshed; a new Google project is in Testing: its refresh token ends 7 days after consent, said ahead
    assert after["status"] == "active"
    assert after["tokenWarning"] is None or "authorisation expires in" in after["tokenWarning"], after
    assert datetime.fromisoformat(after["tokenExpiresAt"]) > datetime.fromisoformat(before["tokenExpiresAt"])
    health = story.json("accounts", "check", accounts["youtube"]["id"])
    # the network takes the new access token (a Testing project's grant is `expiring`: 7 days from consent)
    assert health["status"] in ("ok", "expiring"), health

    # 4. the user removes the app at TikTok: the grant is dead
    emu = f"http://127.0.0.1:{story.ports['tiktok']}"
    [grant] = [
        g
        for g in httpx.get(f"{emu}/_sandbox/grants", trust_env=False).json()["grants"]
        if g["state"] == "active"
    ]
    assert (
        httpx.post(f"{emu}/_sandbox/grants/{grant['id']}/revoke", trust_env=False).json()["state"]
        == "revoked"
    )
    checked = story.json("accounts", "check", accounts["tiktok"]["id"], ok=False)
    assert checked["status"] == "needs_reauth" and "socialpub accounts connect tiktok" in checked["message"]
    everyone = story.run("accounts", "check", ok=False)
    assert everyone.returncode == 1 and re.search(r"tiktok .* needs_reauth .*reconnect", everyone.stdout)
    listed = token_of("tiktok")
    assert listed["status"] == "needs_reauth" and "reconnect" in listed["tokenWarning"]
    table = story.run("accounts", "list").stdout
    assert re.search(r"tiktok .* needs_reauth .*reconnect", table), table
    tui_shows_reconnect(story)

    # 5. reconnecting repairs the same account
    [again] = story.connect("tiktok")
    assert again["id"] == accounts["tiktok"]["id"] and again["status"] == "active"
    assert story.json("accounts", "check", again["id"])["status"] == "ok"


def tui_shows_reconnect(story: Story) -> None:
    """`socialpub tui` in tmux: the accounts screen (f4) shows the TikTok account's reconnect state."""
    command = " ".join(
        [
            "env",
            *(
                f"{k}='{v}'"
                for k, v in story.env.items()
                if k.startswith(("SOCIALPUB_", "PYTHONPATH", "TZ", "PATH"))
            ),
            SOCIALPUB,
            "tui",
        ]
    )
    with private_tmux("story") as tmux:
        assert tmux("new-session", "-d", "-s", "tui", "-x", "120", "-y", "30", command).returncode == 0
        screen, deadline, pressed = "", time.monotonic() + 60, False
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", "tui").stdout
            if not pressed and "search words" in screen:  # the posts screen is up: to the accounts screen
                tmux("send-keys", "-t", "tui", "F4")
                pressed = True
            # (a margin, and the doctor's marker: ✗ an error, ⚠ a warning)
            rows = [line for line in screen.splitlines() if line.lstrip(" ✗⚠").startswith("TT ")]
            if rows and "needs_reauth" in rows[0] and "reconnect" in rows[0]:
                break
            time.sleep(0.3)
        else:
            pytest.fail(f"the TUI never showed the TikTok account to reconnect:\n{screen}")
        assert "reconnect with socialpub accounts connect tiktok" in screen.replace("\n", " ").replace(
            "  ", " "
        )
        tmux("send-keys", "-t", "tui", "C-q")
