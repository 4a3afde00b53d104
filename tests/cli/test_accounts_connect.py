"""`socialpub accounts connect` / `accounts check` through the real CLI (embedded backend), each network's
emulator served over HTTP by `socialpub sandbox serve` (a subprocess on loopback) and reached through
SOCIALPUB_<NETWORK>_BASE_URL: the browser step is scripted (webbrowser.open follows the authorize URL to the CLI's
loopback listener). Then a post published to a live account connected this way, through that emulator."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from click.testing import CliRunner

from socialpub_tui.cli.main import cli
from tests.cli.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
SUFFIX = {
    "tiktok": "",
    "facebook": "",
    "instagram": "",
    "linkedin": "/rest",
    "youtube": "/youtube/v3",
    "threads": "",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    def __init__(self, platform: str, tmp: Path, *options: str) -> None:
        self.platform = platform
        self.port = _free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SOCIALPUB_DATA_DIR": str(tmp / f"emu-product-{platform}"),
            "SOCIALPUB_SANDBOX_DELAY_S": "0",
            "SOCIALPUB_SANDBOX_PROCESSING_S": "0",
        }
        env.pop("SOCIALPUB_DATABASE_URL", None)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from socialpub_tui.cli.main import main; main()",
                "sandbox",
                "serve",
                platform,
                "--port",
                str(self.port),
                "--data-dir",
                str(tmp / f"emu-{platform}"),
                *options,  # the emulated app's (--product P, --audited, …)
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=self.origin, trust_env=False, timeout=5) as c:
            while True:
                try:
                    c.get("/_sandbox/oauth")
                    return
                except httpx.TransportError:
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(self.proc.communicate()[1]) from None
                    time.sleep(0.2)

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.origin, trust_env=False, timeout=10)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def serve(cli_env, monkeypatch) -> Iterator:  # type: ignore[no-untyped-def]
    """serve(platform): that network's emulator as a standalone server, socialpub pointed at it, its app set."""
    from backend.config import get_settings

    started: list[Served] = []

    def run(platform: str, *options: str) -> Served:
        s = Served(platform, cli_env, *options)
        started.append(s)
        p = platform.upper()
        monkeypatch.setenv(f"SOCIALPUB_{p}_BASE_URL", s.origin + SUFFIX[platform])
        monkeypatch.setenv(f"SOCIALPUB_{p}_CLIENT_ID", f"app-{platform}")
        monkeypatch.setenv(f"SOCIALPUB_{p}_CLIENT_SECRET", "s3cret-app")
        get_settings.cache_clear()
        return s

    yield run
    for s in started:
        s.stop()


@pytest.fixture
def initialised(cli_env):  # type: ignore[no-untyped-def]
    r = invoke("init", "--json", "--password", "s3cret-pass")
    assert r.code == 0, r.err
    return r.json()


class Browser:
    """webbrowser.open, scripted: the user consents (as `user`, with `pages` pages) and the redirect reaches the
    CLI's listener. tamper: a forged redirect (another state) reaches the listener first."""

    def __init__(self, user: str = "Brand", pages: int = 1, tamper: bool = False) -> None:
        self.user, self.pages, self.tamper = user, pages, tamper
        self.opened: list[str] = []
        self.errors: list[BaseException] = []
        self.landed: list[int] = []  # the listener's answers
        self.shown: list[str] = []  # the pages it answered with
        self.finished = threading.Event()  # the scripted browser is done

    def open(self, url: str, *args, **kwargs) -> bool:  # type: ignore[no-untyped-def]
        self.opened.append(url)

        def go() -> None:
            try:
                with httpx.Client(trust_env=False, timeout=10) as c:
                    r = c.get(url + f"&sandbox_user={quote(self.user)}&sandbox_pages={self.pages}")
                    assert r.status_code == 302, r.text
                    location = r.headers["location"].split("#")[0]
                    assert location.startswith("http://127.0.0.1:")
                    if self.tamper:
                        self.landed.append(c.get(location.replace("state=", "state=forged")).status_code)
                    landed = c.get(location)
                    self.landed.append(landed.status_code)
                    self.shown.append(landed.text)
            except BaseException as exc:  # noqa: BLE001 (reported by the test)
                self.errors.append(exc)
            finally:
                self.finished.set()

        threading.Thread(target=go, daemon=True).start()
        return True


