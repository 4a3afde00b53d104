"""`socialpub webhooks` / `socialpub events` (issue 16): endpoints through the CLI on the embedded backend, the local
secret store (0600, printed once), and `webhooks listen` — unit-level, as a subprocess, and receiving real
deliveries from a real `socialpub serve`. Every request in here goes to loopback."""

from __future__ import annotations

import base64
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

EXE = str(Path(sys.executable).with_name("socialpub"))
ROOT = Path(__file__).resolve().parents[2]


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(24)).decode()


def signed(secret: str, body: bytes, event_id: str = "evt_test1", event_type: str = "publish.completed",
           when: datetime | None = None) -> dict[str, str]:
    from standardwebhooks import Webhook

    when = when or datetime.now(UTC)
    return {"content-type": "application/json", "webhook-id": event_id,
            "webhook-timestamp": str(int(when.timestamp())),
            "webhook-signature": Webhook(secret).sign(event_id, when, body.decode()),
            "socialpub-event-type": event_type}


PUBLISHED = {"id": "evt_test1", "type": "publish.completed", "createdAt": "2026-11-24T10:00:00Z",
             "data": {"platform": "linkedin", "postId": "post_1", "targetId": "tgt_1", "accountId": "acc_1",
                      "status": "succeeded", "postUrl": "https://linkedin.example/p/1", "externalPostId": "1"}}


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a `socialpub` subprocess: no SOCIALPUB_ variable of ours, this checkout first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env | extra


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- listen: the receiver in-process -----------------------------------------------------------------------

@pytest.fixture
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "cfg" / "config.yaml"))
    return tmp_path / "cfg"


