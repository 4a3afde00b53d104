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

from tests.cli.conftest import invoke

EXE = str(Path(sys.executable).with_name("socialpub"))
ROOT = Path(__file__).resolve().parents[2]


def new_secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(24)).decode()


def signed(
    secret: str,
    body: bytes,
    event_id: str = "evt_test1",
    event_type: str = "publish.completed",
    when: datetime | None = None,
) -> dict[str, str]:
    from standardwebhooks import Webhook

    when = when or datetime.now(UTC)
    return {
        "content-type": "application/json",
        "webhook-id": event_id,
        "webhook-timestamp": str(int(when.timestamp())),
        "webhook-signature": Webhook(secret).sign(event_id, when, body.decode()),
        "socialpub-event-type": event_type,
    }


PUBLISHED = {
    "id": "evt_test1",
    "type": "publish.completed",
    "createdAt": "2026-11-24T10:00:00Z",
    "data": {
        "platform": "linkedin",
        "postId": "post_1",
        "targetId": "tgt_1",
        "accountId": "acc_1",
        "status": "succeeded",
        "postUrl": "https://linkedin.example/p/1",
        "externalPostId": "1",
    },
}


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
        stale = httpx.post(
            url,
            content=body,
            headers=signed(secret, body, when=datetime.fromtimestamp(time.time() - 600, UTC)),
        )
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
    assert (
        summary("publish.failed", {"data": {"platform": "youtube", "failReason": "quota"}}) == "youtube quota"
    )