@pytest.fixture
def browser(monkeypatch):  # type: ignore[no-untyped-def]
    def make(**kw) -> Browser:  # type: ignore[no-untyped-def]
        b = Browser(**kw)
        monkeypatch.setattr("webbrowser.open", b.open)
        return b

    return make


def _tokens_absent(text: str) -> None:
    from backend.store.models import Account

    for acc in Account.select():
        assert acc.access_token not in text
        if acc.refresh_token:
            assert acc.refresh_token not in text


@pytest.mark.parametrize("platform", ["facebook", "instagram", "linkedin", "tiktok", "youtube"])
def test_connect_through_the_cli_and_a_served_emulator(initialised, serve, browser, platform):
    serve(platform)
    b = browser(user=f"Brand {platform}")
    r = invoke("accounts", "connect", platform, "--name", f"Our {platform}", "--json", "--timeout", "60")
    assert not b.errors, b.errors
    assert r.code == 0, r.err + r.out
    [acc] = r.json()["items"]
    assert acc["kind"] == "live" and acc["platform"] == platform and acc["name"] == f"Our {platform}"
    assert b.opened and "127.0.0.1" in b.opened[0]
    # PKCE, except for LinkedIn's web flow, which refuses it (tests/networks/linkedin)
    assert ("code_challenge=" in b.opened[0]) == (platform != "linkedin")
    _tokens_absent(r.out + r.err)
    listed = invoke("accounts", "list", "--json").json()["items"]
    assert [a["id"] for a in listed] == [acc["id"]]
    check = invoke("accounts", "check", acc["id"], "--json")
    assert check.code == 0, check.err
    assert check.json()["status"] in ("ok", "expiring")


def test_pages_picked_then_a_post_published_to_a_live_account(initialised, serve, browser):
    served = serve("facebook")
    browser(user="Acme", pages=3)
    r = invoke("accounts", "connect", "facebook", "--json", "--timeout", "60")
    assert r.code == 2 and "--pick" in r.err  # several pages, no terminal: the choice is the script's
    browser(user="Acme", pages=3)
    human = invoke("accounts", "connect", "facebook", "--all", "--timeout", "60")
    assert human.code == 0, human.err
    assert human.out.count("Connected live facebook account") == 3
    accounts = invoke("accounts", "list", "--json").json()["items"]
    assert sorted(a["name"] for a in accounts) == ["Acme 1", "Acme 2", "Acme 3"]
    page = next(a for a in accounts if a["name"] == "Acme 2")
    post = invoke(
        "posts",
        "create",
        "Hello from a live account",
        "--to",
        f"facebook:{page['id']}",
        "--wait",
        "--timeout",
        "60",
        "--json",
    )
    assert post.code == 0, post.err + post.out
    [target] = post.json()["targets"]
    assert target["status"] == "succeeded" and target["postUrl"], target
    # the served emulator holds it, on that page
    from backend.store.models import Account

    token = Account.get_by_id(page["id"]).access_token
    external = Account.get_by_id(page["id"]).external_id
    with served.http() as c:
        listed = c.get(f"/v26.0/{external}/published_posts", params={"access_token": token}).json()["data"]
    assert [p["message"] for p in listed] == ["Hello from a live account"]


def test_a_new_google_project_connects_a_channel_and_its_video_is_posted_private_with_a_warning(
    initialised, serve, browser, tmp_path
):
    """Issue 29, YouTube's "done when": `sandbox serve youtube` serves a new (unaudited) project; a channel connected
    through the CLI publishes a video from the loopback media host; YouTube locks it private, the target succeeds
    and says so; the served emulator holds one private video."""
    from tests.media import corpus

    served = serve("youtube")
    browser()
    assert invoke("accounts", "connect", "youtube", "--json", "--timeout", "60").code == 0
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(corpus.video("mp4"))
    r = invoke("posts", "create", "Launch\nday", "--to", "youtube", "--media", str(clip), "--wait", "--json")
    assert r.code == 0, r.err + r.out
    [target] = r.json()["targets"]
    assert target["status"] == "succeeded" and target["postUrl"].startswith("https://youtu.be/")
    assert [w["code"] for w in target["warnings"]] == ["youtube_private_lock"]
    from backend.store.models import Account

    token = Account.get_by_id(target["accountId"]).access_token
    with served.http() as c:
        got = c.get(
            "/youtube/v3/videos",
            params={"part": "status", "id": target["externalPostId"]},
            headers={"Authorization": f"Bearer {token}"},
        ).json()["items"]
    assert [v["status"]["privacyStatus"] for v in got] == ["private"]


