"""`socialpub accounts connect mastodon --instance HOST` through the real CLI (embedded backend), the emulator served
on loopback by `socialpub sandbox serve mastodon`: the app registered on that instance, the browser step scripted,
PKCE sent where the instance advertises it (4.3+) and not before; a post published to the account."""

from __future__ import annotations

import pytest

from tests.cli.conftest import invoke
from tests.cli.test_accounts_connect import Browser, Served


@pytest.fixture
def instance(cli_env, monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    from backend.config import get_settings

    monkeypatch.setenv("SOCIALPUB_ALLOW_PRIVATE_URLS", "1")  # the instance is this machine's served emulator
    get_settings.cache_clear()
    served = Served("mastodon", tmp_path)
    yield served
    served.stop()


@pytest.fixture
def browser(monkeypatch):  # type: ignore[no-untyped-def]
    def make(**kw) -> Browser:  # type: ignore[no-untyped-def]
        b = Browser(**kw)
        monkeypatch.setattr("webbrowser.open", b.open)
        return b

    return make


@pytest.mark.parametrize("version", ["4.4.0", "4.2.0"])
def test_connect_on_an_instance_then_post(instance, browser, version) -> None:  # type: ignore[no-untyped-def]
    assert invoke("init", "--json", "--password", "s3cret-pass").code == 0
    with instance.http() as c:
        assert c.post("/_sandbox/instance", json={"version": version}).status_code == 200
    host = f"127.0.0.1:{instance.port}"
    b = browser(user="Alice")
    r = invoke("accounts", "connect", "mastodon", "--instance", host, "--json", "--timeout", "60")
    assert not b.errors, b.errors
    assert r.code == 0, r.err + r.out
    [acc] = r.json()["items"]
    assert acc["platform"] == "mastodon" and acc["kind"] == "live"
    assert ("code_challenge=" in b.opened[0]) == (version >= "4.3")  # PKCE only where advertised
    assert ("profile" in b.opened[0]) == (version >= "4.3")  # else read:accounts
    check = invoke("accounts", "check", acc["id"], "--json")
    assert check.code == 0 and check.json()["status"] == "ok", check.out + check.err
    post = invoke(
        "posts",
        "create",
        "Hello from the terminal",
        "--to",
        f"mastodon:{acc['id']}",
        "--option",
        "mastodon.visibility=unlisted",
        "--wait",
        "--timeout",
        "60",
        "--json",
    )
    assert post.code == 0, post.err + post.out
    [target] = post.json()["targets"]
    assert target["status"] == "succeeded" and target["postUrl"].startswith(f"https://{host}/@"), target


def test_an_instance_is_required_and_a_bad_one_refused(instance) -> None:  # type: ignore[no-untyped-def]
    assert invoke("init", "--json", "--password", "s3cret-pass").code == 0
    r = invoke("accounts", "connect", "mastodon", "--json", "--timeout", "5")
    assert r.code != 0 and "instance_required" in r.err + r.out
    r = invoke(
        "accounts", "connect", "mastodon", "--instance", "https://x.example/path", "--json", "--timeout", "5"
    )
    assert r.code != 0 and "invalid_instance" in r.err + r.out