def serving(receiver: Any) -> Iterator[str]:
    from socialpub_tui.cli.webhooks import make_server

    server = make_server(receiver, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{receiver.port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        receiver.close()


def test_listen_answers_400_and_says_not_verified_to_a_bad_signature(no_config: Path) -> None:
    from socialpub_tui.cli.webhooks import Receiver

    lines: list[str] = []
    secret = new_secret()
    receiver = Receiver(secrets=(secret,), forward_to=None, as_json=False, write=lines.append)
    for url in serving(receiver):
        body = json.dumps(PUBLISHED).encode()
        forged = signed(new_secret(), body)  # signed with another secret
        r = httpx.post(url, content=body, headers=forged)
        assert r.status_code == 400 and r.json()["error"] == "invalid_signature"
        unsigned = httpx.post(url, json={"hello": "world"})
        assert unsigned.status_code == 400 and "Missing required headers" in unsigned.json()["message"]
        stale = httpx.post(url, content=body, headers=signed(secret, body, when=datetime.fromtimestamp(
            time.time() - 600, UTC)))
        assert stale.status_code == 400 and "too old" in stale.json()["message"]
        good = httpx.post(url, content=body, headers=signed(secret, body))
        assert good.status_code == 204 and good.content == b""
        assert httpx.get(url).status_code == 405
    assert len(lines) == 4
    assert "publish.completed" in lines[0] and "evt_test1" in lines[0] and "NOT verified" in lines[0]
    assert "NOT verified" in lines[1] and "NOT verified" in lines[2]
    assert lines[3].endswith("verified") and "NOT" not in lines[3]
    assert "linkedin https://linkedin.example/p/1" in lines[3]


def test_listen_json_lines_and_summaries(no_config: Path) -> None:
    from socialpub_tui.cli.webhooks import Receiver, summary

    lines: list[str] = []
    secret = new_secret()
    receiver = Receiver(secrets=(secret,), forward_to=None, as_json=True, write=lines.append)
    generation = {"id": "gen_1", "object": "generation", "status": "completed", "type": "image"}
    for url in serving(receiver):
        body = json.dumps(generation).encode()
        r = httpx.post(url, content=body, headers=signed(secret, body, "evt_gen", "generation.completed"))
        assert r.status_code == 204
    (line,) = lines
    event = json.loads(line)
    assert event["id"] == "evt_gen" and event["type"] == "generation.completed" and event["verified"] is True
    assert event["body"] == generation and event["receivedAt"].endswith("Z") and "reason" not in event
    assert summary("generation.completed", generation) == "gen_1 completed"
    assert summary("publish.failed", {"data": {"platform": "youtube", "failReason": "quota"}}) == "youtube quota"


def test_listen_subprocess_rereads_stored_secrets_forwards_and_stops_cleanly(no_config: Path) -> None:
    """An endpoint stored after `listen` started verifies; --forward-to gets body and headers unchanged; SIGINT
    and SIGTERM end it with exit 0."""
    from socialpub_tui.client.config import Profile, save_webhook_secret

    got: list[tuple[bytes, dict[str, str]]] = []

    class App(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            got.append((self.rfile.read(int(self.headers["content-length"])), dict(self.headers.items())))
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    app = ThreadingHTTPServer(("127.0.0.1", 0), App)
    app_thread = threading.Thread(target=app.serve_forever, kwargs={"poll_interval": 0.05})
    app_thread.start()
    port = free_port()
    env = subprocess_env(SOCIALPUB_CONFIG=os.environ["SOCIALPUB_CONFIG"])
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with Listener(port, env, "--forward-to", f"http://127.0.0.1:{app.server_address[1]}/hooks") as listener:
                assert f"socialpub webhooks add http://127.0.0.1:{port}/" in listener.stderr_text()
                secret = new_secret()
                body = json.dumps(PUBLISHED).encode()
                r = httpx.post(listener.url, content=body, headers=signed(secret, body))
                assert r.status_code == 400  # not known yet
                assert listener.next_event()["verified"] is False
                save_webhook_secret(Profile("x", "remote", url="http://srv.test"), "we_1",
                                    f"http://127.0.0.1:{port}/", secret)
                headers = signed(secret, body) | {"x-extra": "kept"}
                r = httpx.post(listener.url, content=body, headers=headers)
                assert r.status_code == 204
                event = listener.next_event()
                assert event["verified"] is True and event["body"] == PUBLISHED
                assert event["forward"]["status"] == 202
                fwd_body, fwd_headers = got[-1]
                assert fwd_body == body
                lower = {k.lower(): v for k, v in fwd_headers.items()}
                for name in ("webhook-id", "webhook-timestamp", "webhook-signature", "socialpub-event-type",
                             "x-extra", "content-type"):
                    assert lower[name] == headers[name]
                listener.proc.send_signal(sig)
                assert listener.proc.wait(10) == 0
                assert "Stopped." in listener.stderr_text()
        assert len(got) == 2  # the unverified ones were not forwarded
    finally:
        app.shutdown()
        app.server_close()
        app_thread.join()


class Listener:
    """`socialpub webhooks listen --port P --json` as a subprocess, its stdout read line by line in a thread."""

    def __init__(self, port: int, env: dict[str, str], *args: str) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/"
        self.env = env
        self.args = args
        self.lines: queue.Queue[str] = queue.Queue()
        self.err_path: Path | None = None

    def __enter__(self) -> Listener:
        import tempfile

        self._err = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115
        self.err_path = Path(self._err.name)
        self.proc = subprocess.Popen([EXE, "webhooks", "listen", "--port", str(self.port), "--json", *self.args],
                                     env=self.env, stdout=subprocess.PIPE, stderr=self._err, text=True, cwd=ROOT)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 20
        while "Ready:" not in self.stderr_text():
            assert self.proc.poll() is None, self.stderr_text()
            assert time.monotonic() < deadline, "listen did not start"
            time.sleep(0.05)
        return self

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def stderr_text(self) -> str:
        assert self.err_path is not None
        return self.err_path.read_text()

    def next_event(self, timeout: float = 20) -> dict[str, Any]:
        try:
            return json.loads(self.lines.get(timeout=timeout))  # type: ignore[no-any-return]
        except queue.Empty:
            raise AssertionError(f"no event within {timeout} s; stderr: {self.stderr_text()}") from None

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        self._err.close()
        assert self.err_path is not None
        self.err_path.unlink(missing_ok=True)