def test_linkedin_organisations_are_named_by_linkedin(initialised, serve, browser, monkeypatch):  # type: ignore[no-untyped-def]
    # organisation posting configured, by an app approved for the Community Management API
    serve("linkedin", "--product", "openid", "--product", "share", "--product", "community")
    monkeypatch.setenv("SOCIALPUB_LINKEDIN_ORGANIZATIONS", "1")
    browser(user="Jo", pages=3)
    r = invoke("accounts", "connect", "linkedin", "--all", "--json", "--timeout", "60")
    assert r.code == 0, r.err + r.out
    # the member's name, and each organisation's localizedName (GET /rest/organizations?ids=List(…))
    assert sorted(a["name"] for a in r.json()["items"]) == ["Jo", "Jo Org 1", "Jo Org 2"]


def test_a_new_linkedin_app_connects_and_posts_a_video(initialised, serve, browser, cli_env):  # type: ignore[no-untyped-def]
    """Issue 29's "done when", for LinkedIn: the served emulator in its default (new-app) configuration, a new
    user connects the member and publishes a video from a data dir whose media URL is loopback: posted."""
    import sqlite3

    from tests.media import corpus

    served = serve("linkedin")
    browser(user="Jo")
    r = invoke("accounts", "connect", "linkedin", "--json", "--timeout", "60")
    assert r.code == 0, r.err + r.out
    clip = cli_env / "clip.mp4"
    clip.write_bytes(corpus.vertical_video(3))
    post = invoke(
        "posts", "create", "Our first clip (LinkedIn) #launch", "--to", "linkedin", "--media", str(clip),
        "--wait", "--timeout", "90", "--json",
    )  # fmt: skip
    assert post.code == 0, post.err + post.out
    [target] = post.json()["targets"]
    assert target["status"] == "succeeded" and target["postUrl"].startswith(
        "https://www.linkedin.com/feed/"
    ), target
    served.stop()
    with sqlite3.connect(cli_env / "emu-linkedin" / "sandbox.db") as db:
        rows = db.execute(
            "SELECT mode, text FROM emulator_item WHERE platform = 'linkedin' AND kind = 'post'"
        ).fetchall()
    assert rows == [("video", r"Our first clip \(LinkedIn\) \#launch")]  # one post, its video, escaped


def test_linkedin_organisations_on_a_new_app_are_refused_at_consent(initialised, serve, browser, monkeypatch):  # type: ignore[no-untyped-def]
    """Issue 29: the served emulator's default app is a new one (self-serve products only): asking the
    organisation scopes is refused at consent, and the terminal says which scope, in LinkedIn's words."""
    serve("linkedin")
    monkeypatch.setenv("SOCIALPUB_LINKEDIN_ORGANIZATIONS", "1")
    browser(user="Jo", pages=2)
    r = invoke("accounts", "connect", "linkedin", "--timeout", "60")
    assert r.code == 1
    assert (
        'did not authorise socialpub (unauthorized_scope_error): Scope "w_organization_social" is not '
        in r.err
    )
    assert invoke("accounts", "list", "--json").json()["items"] == []


def test_pick_connects_only_the_named_account(initialised, serve, browser):
    serve("linkedin")
    browser(user="Jo", pages=2)
    r = invoke(
        "accounts", "connect", "linkedin", "--pick", "urn:li:organization:0", "--json", "--timeout", "60"
    )
    assert r.code == 2 and "not reached by this grant" in r.err
    from backend.store.models import OAuthSession

    assert OAuthSession.select().where(OAuthSession.status == "connected").count() == 0


