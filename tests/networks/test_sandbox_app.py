from datetime import date

import pytest

from backend.networks.sandbox.developer_app import NEW_APP, EmulatedApp, parse_apps


def test_the_default_app_is_a_new_one() -> None:
    assert NEW_APP == EmulatedApp() and not NEW_APP.audited and not NEW_APP.verified and not NEW_APP.products


def test_parse_apps_from_the_setting() -> None:
    apps = dict(
        parse_apps(
            '{"tiktok": {"audited": true, "kind": "desktop"}, "linkedin": {"products": ["share", "community"]},'
            ' "youtube": {"today": "2027-01-20"}}'
        )
    )
    assert apps["tiktok"].audited and apps["tiktok"].kind == "desktop"
    assert apps["linkedin"].holds("community") and not apps["linkedin"].holds("ads")
    assert apps["youtube"].today == date(2027, 1, 20)
    assert parse_apps(None) == () and parse_apps("") == ()


@pytest.mark.parametrize(
    "raw", ['["tiktok"]', '{"tiktok": {"audit": true}}', '{"linkedin": {"products": "share"}}']
)
def test_a_mistyped_setting_is_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_apps(raw)


def test_the_setting_reaches_the_sandbox_config(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from backend.config import Settings
    from backend.services.adapters import sandbox_config

    settings = Settings(data_dir=tmp_path, database_url=None, sandbox_apps={"tiktok": {"audited": True}})
    config = sandbox_config(settings)
    assert config.app("tiktok").audited
    assert config.app("linkedin") == NEW_APP  # a network not named is a new app
    with pytest.raises(ValueError):
        sandbox_config(Settings(data_dir=tmp_path, database_url=None, sandbox_apps={"tiktok": {"x": 1}}))


def test_sandbox_serve_takes_the_app_from_its_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import os
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = os.environ | {"SOCIALPUB_SANDBOX_APPS": '{"tiktok": {"products": ["login"]}}'}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from socialpub_tui.cli.main import main; main()",
            "sandbox",
            "serve",
            "tiktok",
        ]
        + [
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path / "emu"),
            "--json",
            "--audited",
            "--app-kind",
            "desktop",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        app = json.loads(line)["app"]
        deadline = time.monotonic() + 30
        while True:  # serving (a signal before uvicorn's handlers are in place would be ignored)
            try:
                httpx.get(f"http://127.0.0.1:{port}/_sandbox/oauth", timeout=2, trust_env=False)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(15)
    # the options win; what they do not say comes from SOCIALPUB_SANDBOX_APPS
    assert app == {"products": ["login"], "audited": True, "verified": False, "kind": "desktop"}
