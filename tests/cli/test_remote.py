"""The CLI against a real `socialpub serve` subprocess on loopback (the remote transport)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import invoke

EXE = str(Path(sys.executable).with_name("socialpub"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("remote")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOCIALPUB_")}
    env.update(
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
    )
    assert init.returncode == 0, init.stderr
    created = json.loads(init.stdout)
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen(
        [EXE, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
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
        yield {"url": url, "key": created["apiKey"], "tmp": str(tmp)}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture
def remote(server: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in list(os.environ):
        if name.startswith("SOCIALPUB_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SOCIALPUB_CONFIG", str(tmp_path / "cfg" / "config.yaml"))
    monkeypatch.setenv("SOCIALPUB_DATA_DIR", str(tmp_path / "no-data-here"))  # must not be used
    return server


def test_env_selected_remote_posts_lifecycle(remote: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCIALPUB_API_URL", remote["url"])
    monkeypatch.setenv("SOCIALPUB_API_KEY", remote["key"])
    r = invoke("workspace", "show", "--json")
    assert r.code == 0, r.err
    ws = r.json()
    r = invoke(
        "posts", "create", "Remote hello", "--to", "facebook", "--to", "linkedin", "--at", "+2d", "--json"
    )
    assert r.code == 0, r.err
    post = r.json()
    assert post["status"] == "scheduled"
    r = invoke("posts", "list", "--status", "scheduled", "--json")
    assert post["id"] in [p["id"] for p in r.json()]
    r = invoke("posts", "edit", post["id"], "--text", "Edited remotely", "--json")
    assert r.code == 0 and r.json()["content"] == "Edited remotely"
    assert invoke("posts", "cancel", post["id"], "--json").code == 0
    r = invoke("posts", "cancel", post["id"], "--json")
    assert r.code == 1 and r.err_json()["error"] == "post_not_cancellable"
    assert not (Path(os.environ["SOCIALPUB_DATA_DIR"])).exists()  # nothing embedded was started
    assert ws["id"]


def test_keys_need_login_on_a_server(remote: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    r = invoke(
        "profile", "add", "srv", "--url", remote["url"], "--api-key-env", "SRV_KEY", "--default", "--json"
    )
    assert r.code == 0, r.err
    monkeypatch.setenv("SRV_KEY", remote["key"])
    r = invoke("keys", "list", "--json")
    assert r.code == 1 and r.err_json()["error"] == "session_required"
    r = invoke("login", "--email", "me@acme.test", "--password", "wrong-pass", "--json")
    assert r.code == 1 and r.err_json()["error"] == "invalid_credentials"
    r = invoke("login", "--email", "me@acme.test", "--password", "s3cret-pass", "--json")
    assert r.code == 0, r.err
    session_file = Path(r.json()["sessionFile"])
    assert oct(session_file.stat().st_mode & 0o777) == "0o600"
    r = invoke("keys", "create", "--name", "from-cli", "--json")
    assert r.code == 0, r.err
    full = r.json()["key"]
    listed = invoke("keys", "list")
    assert "from-cli" in listed.out and full not in listed.out
    assert remote["key"] not in invoke("profile", "show").out  # the key is never printed by the CLI
    assert invoke("logout", "--json").json()["forgotten"] is True
    assert invoke("keys", "list", "--json").code == 1


def test_wrong_key_and_unreachable_server(remote: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOCIALPUB_API_URL", remote["url"])
    monkeypatch.setenv("SOCIALPUB_API_KEY", "spk_live_v1-not-a-real-key")
    r = invoke("workspace", "show", "--json")
    assert r.code == 1 and r.err_json()["error"] == "invalid_api_key"
    monkeypatch.setenv("SOCIALPUB_API_URL", f"http://127.0.0.1:{free_port()}")
    r = invoke("workspace", "show", "--json")
    assert r.code == 1 and r.err_json()["error"] == "network_error"


def test_upload_and_publish_with_wait(
    remote: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("backend.networks.instagram.emulator")
    from PIL import Image

    monkeypatch.setenv("SOCIALPUB_API_URL", remote["url"])
    monkeypatch.setenv("SOCIALPUB_API_KEY", remote["key"])
    photo = tmp_path / "photo.png"
    Image.new("RGB", (1600, 900), (10, 120, 200)).save(photo)
    r = invoke(
        "posts",
        "create",
        "A photo",
        "--to",
        "instagram",
        "--to",
        "facebook",
        "--media",
        str(photo),
        "--wait",
        "--timeout",
        "60",
        "--json",
    )
    assert r.code == 0, r.err
    post = r.json()
    assert post["status"] == "completed" and post["mediaUrls"][0].startswith(remote["url"])
    r = invoke("media", "list", "--json")
    assert r.code == 0 and any(m["url"] == post["mediaUrls"][0] and m["width"] == 1080 for m in r.json())


def test_accounts_check_and_connect_on_a_server(
    remote: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = invoke(
        "profile", "add", "srv", "--url", remote["url"], "--api-key-env", "SRV_KEY", "--default", "--json"
    )
    assert r.code == 0, r.err
    monkeypatch.setenv("SRV_KEY", remote["key"])
    assert invoke("login", "--email", "me@acme.test", "--password", "s3cret-pass", "--json").code == 0
    r = invoke("accounts", "check", "--json")
    assert r.code == 0, r.err
    items = r.json()["items"]
    assert (
        len(items) >= 5
        and {i["status"] for i in items} == {"ok"}
        and {i["kind"] for i in items} == {"sandbox"}
    )
    # the server has no OAuth app configured: it says which settings to set
    r = invoke("accounts", "connect", "tiktok", "--no-browser", "--json", "--timeout", "5")
    assert r.code == 1 and r.err_json()["error"] == "oauth_not_configured"