def test_a_forged_state_is_refused_and_the_real_redirect_still_connects(initialised, serve, browser):
    """A stray or forged callback (another state) is answered 400 and does not take the real redirect's place."""
    serve("youtube")
    b = browser(tamper=True)
    r = invoke("accounts", "connect", "youtube", "--json", "--timeout", "60")
    assert r.code == 0, r.err
    assert b.landed == [400, 200]
    assert [a["platform"] for a in invoke("accounts", "list", "--json").json()["items"]] == ["youtube"]


def test_the_listener_answers_only_its_state() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from socialpub_tui.cli.accounts import _Callback

    listener = _Callback(0)
    try:
        early = httpx.get(
            listener.redirect_uri, params={"code": "c", "state": "s"}, timeout=5
        )  # before expect
        listener.expect("the-session-state")
        stray = httpx.get(
            listener.redirect_uri, params={"code": "attacker", "state": "not-the-session"}, timeout=5
        )
        with ThreadPoolExecutor(1) as pool:  # the real redirect's page waits for the command's outcome
            real = pool.submit(
                httpx.get,
                listener.redirect_uri,
                params={"code": "real-code", "state": "the-session-state"},
                timeout=5,
            )
            got = listener.wait(5)
            again = httpx.get(
                listener.redirect_uri, params={"code": "late", "state": "the-session-state"}, timeout=5
            )
            assert not real.done()
            listener.report(
                "socialpub: tiktok connected", "Connected: Brand (acc_1 <b>). You can close this tab."
            )
            page = real.result(5)
    finally:
        listener.close()
    assert (early.status_code, stray.status_code, page.status_code, again.status_code) == (400, 400, 200, 400)
    assert got == {"code": "real-code", "state": "the-session-state"}
    assert "<h1>socialpub: tiktok connected</h1>" in page.text and "acc_1 &lt;b&gt;" in page.text


def test_connecting_refused_after_consent_says_so_on_the_page_and_in_the_terminal(
    initialised, serve, browser
):
    """The user consented at the network, then connecting failed (the free plan's room, one page more picked): the
    browser's page says that connecting failed, with the API's code and message, not "authorised"; the command exits
    1 with that error."""
    serve("facebook")
    from backend.services.plans import SANDBOX_ROOM

    b = browser(user="Acme", pages=SANDBOX_ROOM + 1)
    r = invoke("accounts", "connect", "facebook", "--all", "--json", "--timeout", "60")
    assert b.finished.wait(10) and not b.errors, b.errors
    assert r.code == 1 and r.err_json()["error"] == "channel_limit_exceeded", r.err
    assert b.landed == [200]
    [page] = b.shown
    assert "connecting failed" in page and "authorised" not in page
    assert f"channel_limit_exceeded: the FREE plan allows {SANDBOX_ROOM} connected accounts" in page
    assert invoke("accounts", "list", "--json").json()["items"] == []


def test_a_connection_shows_the_accounts_connected_on_the_page(initialised, serve, browser):
    serve("linkedin")
    b = browser(user="Jo", pages=2)
    r = invoke("accounts", "connect", "linkedin", "--all", "--json", "--timeout", "60")
    assert r.code == 0, r.err
    assert b.finished.wait(10) and not b.errors, b.errors
    [page] = b.shown
    assert "socialpub: linkedin connected" in page
    assert all(f"{a['name']} ({a['id']})" in page for a in r.json()["items"])


def test_check_sees_a_revoked_grant(initialised, serve, browser):
    served = serve("tiktok")
    browser(user="Revoked")
    acc = invoke("accounts", "connect", "tiktok", "--json", "--timeout", "60").json()["items"][0]
    assert invoke("accounts", "check", "--json").json()["items"][0]["status"] == "ok"
    from backend.store.models import Account

    with served.http() as c:  # the user removes the app at the network
        r = c.post(
            "/v2/oauth/revoke/",
            data={
                "client_key": "app-tiktok",
                "client_secret": "x",
                "token": Account.get_by_id(acc["id"]).access_token,
            },
        )
        assert r.status_code == 200
    r = invoke("accounts", "check")
    assert r.code == 1 and "needs_reauth" in r.out and "reconnect" in r.out
    listed = invoke("accounts", "list")
    assert "needs_reauth" in listed.out