def test_listen_refuses_an_unusable_secret_and_a_busy_port(no_config: Path) -> None:
    bad = invoke("webhooks", "listen", "--port", "0", "--secret", "whsec_", "--json")
    assert (
        bad.code == 2 and bad.err_json()["error"] == "usage_error" and "--secret" in bad.err_json()["message"]
    )
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = invoke("webhooks", "listen", "--port", str(busy.getsockname()[1]))
    assert taken.code == 1 and "cannot listen on 127.0.0.1" in taken.err and "--port" in taken.err


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
            with Listener(
                port, env, "--forward-to", f"http://127.0.0.1:{app.server_address[1]}/hooks"
            ) as listener:
                assert f"socialpub webhooks add http://127.0.0.1:{port}/" in listener.stderr_text()
                secret = new_secret()
                body = json.dumps(PUBLISHED).encode()
                r = httpx.post(listener.url, content=body, headers=signed(secret, body))
                assert r.status_code == 400  # not known yet
                assert listener.next_event()["verified"] is False
                save_webhook_secret(
                    Profile("x", "remote", url="http://srv.test"), "we_1", f"http://127.0.0.1:{port}/", secret
                )
                headers = signed(secret, body) | {"x-extra": "kept"}
                r = httpx.post(listener.url, content=body, headers=headers)
                assert r.status_code == 204
                event = listener.next_event()
                assert event["verified"] is True and event["body"] == PUBLISHED
                assert event["forward"]["status"] == 202
                fwd_body, fwd_headers = got[-1]
                assert fwd_body == body
                lower = {k.lower(): v for k, v in fwd_headers.items()}
                for name in (
                    "webhook-id",
                    "webhook-timestamp",
                    "webhook-signature",
                    "socialpub-event-type",
                    "x-extra",
                    "content-type",
                ):
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
        self.proc = subprocess.Popen(
            [EXE, "webhooks", "listen", "--port", str(self.port), "--json", *self.args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            cwd=ROOT,
        )
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


# ---- the endpoints through the CLI, embedded ---------------------------------------------------------------


@pytest.fixture
def private_ok(cli_env, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The embedded backend may deliver to loopback (SOCIALPUB_ALLOW_PRIVATE_URLS=1), with quick retries."""
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_ALLOW_PRIVATE_URLS", "1")
    monkeypatch.setenv("SOCIALPUB_WEBHOOK_RETRY_SCHEDULE", "0,1,1")
    get_settings.cache_clear()
    r = invoke("init", "--sandbox", "--json", "--password", "s3cret-pass")
    assert r.code == 0, r.err
    return cli_env


def secrets_file() -> Path:
    return Path(os.environ["SOCIALPUB_CONFIG"]).parent / "webhook-secrets.json"


def test_endpoint_lifecycle_through_the_cli(private_ok: Path) -> None:
    from socialpub_tui.cli.webhooks import Receiver

    lines: list[str] = []
    receiver = Receiver(secrets=(), forward_to=None, as_json=True, write=lines.append)
    for url in serving(receiver):
        r = invoke(
            "webhooks",
            "add",
            url,
            "--events",
            "publish.completed, webhook.test",
            "--description",
            "ops",
            "--json",
        )
        assert r.code == 0, r.err
        created = r.json()
        secret, wid = created["secret"], created["id"]
        assert secret.startswith("whsec_") and wid.startswith("we_")
        assert created["events"] == ["publish.completed", "webhook.test"] and created["description"] == "ops"
        stored = json.loads(secrets_file().read_text())
        assert oct(secrets_file().stat().st_mode & 0o777) == "0o600"
        (profile_key,) = stored
        assert profile_key.startswith("embedded:") and stored[profile_key] == {
            wid: {"url": url, "secret": secret}
        }

        listed = invoke("webhooks", "list", "--json")
        assert listed.code == 0 and [w["id"] for w in listed.json()] == [wid] and secret not in listed.out
        human = invoke("webhooks", "list")
        assert wid in human.out and url in human.out and "enabled" in human.out and secret not in human.out

        # test, waiting for the first attempt: it reached the receiver, which verified it with the stored secret
        t = invoke("webhooks", "test", wid, "--wait", "--json")
        assert t.code == 0, t.err + t.out
        delivery = t.json()
        assert delivery["status"] == "succeeded" and delivery["lastStatusCode"] == 204
        wait_for(lambda: len(lines) == 1)  # reported just after the answer
        event = json.loads(lines[-1])
        assert (
            event["type"] == "webhook.test"
            and event["verified"] is True
            and event["id"] == delivery["eventId"]
        )

        d = invoke("webhooks", "deliveries", wid, "--json")
        assert d.code == 0 and [x["id"] for x in d.json()] == [delivery["id"]]
        assert d.json()[0]["attemptLog"][0]["statusCode"] == 204
        table = invoke("webhooks", "deliveries", wid)
        for text in (
            "TIME",
            "EVENT TYPE",
            "EVENT ID",
            "STATUS",
            "ATTEMPTS",
            "LAST CODE",
            "LAST ERROR",
            "webhook.test",
            delivery["eventId"],
            "succeeded",
            "204",
        ):
            assert text in table.out
        assert invoke("webhooks", "deliveries", wid, "--status", "failed", "--json").json() == []
        assert invoke("webhooks", "deliveries", wid, "--status", "nope").code == 2

        shown = invoke("events", "show", delivery["eventId"], "--json")
        assert shown.code == 0 and shown.json()["type"] == "webhook.test"

        # redeliver: the same webhook-id again
        again = invoke("events", "redeliver", delivery["eventId"], "--endpoint", wid, "--json")
        assert again.code == 0, again.err
        assert again.json()["eventId"] == delivery["eventId"] and len(again.json()["deliveries"]) == 1
        wait_for(lambda: len(lines) == 2)
        assert (
            json.loads(lines[-1])["id"] == delivery["eventId"] and json.loads(lines[-1])["verified"] is True
        )

        # rotate: the new secret printed once and stored, the old one kept beside it; deliveries still verify
        rot = invoke("webhooks", "rotate", wid)
        assert rot.code == 0, rot.err
        entry = json.loads(secrets_file().read_text())[profile_key][wid]
        assert entry["previousSecret"] == secret and entry["secret"] != secret
        assert (
            rot.out.count(entry["secret"]) == 1 and secret not in rot.out and entry["secret"] not in rot.err
        )
        receiver.secrets = ()
        assert invoke("webhooks", "test", wid, "--wait").code == 0
        wait_for(lambda: len(lines) == 3)
        assert json.loads(lines[-1])["verified"] is True

        gone = invoke("webhooks", "remove", wid, "--json")
        assert gone.code == 0 and gone.json() == {"id": wid, "deleted": True}
        assert json.loads(secrets_file().read_text()) == {}
        assert invoke("webhooks", "list", "--json").json() == []
        missing = invoke("webhooks", "remove", wid, "--json")
        assert missing.code == 1 and missing.err_json()["error"] == "webhook_not_found"
        assert invoke("events", "redeliver", "evt_nope", "--json").err_json()["error"] == "event_not_found"


def test_disable_then_enable_an_endpoint_and_redeliver_what_it_missed(private_ok: Path) -> None:
    """An endpoint disabled (by a 410 Gone answer, or here by `webhooks disable`) refuses redeliveries with an
    error that says how to re-enable it; `webhooks enable` does, and the redelivery then goes out."""
    from socialpub_tui.cli.webhooks import Receiver

    lines: list[str] = []
    receiver = Receiver(secrets=(), forward_to=None, as_json=True, write=lines.append)
    for url in serving(receiver):
        wid = invoke("webhooks", "add", url, "--json").json()["id"]
        t = invoke("webhooks", "test", wid, "--wait", "--json")
        assert t.code == 0, t.err + t.out
        event_id = t.json()["eventId"]

        off = invoke("webhooks", "disable", wid)
        assert off.code == 0, off.err
        assert f"Disabled {wid}" in off.out and f"socialpub webhooks enable {wid}" in off.out
        [listed] = invoke("webhooks", "list", "--json").json()
        assert listed["enabled"] is False and listed["disabledReason"] == "disabled by a user"
        assert "disabled" in invoke("webhooks", "list").out

        refused = invoke("events", "redeliver", event_id, "--json")
        assert refused.code == 1
        error = refused.err_json()
        assert (
            error["error"] == "no_webhook_endpoint" and f"socialpub webhooks enable {wid}" in error["message"]
        )
        one = invoke("events", "redeliver", event_id, "--endpoint", wid, "--json")
        assert one.code == 1 and one.err_json()["error"] == "webhook_disabled"

        on = invoke("webhooks", "enable", wid, "--json")
        assert on.code == 0, on.err
        assert on.json()["enabled"] is True and on.json()["disabledReason"] is None
        assert f"Enabled {wid}" in invoke("webhooks", "enable", wid).out  # enabling an enabled one: no change
        again = invoke("events", "redeliver", event_id, "--json")
        assert again.code == 0, again.err
        wait_for(lambda: len(lines) == 2)
        assert json.loads(lines[-1])["id"] == event_id
        assert invoke("webhooks", "enable", "we_nope", "--json").err_json()["error"] == "webhook_not_found"


def test_add_prints_the_secret_once_and_reports_api_errors(private_ok: Path) -> None:
    r = invoke("webhooks", "add", "http://127.0.0.1:9/hooks")
    assert r.code == 0, r.err
    secret = json.loads(secrets_file().read_text()).popitem()[1].popitem()[1]["secret"]
    assert r.out.count(secret) == 1 and secret not in r.err
    assert "shown once" in r.out and "webhook-secrets.json" in r.out
    bad = invoke("webhooks", "add", "ftp://example.com/x", "--json")
    assert bad.code == 1 and bad.err_json()["error"] == "invalid_webhook_url"
    unknown = invoke("webhooks", "add", "http://127.0.0.1:9/", "--events", "publish.nope", "--json")
    assert unknown.code == 1 and unknown.err_json()["error"] == "validation_error"
    human = invoke("webhooks", "add", "ftp://example.com/x")
    assert human.code == 1 and human.err.startswith("Error: ")


def wait_for(condition: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# ---- listen, receiving real deliveries from a real `socialpub serve` ----------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("serve")
    port = free_port()
    env = subprocess_env(
        SOCIALPUB_DATA_DIR=str(tmp / "data"),
        SOCIALPUB_BASE_URL=f"http://127.0.0.1:{port}",
        SOCIALPUB_SANDBOX_DELAY_S="0",
        SOCIALPUB_SANDBOX_PROCESSING_S="0",
        SOCIALPUB_WORKER_POLL_S="0.1",
        SOCIALPUB_LOG_LEVEL="WARNING",
        SOCIALPUB_ALLOW_PRIVATE_URLS="1",
    )
    init = subprocess.run(
        [EXE, "init", "--sandbox", "--json", "--email", "me@acme.test", "--password", "s3cret-pass"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert init.returncode == 0, init.stderr
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen(
        [EXE, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, (tmp / "serve.log").read_text()
            assert time.monotonic() < deadline, "socialpub serve did not start"
            time.sleep(0.2)
        yield {"url": url, "key": json.loads(init.stdout)["apiKey"], "log": str(tmp / "serve.log")}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_listen_receives_real_deliveries_from_serve(
    server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PIL import Image

    for name in list(os.environ):
        if name.startswith("SOCIALPUB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "cfg" / "config.yaml"))
    monkeypatch.setenv("SOCIALPUB_API_URL", server["url"])
    monkeypatch.setenv("SOCIALPUB_API_KEY", server["key"])
    port = free_port()
    with Listener(port, subprocess_env(SOCIALPUB_CONFIG=os.environ["SOCIALPUB_CONFIG"])) as listener:
        hint = f"socialpub webhooks add http://127.0.0.1:{port}/"
        assert hint in listener.stderr_text()
        r = invoke("webhooks", "add", f"http://127.0.0.1:{port}/", "--json")  # after listen started
        assert r.code == 0, r.err
        wid = r.json()["id"]

        photo = tmp_path / "photo.png"
        Image.new("RGB", (1600, 900), (10, 120, 200)).save(photo)
        post = invoke(
            "posts",
            "create",
            "Hooked",
            "--to",
            "facebook",
            "--to",
            "instagram",
            "--to",
            "linkedin",
            "--media",
            str(photo),
            "--json",
        )
        assert post.code == 0, post.err
        post_id = post.json()["id"]
        events = [listener.next_event(60) for _ in range(3)]
        assert all(e["verified"] and e["type"] == "publish.completed" for e in events), events
        assert {e["body"]["data"]["platform"] for e in events} == {"facebook", "instagram", "linkedin"}
        assert {e["body"]["data"]["postId"] for e in events} == {post_id}
        assert all(e["body"]["data"]["postUrl"] and e["id"] == e["body"]["id"] for e in events)
        assert len({e["id"] for e in events}) == 3

        t = invoke("webhooks", "test", wid, "--json")
        assert t.code == 0, t.err
        test_event = listener.next_event(30)
        assert test_event["type"] == "webhook.test" and test_event["verified"] is True
        assert test_event["id"] == t.json()["eventId"]

        log = invoke("webhooks", "deliveries", wid, "--json").json()
        assert sorted(d["eventType"] for d in log) == ["publish.completed"] * 3 + ["webhook.test"]
        assert all(d["status"] == "succeeded" and d["lastStatusCode"] == 204 for d in log)
    secret = r.json()["secret"]
    assert secret not in Path(server["log"]).read_text()


def remote_profile(server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("SOCIALPUB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "cfg" / "config.yaml"))
    monkeypatch.setenv("SRV_KEY", server["key"])
    assert (
        invoke("profile", "add", "srv", "--url", server["url"], "--api-key-env", "SRV_KEY", "--json").code
        == 0
    )


def test_remote_profile_stores_secrets_under_its_server(
    server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote_profile(server, tmp_path, monkeypatch)
    r = invoke("--profile", "srv", "webhooks", "add", "http://127.0.0.1:9/x", "--json")
    assert r.code == 0, r.err
    wid = r.json()["id"]
    assert json.loads(secrets_file().read_text()) == {
        server["url"]: {wid: {"url": "http://127.0.0.1:9/x", "secret": r.json()["secret"]}}
    }
    listed = invoke("--profile", "srv", "webhooks", "list", "--json")
    assert listed.code == 0 and wid in [w["id"] for w in listed.json()]
    assert invoke("--profile", "srv", "webhooks", "remove", wid).code == 0
    assert json.loads(secrets_file().read_text()) == {}


def test_a_read_only_key_lists_but_cannot_add(
    server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote_profile(server, tmp_path, monkeypatch)
    assert (
        invoke(
            "--profile", "srv", "login", "--email", "me@acme.test", "--password", "s3cret-pass", "--json"
        ).code
        == 0
    )
    key = invoke("--profile", "srv", "keys", "create", "--scope", "webhooks:read", "--json")
    assert key.code == 0, key.err
    monkeypatch.setenv("SRV_KEY", key.json()["key"])
    assert invoke("--profile", "srv", "logout", "--json").code == 0
    assert invoke("--profile", "srv", "webhooks", "list", "--json").code == 0
    denied = invoke("--profile", "srv", "webhooks", "add", "http://127.0.0.1:9/y", "--json")
    assert denied.code == 1 and denied.err_json()["status"] == 403, denied.err


# ---- the address rule: one fact of the data dir (issue 33) --------------------------------------------------


@pytest.fixture
def data_dir_rule(cli_env, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """An initialised embedded data dir whose own setting decides the address rule (no SOCIALPUB_ALLOW_PRIVATE_URLS),
    one attempt per delivery."""
    from backend.config import get_settings

    monkeypatch.delenv("SOCIALPUB_ALLOW_PRIVATE_URLS", raising=False)
    monkeypatch.setenv("SOCIALPUB_WEBHOOK_RETRY_SCHEDULE", "0")
    get_settings.cache_clear()
    r = invoke("init", "--sandbox", "--json", "--password", "s3cret-pass")
    assert r.code == 0, r.err
    return cli_env


def data_dir_env(**extra: str) -> dict[str, str]:
    """A `socialpub` subprocess on the test's data dir (and database), as the TUI's worker or another CLI command
    would be: no SOCIALPUB_ALLOW_PRIVATE_URLS unless given."""
    keep = ("SOCIALPUB_DATA_DIR", "SOCIALPUB_CONFIG", "SOCIALPUB_DATABASE_URL", "SOCIALPUB_SANDBOX_DELAY_S")
    keep += ("SOCIALPUB_SANDBOX_PROCESSING_S", "SOCIALPUB_WEBHOOK_RETRY_SCHEDULE", "SOCIALPUB_WORKER_POLL_S")
    return subprocess_env(**{k: os.environ[k] for k in keep if k in os.environ}, **extra)


def socialpub(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, *args], env=data_dir_env(**env), capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_private_urls_is_one_setting_of_the_data_dir_every_process_reads(data_dir_rule: Path) -> None:
    r = invoke("admin", "private-urls", "--json")
    assert r.code == 0 and r.json() == {"allowed": False, "source": "data_dir", "dataDirAllows": False}
    refused = invoke("webhooks", "add", "http://127.0.0.1:9/x")
    assert refused.code == 1 and "invalid_webhook_url" in refused.err
    assert "`socialpub admin private-urls on`" in refused.err, refused.err
    on = invoke("admin", "private-urls", "on")
    assert on.code == 0 and "private addresses allowed on this data dir" in on.out, on.out
    assert invoke("webhooks", "add", "http://127.0.0.1:9/x").code == 0
    # another process on the data dir reads the same fact; its own environment may override it, and says so
    other = socialpub("admin", "private-urls", "--json")
    assert other.returncode == 0 and json.loads(other.stdout)["allowed"] is True, other.stderr
    overridden = socialpub("admin", "private-urls", "--json", SOCIALPUB_ALLOW_PRIVATE_URLS="0")
    assert json.loads(overridden.stdout) == {"allowed": False, "source": "environment", "dataDirAllows": True}
    assert invoke("admin", "private-urls", "off").code == 0
    assert json.loads(socialpub("admin", "private-urls", "--json").stdout)["allowed"] is False


def test_listen_prints_what_registers_it_on_this_setup_and_registers_itself(data_dir_rule: Path) -> None:
    """Issue 33: `listen` said to run `webhooks add http://127.0.0.1:8765/`, which the data dir refused. It asks
    the backend first: refused, it prints the setting to change then the add command; --register registers it
    (once: a second run reuses the endpoint) and a test event arrives verified."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = data_dir_env()
    with Listener(port, env) as listener:
        said = listener.stderr_text()
    assert "does not deliver to" in said and "this data dir refuses loopback and private addresses" in said, (
        said
    )
    assert "socialpub admin private-urls on" in said
    assert said.index("socialpub admin private-urls on") < said.index(f"socialpub webhooks add {url}"), said
    refused = subprocess.run(
        [EXE, "webhooks", "listen", "--port", str(port), "--register"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert refused.returncode == 1 and "socialpub admin private-urls on" in refused.stderr, refused.stderr
    assert invoke("webhooks", "list", "--json").json() == []

    assert invoke("admin", "private-urls", "on").code == 0
    with Listener(port, env) as listener:
        said = listener.stderr_text()
    assert f"Register it once:  socialpub webhooks add {url}" in said and "private-urls" not in said, said
    with Listener(port, env, "--register") as listener:
        assert "Registered we_" in listener.stderr_text(), listener.stderr_text()
        [endpoint] = invoke("webhooks", "list", "--json").json()
        assert endpoint["url"] == url
        t = invoke("webhooks", "test", endpoint["id"], "--json")
        assert t.code == 0, t.err
        event = listener.next_event(30)
        assert event["type"] == "webhook.test" and event["verified"] is True, event
    with Listener(port, env, "--register") as listener:
        assert f"{endpoint['id']} → {url} already was; reused" in listener.stderr_text()
    assert [w["id"] for w in invoke("webhooks", "list", "--json").json()] == [endpoint["id"]]


def test_a_refused_delivery_names_the_setting_and_worker_lines_stay_out_of_the_output(
    data_dir_rule: Path,
) -> None:
    """Issue 33: a refused delivery marked the endpoint failing without saying why, and the embedded worker's log
    lines landed in the middle of CLI output. Now they go to <data dir>/socialpub.log; `webhooks deliveries`
    says which setting refused a delivery and what to run."""
    assert invoke("admin", "private-urls", "on").code == 0
    closed = invoke("webhooks", "add", f"http://127.0.0.1:{free_port()}/", "--json").json()[
        "id"
    ]  # nobody there
    r = socialpub("posts", "create", "One", "--to", "facebook", "--wait")
    assert r.returncode == 0, r.stderr
    assert "webhook delivery" not in r.stderr + r.stdout, r.stderr  # the worker's WARNING: not in the output…
    log = data_dir_rule / "d" / "socialpub.log"
    assert "webhook delivery" in log.read_text() and "failed after 1 attempt" in log.read_text()  # …but here
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    assert invoke("webhooks", "remove", closed).code == 0

    ep = invoke("webhooks", "add", f"http://127.0.0.1:{free_port()}/", "--json").json()["id"]
    assert invoke("admin", "private-urls", "off").code == 0
    assert socialpub("posts", "create", "Two", "--to", "facebook", "--wait").returncode == 0
    shown = invoke("webhooks", "deliveries", ep)
    assert shown.code == 0 and "refused by the private-urls setting" in shown.out, shown.out
    assert "socialpub admin private-urls on" in shown.err and "socialpub events redeliver evt_" in shown.err
    [d] = invoke("webhooks", "deliveries", ep, "--json").json()
    assert d["refusedBy"] == "private-urls" and d["status"] == "failed"
    [w] = invoke("webhooks", "list", "--json").json()
    assert w["failing"] is False  # the endpoint is not blamed for the data dir's rule


def test_ctrl_c_stops_a_listener_whose_parent_ignores_it(data_dir_rule: Path) -> None:
    """A process started with SIGINT ignored (a script's background job, a test runner's worker) inherits that, and
    Python then raises no KeyboardInterrupt: `listen` used to go on serving after Ctrl+C. It handles SIGINT itself."""
    err = data_dir_rule / "listen.err"
    with err.open("w") as sink:
        proc = subprocess.Popen(
            [EXE, "webhooks", "listen", "--port", str(free_port()), "--json"],
            env=data_dir_env(),
            stdout=subprocess.DEVNULL,
            stderr=sink,
            cwd=ROOT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # noqa: PLW1509 (the test's point)
        )
        try:
            deadline = time.monotonic() + 20
            while "Ready:" not in err.read_text():
                assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "Stopped." in err.read_text()
