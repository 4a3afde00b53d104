"""Never publish twice, with a real `socialpub worker` process: killed with SIGKILL after Bluesky wrote the record
and before socialpub recorded the outcome, then restarted: the target ends `succeeded` with one record, not two.
Against the emulator and the reference PDS (conftest `server`).

The worker reaches the server through a loopback proxy (the test's): it forwards every call, and once armed it
holds the answer of the first putRecord after the server made the write — the moment the test kills the worker.
The DID documents it passes on name the proxy as the PDS (its origin replaces the server's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from backend.services import workspace
from backend.services.oauth_connect import connect_login
from backend.services.posts import accept
from backend.store.models import Account, PostTarget
from tests.networks.bluesky.conftest import Server
from tests.support.networks import own

ROOT = Path(__file__).resolve().parents[3]


class KillProxy:
    def __init__(self, server: Server) -> None:
        self.server = server
        self.armed = False
        self.written = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Lock()  # the in-process emulator's client is used from the proxy's threads
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                base = proxy.server.hosts["plc" if self.path.startswith("/did:") else "api"]
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")
                }
                with proxy.lock:
                    r = proxy.server.client.request(
                        self.command, base + self.path, content=body, headers=headers
                    )
                data = r.content
                for origin in {_origin(h) for h in proxy.server.hosts.values()} | {_localhost(proxy.server)}:
                    data = data.replace(origin.encode(), proxy.origin.encode())
                if proxy.armed and "com.atproto.repo.putRecord" in self.path and r.status_code == 200:
                    proxy.armed = False
                    proxy.written.set()
                    proxy.release.wait(60)  # the worker is killed meanwhile: this answer never reaches it
                    return
                self.send_response(r.status_code)
                self.send_header("content-type", r.headers.get("content-type", "application/json"))
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _forward
            do_POST = _forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def _localhost(server: Server) -> str:
    """The real PDS names itself http://localhost:PORT in its DID documents."""
    return _origin(server.hosts["api"]).replace("127.0.0.1", "localhost")


def _worker(log: Path, proxy: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SOCIALPUB_JOB_LEASE_S": "2",
        "SOCIALPUB_BLUESKY_BASE_URL": proxy,
        "SOCIALPUB_BLUESKY_PLC_URL": proxy,
        "SOCIALPUB_LOG_LEVEL": "INFO",
    }
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "backend.operator", "worker", "--concurrency", "2"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
        )


def test_a_worker_killed_after_the_write_publishes_once(server: Server, settings, owner, tmp_path) -> None:  # type: ignore[no-untyped-def]
    workspace.set_plan(owner.workspace_id, "GROWTH", "active", None)
    handle, _did, _pw, app_pw = server.new_account()
    proxy = KillProxy(server)
    log = tmp_path / "worker.log"
    workers: list[subprocess.Popen[bytes]] = []
    try:
        mine = own(settings, "bluesky")
        mine.api_base, mine.plc_url = proxy.origin, proxy.origin
        acc = connect_login(owner.workspace_id, settings, "bluesky", handle, app_pw)
        post, _ = accept.create(
            settings, owner.workspace_id, {"targets": ["bluesky"], "content": "killed once #socialpub"}
        )
        proxy.armed = True
        workers.append(_worker(log, proxy.origin))
        assert proxy.written.wait(60), log.read_text()
        os.kill(workers[0].pid, signal.SIGKILL)  # after the server's write, before the outcome is recorded
        workers[0].wait(10)
        target = PostTarget.get(PostTarget.post == post.id)
        assert target.status == "publishing", target.status  # the outcome was never recorded
        proxy.release.set()
        workers.append(_worker(log, proxy.origin))
        deadline = time.monotonic() + 60
        while PostTarget.get_by_id(target.id).status not in ("succeeded", "failed"):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        target = PostTarget.get_by_id(target.id)
        assert target.status == "succeeded", (target.fail_reason, log.read_text())
        r = server.xrpc(
            "GET",
            "com.atproto.repo.listRecords",
            params={"repo": Account.get_by_id(acc["id"]).external_id, "collection": "app.bsky.feed.post"},
        )
        records = r.json()["records"]
        assert len(records) == 1, records
        assert records[0]["uri"].endswith("/" + target.external_post_id)
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait(10)
        proxy.close()