def test_access_token_path_through_the_cli(initialised, serve):
    from backend.networks import oauth

    served = serve("youtube")
    verifier, challenge = oauth.pkce_pair()
    with served.http() as c:  # a token got outside socialpub
        loc = c.get(
            "/o/oauth2/v2/auth",
            params={
                "client_id": "other-app",
                "redirect_uri": "http://127.0.0.1:1/cb",
                "response_type": "code",
                "scope": "https://www.googleapis.com/auth/youtube.upload https://www.googleapis.com/auth/youtube.readonly",
                "state": "s",
                "access_type": "offline",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            },
        ).headers["location"]
        code = httpx.URL(loc).params["code"]
        tok = c.post(
            "/token",
            data={
                "client_id": "other-app",
                "client_secret": "x",
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": "http://127.0.0.1:1/cb",
                "code_verifier": verifier,
            },
        ).json()
    r = invoke(
        "accounts",
        "connect",
        "youtube",
        "--access-token",
        tok["access_token"],
        "--refresh-token",
        tok["refresh_token"],
        "--expires-in",
        str(tok["expires_in"]),
        "--name",
        "Channel",
        "--json",
    )
    assert r.code == 0, r.err
    assert r.json()["kind"] == "live" and r.json()["name"] == "Channel"
    assert tok["access_token"] not in r.out and tok["refresh_token"] not in r.out
    # the same from stdin (out of `ps` and the shell's history): access token, then refresh token
    again = invoke(
        "accounts",
        "connect",
        "youtube",
        "--access-token",
        "-",
        "--expires-in",
        "3600",
        "--json",
        input=f"{tok['access_token']}\n{tok['refresh_token']}\n",
    )
    assert again.code == 0, again.err
    from backend.store.models import Account

    stored = Account.get_by_id(again.json()["id"])
    assert again.json()["id"] == r.json()["id"] and stored.refresh_token == tok["refresh_token"]
    assert invoke("accounts", "connect", "youtube", "--access-token", "-", input="").code == 2
    bad = invoke("accounts", "connect", "youtube", "--access-token", "ya29.nope", "--json")
    assert bad.code == 1 and bad.err_json()["error"] == "invalid_access_token"
    assert invoke("accounts", "connect", "youtube", "--refresh-token", "x").code == 2


def test_not_configured_says_what_to_set(initialised):
    r = invoke("accounts", "connect", "tiktok", "--no-browser", "--json", "--timeout", "5")
    assert r.code == 1 and r.err_json()["error"] == "oauth_not_configured"
    assert "SOCIALPUB_TIKTOK_CLIENT_ID" in r.err


def test_a_redirect_uri_of_the_users_own_then_the_address_pasted(initialised, serve, monkeypatch):  # type: ignore[no-untyped-def]
    """Threads takes HTTPS redirect URIs only (TH-R3), so the loopback listener cannot be registered: with
    --redirect-uri, no listener runs; the browser lands on the user's page and the user pastes that address (here on
    stdin). The address of another connection (another state) is refused; the doctor's redirect warning is left out."""
    serve("threads")
    registered = "https://example.com/socialpub/callback"
    landed: list[str] = []
    r_fd, w_fd = os.pipe()

    def consent(url: str, *args, **kwargs) -> bool:  # type: ignore[no-untyped-def]
        with httpx.Client(trust_env=False, timeout=10) as c:
            r = c.get(url + "&sandbox_user=Jo")
        assert r.status_code == 302, r.text
        landed.append(r.headers["location"])  # https://example.com/…?code=…&state=…#_ (never fetched)
        os.write(w_fd, (r.headers["location"] + "\n").encode())
        os.close(w_fd)
        return True

    monkeypatch.setattr("webbrowser.open", consent)
    with os.fdopen(r_fd, "rb") as pasted:
        result = CliRunner().invoke(
            cli,
            ["accounts", "connect", "threads", "--redirect-uri", registered, "--json"],
            input=pasted,
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    assert landed and landed[0].startswith(registered + "?")
    [acc] = json.loads(result.stdout)["items"]
    assert acc["platform"] == "threads" and acc["kind"] == "live"
    assert "threads_redirect_https_only" not in result.stderr
    # an address that answers another connection
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: True)
    other = invoke(
        "accounts",
        "connect",
        "threads",
        "--redirect-uri",
        registered,
        input=f"{registered}?code=x&state=forged\n",
    )
    assert other.code == 2 and "not the answer to this connection" in other.err
